// Training data for the cost model: measuring a seeded random sample of a task's legal space into
// the kernel cache, and turning measured records back into a costmodel::TrainingSet.
//
// Each record keeps its point's schedule JSON, so features are recomputed from the point whenever
// the training set is built: a change of the features (or a new schedule knob, which
// SchedulePoint::from_json reads with a default) needs no re-measurement. Because the machine's
// clock wanders (TOOLCHAIN-NOTES: +-15-25% between windows), collection interleaves a fixed
// reference kernel (the task's heuristic point) every few candidates; building the set divides each
// candidate's time by the reference's drift at that moment.
#ifndef OPGEN_TUNER_MODEL_DATA_H
#define OPGEN_TUNER_MODEL_DATA_H

#include "costmodel/CostModel.h"
#include "store/KernelCache.h"
#include "core/OpLibrary.h"
#include "core/TilingSpace.h"

#include <functional>
#include <string>
#include <vector>

namespace opgen::tuner {

struct CollectOptions {
    size_t sample = 500;      // legal points drawn (all of them when the space is smaller)
    uint64_t seed = 1;
    int threads = 1;          // cores the kernels may use; part of the measurements' key
    double min_time_ms = 15;  // timing budget per candidate
    int reference_every = 20; // candidates between two measurements of the reference kernel
    std::function<void(const std::string &)> log;
};

struct CollectSummary {
    size_t sampled = 0;        // points in the sample
    size_t already = 0;        // of them, measured by an earlier run (resumed)
    size_t measured = 0;       // measured now
    size_t failed = 0;         // of them, compile/run failures or wrong results
    size_t reference_runs = 0; // measurements of the reference kernel
};

// Measures a `seed`ed sample of `sample` legal points of (def, shape) on `target` into `cache`,
// each verified against the reference as the tuner's Measurer does, under
// kernel_key(def, shape, target, threads); records are written every `reference_every` candidates
// in one transaction, so an interrupted run keeps what it measured and a rerun with the same
// arguments resumes. Raises UserError when the target cannot be measured here.
CollectSummary collect_measurements(const ComputeDef &def, const BoundShape &shape, const Target &target,
                                    const CollectOptions &options, db::KernelCache &cache);

// The measured candidates of some tasks, as the cost model's training or evaluation set.
struct ModelData {
    costmodel::TrainingSet set;
    std::vector<std::string> task_names;  // "op shape", by task id
    std::vector<double> roofline_scores;  // -roofline_seconds per candidate: the analytical baseline
    std::vector<std::string> schedules;   // each candidate's point, as SchedulePoint JSON
    size_t dropped = 0;                   // records skipped (unknown op, point outside the space)
};

// Builds the set from `records` (status "ok"; typically measurements_on(target key)): one task per
// (op, shape, target key), features recomputed from each record's schedule JSON on `target` with
// the thread count of the key's ":t<N>" suffix and the contention level of its ":load<L>" suffix
// (loaded_key in tuner/Tuner.h; 0 without one), so measurements taken under load are one task per
// level. Repeated measurements of one point (the interleaved reference) become one candidate with
// their median time; every time is corrected for the reference's drift. Throughput is 1 / corrected time (the model normalises per task).
// `ops` resolves op names; an op missing from it, or a point its space does not contain, is
// counted in `dropped`.
ModelData build_model_data(const std::vector<db::MeasurementRecord> &records, const OpLibrary &ops,
                           const Target &target);

}  // namespace opgen::tuner

#endif
