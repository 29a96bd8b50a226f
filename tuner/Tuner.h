// tune: one tuning task from op and shape to a measured, verified winner.
//
// The loop (docs/design.md §2.6, with measurement as in §2.7): build the legal space; rank it by
// the target's default cost model (tuner/ModelStore.h), or by the roofline estimate when there is
// none; measure the hand-written heuristic point and the best few (plus a seeded share of random
// explorers); train an online XGBoost model on everything measured for this task and rank by a
// blend of the two models (tuner/ModelBlend.h); repeat until a budget is spent; then re-measure the
// leading contenders interleaved and name the winner by median. A candidate about to become the
// best is first timed again head to head with the best so far, so one lucky timing does not lead
// the search. Every measured candidate is recorded (features, time, status) when a cache is given,
// and the same seed with the same measurements gives the same winner.
#ifndef OPGEN_TUNER_TUNER_H
#define OPGEN_TUNER_TUNER_H

#include "codegen/KernelKeys.h"
#include "core/TilingSpace.h"
#include "costmodel/CostModel.h"
#include "store/KernelCache.h"
#include "tuner/Measurer.h"
#include "tuner/Progress.h"
#include "tuner/WorkerPool.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace opgen::tuner {

struct TuneOptions {
    int trials = 24;          // candidates measured
    int batch = 8;            // candidates per round between model updates
    int threads = 1;          // cores the kernels may use
    uint64_t seed = 1;
    double epsilon = 0.25;    // share of each round drawn at random from the space
    double min_time_ms = 60;  // timing budget per candidate
    int max_pool = 20000;     // spaces up to this size are scored whole; larger: evolutionary search
    std::function<void(const std::string &)> log;  // progress lines; may be empty
    bool trial_lines = true;  // one log line per measured trial (off under a live progress line)
    std::function<void(const TuneProgress &)> progress;  // after every trial; may be empty

    // Measurement in worker processes (tuner/WorkerPool.h).
    int jobs = 0;             // workers compiling in parallel; 0: the machine's cores
    double timeout_s = 60;    // per candidate step (compile and verify; timing)
    Runner *pool = nullptr;  // where candidates are measured (a batch keeps one WorkerPool); null:
                             // tune() starts a WorkerPool of its own
    // Stopping: the trial budget, a wall-time budget in seconds (0: none), or `patience` rounds in
    // a row without a 1% better candidate (0: never).
    double time_budget_s = 0;
    int patience = 0;
    int final_rounds = 3;     // interleaved re-measurement rounds of the final contenders
    int final_contenders = 3;
    // Cost models: start from the target's bundled default model when it loads (a file of another
    // feature set is skipped), and blend it with the online model by rank; the two weigh alike
    // once the task has `prior_half_weight` correct measurements.
    bool default_model = true;
    int prior_half_weight = 48;
    // A candidate that would become the best is first timed this many times more, interleaved with
    // the current best, and each counts at the median of its corrected timings (see tune()); 0: a
    // would-be best counts at its first timing.
    int confirm_rounds = 3;
    // Test-only: trial number (1-based) -> "crash", "hang" or "crash-timing" in the worker.
    std::map<int, std::string> faults;
    // Inputs flushed from the caches before every timed call, so they come from memory as a model's
    // weights do (tuner/ColdInputs.h); the winner is cached under cold_key. Empty: all hot.
    std::vector<std::string> cold_inputs;
    // Points measured in the first round beside the reference (tune_into_cache adds the hot winner
    // when tuning cold), so the run ends no worse than any of them; they count as trials.
    std::vector<SchedulePoint> seed_points;
    // The cache's tuning run the measurements belong to (KernelCache::begin_run; tune_into_cache
    // sets it); 0: none.
    int64_t run_id = 0;
    // Points the cache already measured for this key count at their recorded figure (a killed run
    // goes on where it stopped); false measures every point afresh (tune_into_cache's `force`: a
    // re-tune on a quieter machine, which old figures taken under load would otherwise steer).
    bool reuse_measurements = true;
};

struct Trial {
    SchedulePoint point;
    MeasureResult result;  // result.gflops is drift-corrected (see tune())
    std::vector<float> features;
    int feature_rows = 0;
    bool reused = false;   // taken from the cache's recorded measurements, not measured again
    int retimed = 0;       // extra timings to confirm it (as a would-be best or as the best); result holds the median
};

struct TuneResult {
    SchedulePoint best;
    MeasureResult best_result;
    MeasureResult default_result;
    std::string schedule_source;
    std::vector<Trial> trials;
    int64_t legal_size = 0;
    double flops = 0;
    bool found = false;  // at least one candidate was correct
    std::string search;       // "exhaustive" or "evolutionary"
    std::string stop_reason;  // "trial budget", "time budget", "no improvement", "space exhausted"
    int measured = 0;         // trials measured in this run (the rest were reused)
    int reused = 0;
    int failed = 0;           // trials whose status is not ok
    int worker_restarts = 0;
    int retimed = 0;          // would-be bests timed again to confirm them (not counted as trials)
    // The finalists' re-timing (tuner/QuietHold.h): whether it held the machine's hold lock, and
    // the cores' worth of CPU other processes used meanwhile (above kQuietLoadCores the tune warns
    // that the machine was not quiet).
    bool final_held = false;
    double final_other_load = 0;
    std::string prior_model;  // the default model file the run started from; empty: none
    double reference_ms = 0;  // the reference kernel's time all throughputs are scaled to
    double elapsed_s = 0;
    int64_t peak_rss_kb = 0;         // this process
    int64_t worker_peak_rss_kb = 0;  // the largest worker
};

// The key a tuning run with `options` stores its winner under: kernel_key at options.threads, and
// cold_key of it when the options time some inputs cold.
db::KernelKey tuned_key(const ComputeDef &def, const BoundShape &shape, const Target &target,
                        const TuneOptions &options);

// The reference kernel every timing is paired with: the hand-written starting point
// (heuristic_point) planned for `threads` cores where that is fewer than the target's, serial when
// the kernels get one core (`threads` <= 1).
SchedulePoint reference_point(const ComputeDef &def, const BoundShape &shape, const Target &target, int threads);

// Tunes `def` at `shape` on `target`. When `cache` is given every measurement is recorded under
// `key` as it happens, in one transaction per round, measurements already recorded under `key` (a
// run that was killed) are reused instead of measured again. The first round measures the
// reference, its packing twins (the reference with one packed input read in place, where the
// space offers that choice) and, with a cache, the loop choices of the cache's other winners at
// the key's shape and target (tuner/CarriedPoints.h). Raises std::runtime_error when the
// measurement workers cannot be started.
TuneResult tune(const ComputeDef &def, const BoundShape &shape, const Target &target, const TuneOptions &options,
                db::KernelCache *cache = nullptr, const db::KernelKey *key = nullptr);

// The cache row of a found winner (r.found must hold): schedule, printed source, times, trials.
db::KernelRecord winner_record(const db::KernelKey &key, const TuneResult &r);

// Tunes (def, shape) on `target` with `options.threads` into `cache` unless the cache already has its
// key (tuned_key; or `force`, which also measures every point afresh); a cold run also measures the key's hot winner when there is one;
// returns the stored row and sets *cached when it was already there. Raises
// UserError when the target cannot be measured here or no candidate is correct.
db::KernelRecord tune_into_cache(const ComputeDef &def, const BoundShape &shape, const Target &target,
                                 const TuneOptions &options, db::KernelCache &cache, bool force, bool *cached,
                                 TuneResult *result = nullptr);

}  // namespace opgen::tuner

#endif
