// A pool of measurement worker processes (tuner/Worker.h): candidates compile and verify in
// parallel, one per worker at a time, and are then timed one at a time while the other workers
// wait, each paired call by call with a fixed reference kernel. Each step has a timeout. A worker
// that dies (a signal) or overruns is killed and restarted, the candidate it was on is recorded as
// "crash" or "timeout" with the reason, and candidates it held compiled are compiled again on a
// fresh worker: nothing that fails stops the batch.
//
// A pool outlives tuning tasks: set_task() switches every worker to another op or shape (a batch
// run keeps one pool for all its entries). Destroying the pool ends its workers.
#ifndef OPGEN_TUNER_WORKER_POOL_H
#define OPGEN_TUNER_WORKER_POOL_H

#include "codegen/HelperProcess.h"
#include "tuner/Runner.h"

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace opgen::tuner {

class WorkerPool : public Runner {
public:
    // Starts `jobs` workers (at least 1) of `exe` (default: worker_executable()). Raises
    // std::runtime_error when a worker cannot be started.
    explicit WorkerPool(int jobs, const std::string &exe = "");
    ~WorkerPool();
    WorkerPool(const WorkerPool &) = delete;
    WorkerPool &operator=(const WorkerPool &) = delete;

    int jobs() const;
    // Switches every worker to `task`. Raises UserError when a worker refuses it (bad op text).
    void set_task(const WorkerTask &task) override;

    // Measures `candidates`: rounds[r][i] is candidate i's result in round r. Each candidate is
    // compiled once; the rounds time all of them in turn (A B C A B C ...), so contenders are
    // compared in the same windows. `done` (may be empty) is called once per candidate, with its
    // first round's result, as soon as it is known. GFLOP/s are filled from `flops`.
    std::vector<std::vector<MeasureResult>> measure_rounds(
        const std::vector<PoolCandidate> &candidates, const PoolOptions &options, int rounds, double flops,
        const std::function<void(size_t, const MeasureResult &)> &done = {}) override;
    std::vector<MeasureResult> measure(const std::vector<PoolCandidate> &candidates, const PoolOptions &options,
                                       double flops,
                                       const std::function<void(size_t, const MeasureResult &)> &done = {});

    // The largest peak resident memory (KiB) any worker has reported, and how many workers were
    // restarted after a crash or timeout.
    int64_t worker_peak_rss_kb() const override;
    int restarts() const override;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace opgen::tuner

#endif
