// The job of the stored-code timer (`opgen-code-timer JOB`, tuner/StoredCodeTimer.h) and its
// results: which generic kernels of one key family of a cache to time against which tuned kernels,
// each from the code stored in the cache. Written by `opgen db compile --generic`
// (tuner/GenericTiming.cpp) and read by the timer; both sides compile this file, the timer without
// the Halide compiler.
#ifndef OPGEN_TUNER_STORED_TIMING_JOB_H
#define OPGEN_TUNER_STORED_TIMING_JOB_H

#include "store/KernelCache.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace opgen::tuner {

// One timing to take: the generic row of the family whose tuned shape is `generic_shape` and whose
// code has digest `digest`, bound to `at_shape` and timed against the tuned kernel at `at_shape`.
struct StoredTimingPair {
    std::string generic_shape;
    std::string digest;
    std::string at_shape;
};

// The cache file, the key family (`family`: every KernelKey field but the shape, which is left
// empty), the timing's budget (the generic kernel's calls add up to at least min_ms, and at least
// min_runs pairs of calls are taken) and the pairs; `results` is the file the timer writes
// (StoredTimingResult lines).
struct StoredTimingJob {
    std::string db;
    db::KernelKey family;
    double min_ms = 30;
    int min_runs = 5;
    std::vector<StoredTimingPair> pairs;
    std::string results;
    // Public keys ("ed25519:<hex>") whose code the timer runs besides those of its environment
    // (runtime/CodeTrust.h): the key the command signed the code with.
    std::vector<std::string> trusted_keys;
};

// One pair's outcome: times and the median of the per-step ratios, or `error` (the pair was not
// timed: code missing or refused, a call failed, the outputs differ).
struct StoredTimingResult {
    StoredTimingPair pair;
    double time_ms = 0, tuned_ms = 0, ratio = 0;
    std::string error;
};

// Every field of `key` but its shape, joined: a generic row and the tuned kernels it is timed
// against share it (a key family).
std::string key_family(const db::KernelKey &key);

nlohmann::json to_json(const StoredTimingJob &job);
StoredTimingJob stored_timing_job(const nlohmann::json &j);  // nlohmann::json::exception when malformed
nlohmann::json to_json(const StoredTimingResult &r);
StoredTimingResult stored_timing_result(const nlohmann::json &j);

}  // namespace opgen::tuner

#endif
