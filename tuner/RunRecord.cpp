#include "tuner/RunRecord.h"

namespace opgen::tuner {

nlohmann::json options_json(const TuneOptions &o) {
    return {{"trials", o.trials},
            {"batch", o.batch},
            {"threads", o.threads},
            {"seed", o.seed},
            {"epsilon", o.epsilon},
            {"min_time_ms", o.min_time_ms},
            {"max_pool", o.max_pool},
            {"jobs", o.jobs},
            {"timeout_s", o.timeout_s},
            {"time_budget_s", o.time_budget_s},
            {"patience", o.patience},
            {"final_rounds", o.final_rounds},
            {"final_contenders", o.final_contenders}};
}

db::TuningRun run_record(const ComputeDef &def, const Target &target, const db::KernelKey &key,
                         const TuneOptions &options) {
    db::TuningRun run;
    run.key = key;
    run.op_source = def.source;
    run.target_description = target.description;
    run.target_fingerprint = target.fingerprint();
    run.options_json = options_json(options).dump();
    return run;
}

}  // namespace opgen::tuner
