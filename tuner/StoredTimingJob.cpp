#include "tuner/StoredTimingJob.h"

namespace opgen::tuner {

namespace {

nlohmann::json pair_json(const StoredTimingPair &p) {
    return {{"generic_shape", p.generic_shape}, {"digest", p.digest}, {"at_shape", p.at_shape}};
}

StoredTimingPair pair_of(const nlohmann::json &j) {
    return {j.at("generic_shape").get<std::string>(), j.at("digest").get<std::string>(),
            j.at("at_shape").get<std::string>()};
}

}  // namespace

std::string key_family(const db::KernelKey &key) {
    return key.target + '\n' + key.op_name + '\n' + key.op_hash + '\n' + key.dtype + '\n' + key.halide_version +
           '\n' + key.tuner_version;
}

nlohmann::json to_json(const StoredTimingJob &job) {
    nlohmann::json pairs = nlohmann::json::array();
    for (const StoredTimingPair &p : job.pairs) pairs.push_back(pair_json(p));
    const db::KernelKey &f = job.family;
    nlohmann::json family = {{"target", f.target},   {"op_name", f.op_name},
                             {"op_hash", f.op_hash}, {"dtype", f.dtype},
                             {"halide_version", f.halide_version}, {"tuner_version", f.tuner_version}};
    return {{"db", job.db},
            {"family", family},
            {"min_ms", job.min_ms},
            {"min_runs", job.min_runs},
            {"pairs", pairs},
            {"results", job.results},
            {"trusted_keys", job.trusted_keys}};
}

StoredTimingJob stored_timing_job(const nlohmann::json &j) {
    StoredTimingJob job;
    job.db = j.at("db").get<std::string>();
    const nlohmann::json &f = j.at("family");
    for (auto [name, field] : {std::pair{"target", &db::KernelKey::target}, {"op_name", &db::KernelKey::op_name},
                               {"op_hash", &db::KernelKey::op_hash}, {"dtype", &db::KernelKey::dtype},
                               {"halide_version", &db::KernelKey::halide_version},
                               {"tuner_version", &db::KernelKey::tuner_version}}) {
        job.family.*field = f.at(name).get<std::string>();
    }
    job.min_ms = j.at("min_ms").get<double>();
    job.min_runs = j.at("min_runs").get<int>();
    for (const nlohmann::json &p : j.at("pairs")) job.pairs.push_back(pair_of(p));
    job.results = j.at("results").get<std::string>();
    job.trusted_keys = j.at("trusted_keys").get<std::vector<std::string>>();
    return job;
}

nlohmann::json to_json(const StoredTimingResult &r) {
    nlohmann::json j = pair_json(r.pair);
    if (!r.error.empty()) {
        j["error"] = r.error;
        return j;
    }
    j["time_ms"] = r.time_ms;
    j["tuned_ms"] = r.tuned_ms;
    j["ratio"] = r.ratio;
    return j;
}

StoredTimingResult stored_timing_result(const nlohmann::json &j) {
    StoredTimingResult r;
    r.pair = pair_of(j);
    if (j.contains("error")) {
        r.error = j.at("error").get<std::string>();
        return r;
    }
    r.time_ms = j.at("time_ms").get<double>();
    r.tuned_ms = j.at("tuned_ms").get<double>();
    r.ratio = j.at("ratio").get<double>();
    return r;
}

}  // namespace opgen::tuner
