// The batch runner: tunes every task of a manifest into one kernel cache, one task at a time.
//
// Incremental and resumable: a task whose key (op definition hash, shape, dtype, target and
// threads, Halide and tuner versions) is already cached is skipped, and each winner is committed
// to the cache the moment its task ends, so a batch killed at any point (even by SIGKILL) loses at
// most the task it was running; running it again goes on from there. A task whose op, shape and
// target have a cached winner under an older key (changed op text, Halide or tuner version) is
// re-tuned and reported as stale, with what changed. A task that fails (no correct candidate, a
// target that cannot run here) is recorded with its reason and the batch goes on.
#ifndef OPGEN_TUNER_BATCH_H
#define OPGEN_TUNER_BATCH_H

#include "store/KernelCache.h"
#include "core/OpLibrary.h"
#include "core/Manifest.h"
#include "tuner/Tuner.h"
#include "tuner/WorkerPool.h"

#include <functional>
#include <string>
#include <vector>

namespace opgen::tuner {

enum class TaskStatus { Tuned, Cached, Failed };
const char *task_status_name(TaskStatus s);  // "tuned", "cached", "failed"

struct TaskOutcome {
    BatchTask task;
    TaskStatus status = TaskStatus::Failed;
    db::KernelRecord record;   // the cached winner (Tuned, Cached)
    std::string error;         // why it failed (Failed)
    std::string stale;         // for a re-tuned stale key: what changed, e.g. "tuner version 3 -> 4"
    double wall_s = 0;         // seconds spent on the task
};

// Where the batch stands, given to the progress callback before and after every task.
struct BatchProgress {
    size_t done = 0, total = 0;
    size_t tuned = 0, cached = 0, failed = 0;
    double elapsed_s = 0;
    double eta_s = -1;               // -1 until a task has been tuned
    const BatchTask *current = nullptr;  // the task about to run; nullptr after the last
};

// "batch 3/11 done (3 tuned, 0 cached, 0 failed), elapsed 1m20s, ETA 4m05s: matmul K=768,M=128,N=768"
// (the task about to run last, when there is one).
std::string format_batch_progress(const BatchProgress &p);

struct BatchOptions {
    // Trials and seed are taken from each task; threads, workers, budgets and the rest from here.
    // Give `tune.pool` so that every task reuses one set of measurement workers.
    TuneOptions tune;
    std::function<void(const BatchProgress &)> progress;  // may be empty
};

// Runs `tasks` into `cache` (see the file comment). Every task's target must use the same thread
// count (`options.tune.threads`); the Halide runtime reads it once per process.
std::vector<TaskOutcome> run_batch(const std::vector<BatchTask> &tasks, const OpLibrary &lib,
                                   db::KernelCache &cache, const BatchOptions &options);

// One cached winner measured again.
struct Remeasure {
    BatchTask task;
    double cached_ms = 0, cached_default_ms = 0;  // as stored when it was tuned
    double now_ms = 0, now_default_ms = 0;        // medians of this run; now_ms 0 when not ok
    double gflops_now = 0;
    std::string status;    // the measurement's status ("ok", "wrong_result", ...)
    bool regressed = false;  // now_ms > cached_ms * (1 + threshold), or not ok
};

// Measures again up to `sample` cached winners of `tasks` (a seeded choice, stable for a seed) in
// `pool`'s worker processes, three rounds interleaved with Halide's default schedule of the same
// task, so that a slower machine is not taken for a regression: a winner regressed when its time
// relative to the default grew by more than `threshold` (0.25 = 25%) over the ratio stored when it
// was tuned, or when it no longer compiles, runs or computes the right result. Tasks without a
// cached winner are not sampled.
std::vector<Remeasure> remeasure_sample(const std::vector<BatchTask> &tasks, const OpLibrary &lib,
                                        db::KernelCache &cache, Runner &pool, const PoolOptions &measure,
                                        int threads, size_t sample, uint64_t seed, double threshold);

}  // namespace opgen::tuner

#endif
