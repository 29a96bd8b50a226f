// Runner: where the tuner's candidates are measured (TVM meta_schedule's Runner). The tuning loop
// (tuner/Tuner.h) and the batch command see only this interface. Two implementations ship:
//   - WorkerPool (tuner/WorkerPool.h): isolated worker processes that compile, verify and time;
//   - ReplayRunner (tuner/Replay.h): answers from a recording of an earlier run, so that a change to
//     the loop can be shown to take the same steps on the same measurements.
// RecordingRunner (tuner/Replay.h) wraps any runner and writes what it answered.
#ifndef OPGEN_TUNER_RUNNER_H
#define OPGEN_TUNER_RUNNER_H

#include "tuner/Measurer.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace opgen::tuner {

// What every measurement needs to rebuild the task on its side.
struct WorkerTask {
    const ComputeDef *def = nullptr;
    BoundShape shape;
    Target target;
    uint64_t seed = 1;  // of the random inputs
    int threads = 1;    // HL_NUM_THREADS of the kernels
    // The fixed kernel every timing is paired with; none: candidates are timed alone.
    std::optional<SchedulePoint> reference;
    // Inputs flushed from the caches before every timed call (tuner/ColdInputs.h); empty: all hot.
    std::vector<std::string> cold_inputs;
};

struct PoolCandidate {
    std::optional<SchedulePoint> point;  // empty: Halide's default schedule
    std::string fault;                   // test-only: "crash", "hang" or "crash-timing"
};

struct PoolOptions {
    double min_time_ms = 60;   // timing: repeat until the candidate's calls add up to this
    int min_runs = 3;
    int max_runs = 1000;
    double timeout_s = 60;     // per step (compile and verify; timing) of one candidate
};

// Called once per candidate, with its first round's result, as soon as it is known.
using MeasuredCallback = std::function<void(size_t, const MeasureResult &)>;

class Runner {
public:
    virtual ~Runner() = default;
    // Switches to another op or shape. Raises UserError when the task is refused (bad op text).
    virtual void set_task(const WorkerTask &task) = 0;
    // Measures `candidates`: rounds[r][i] is candidate i's result in round r. The rounds time all
    // of them in turn (A B C A B C ...), so contenders are compared in the same windows. `done`
    // (may be empty) is called once per candidate with its first round's result. GFLOP/s are
    // filled from `flops`.
    virtual std::vector<std::vector<MeasureResult>> measure_rounds(const std::vector<PoolCandidate> &candidates,
                                                                   const PoolOptions &options, int rounds,
                                                                   double flops,
                                                                   const MeasuredCallback &done = {}) = 0;
    // One round.
    std::vector<MeasureResult> measure(const std::vector<PoolCandidate> &candidates, const PoolOptions &options,
                                       double flops, const MeasuredCallback &done = {}) {
        return measure_rounds(candidates, options, 1, flops, done).at(0);
    }
    // The largest peak resident memory (KiB) a measuring process has reported, and how many were
    // restarted after a crash or timeout; 0 where the runner has no such processes.
    virtual int64_t worker_peak_rss_kb() const { return 0; }
    virtual int restarts() const { return 0; }
};

}  // namespace opgen::tuner

#endif
