// One recorded tuning run as the replay test reads it (tests/tuner/replay/*.json, written by
// record_tuning): the task, the options every replay tunes with, the measurements, and what the
// recorded run did. Header-only: the recorder and the test share it.
#ifndef OPGEN_TESTS_TUNER_REPLAY_CASE_H
#define OPGEN_TESTS_TUNER_REPLAY_CASE_H

#include "tuner/Tuner.h"

#include <nlohmann/json.hpp>

#include <string>

namespace opgen::tuner {

struct ReplayCase {
    std::string op;
    std::string shape;
    uint64_t seed = 1;
    Target target;
};

// The options of the recorded runs: two rounds of model-guided search after the first, with
// confirmations and the final interleaved rounds, so every step of the loop is taken.
inline TuneOptions replay_options(const ReplayCase &c) {
    TuneOptions o;
    o.trials = 24;
    o.batch = 8;
    o.seed = c.seed;
    o.threads = 1;
    o.min_time_ms = 20;
    o.timeout_s = 60;
    return o;
}

inline nlohmann::json trial_json(const Trial &t) {
    return {{"point", t.point.to_json()}, {"status", t.result.status}, {"gflops", t.result.gflops},
            {"retimed", t.retimed}};
}

inline nlohmann::json write_replay_case(const ReplayCase &c, const nlohmann::json &recording, const TuneResult &r) {
    nlohmann::json trials = nlohmann::json::array();
    for (const Trial &t : r.trials) trials.push_back(trial_json(t));
    return {{"op", c.op},
            {"shape", c.shape},
            {"seed", c.seed},
            {"target", c.target.to_json()},
            {"recording", recording},
            {"expected",
             {{"trials", trials},
              {"winner", r.best.to_json()},
              {"winner_gflops", r.best_result.gflops},
              {"stop_reason", r.stop_reason},
              {"retimed", r.retimed}}}};
}

inline ReplayCase read_replay_case(const nlohmann::json &j) {
    ReplayCase c;
    c.op = j.at("op").get<std::string>();
    c.shape = j.at("shape").get<std::string>();
    c.seed = j.at("seed").get<uint64_t>();
    c.target = parse_target(j.at("target"), "replay case");
    return c;
}

}  // namespace opgen::tuner

#endif
