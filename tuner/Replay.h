// Recording and replaying a tuning run's measurements. RecordingRunner wraps a runner (normally
// the worker pool) and keeps every call it answered: the candidates asked for, the results of each
// round and the order in which the candidates were reported done. ReplayRunner answers the same
// calls from such a recording, in place of compiling and timing, so that a change to the tuning
// loop can be shown to take the same steps and name the same winner on the same measurements
// (tests/tuner/TuneReplayTest.cpp). A replay that is asked for anything else stops at once with the
// call where the run diverged.
#ifndef OPGEN_TUNER_REPLAY_H
#define OPGEN_TUNER_REPLAY_H

#include "tuner/Runner.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <vector>

namespace opgen::tuner {

class RecordingRunner : public Runner {
public:
    explicit RecordingRunner(Runner &inner) : inner_(inner) {}
    void set_task(const WorkerTask &task) override { inner_.set_task(task); }
    std::vector<std::vector<MeasureResult>> measure_rounds(const std::vector<PoolCandidate> &candidates,
                                                           const PoolOptions &options, int rounds, double flops,
                                                           const MeasuredCallback &done = {}) override;
    int64_t worker_peak_rss_kb() const override { return inner_.worker_peak_rss_kb(); }
    int restarts() const override { return inner_.restarts(); }
    // Every call so far, oldest first: {"calls": [{"candidates", "rounds", "done_order", "results"}]}.
    nlohmann::json recording() const { return {{"calls", calls_}}; }

private:
    Runner &inner_;
    nlohmann::json calls_ = nlohmann::json::array();
};

class ReplayRunner : public Runner {
public:
    // Raises UserError when `recording` has no "calls" array of recorded calls.
    explicit ReplayRunner(const nlohmann::json &recording);
    void set_task(const WorkerTask &) override {}
    // Answers the next recorded call. Raises std::runtime_error naming the call when the candidates
    // or the round count differ from the recording's, or when the recording is used up.
    std::vector<std::vector<MeasureResult>> measure_rounds(const std::vector<PoolCandidate> &candidates,
                                                           const PoolOptions &options, int rounds, double flops,
                                                           const MeasuredCallback &done = {}) override;
    size_t calls_left() const { return calls_.size() - next_; }

private:
    nlohmann::json calls_;
    size_t next_ = 0;
};

}  // namespace opgen::tuner

#endif
