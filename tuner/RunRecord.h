// The kernel cache's record of one tuning run (db::TuningRun, the `tuning_runs` table): the key,
// the op's source text and the target's description and fingerprint (which the cache keeps in
// `ops` and `targets`), and the tuner's options as JSON, so that a cache file says how each of its
// measurements was made.
#ifndef OPGEN_TUNER_RUN_RECORD_H
#define OPGEN_TUNER_RUN_RECORD_H

#include "store/KernelCache.h"
#include "core/ComputeDef.h"
#include "core/Target.h"
#include "tuner/Tuner.h"

#include <nlohmann/json.hpp>

namespace opgen::tuner {

// The options that decide what a run measures, as a JSON object (callbacks, the worker pool and
// test-only faults left out).
nlohmann::json options_json(const TuneOptions &options);

// The run record begin_run takes for tuning `def` under `key` on `target` with `options`.
db::TuningRun run_record(const ComputeDef &def, const Target &target, const db::KernelKey &key,
                         const TuneOptions &options);

}  // namespace opgen::tuner

#endif
