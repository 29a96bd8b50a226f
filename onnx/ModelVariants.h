// Bandwidth variants in a model library (docs/design.md §7.6, "In the model library"): the
// memory-bound kernels of a model get, beside the schedule the library runs on a quiet machine
// (level 0), the contention variants `opgen tune --variants` finds for them (tuner/Variants.h),
// each built into the library as an extra entry point. The program holds one variant set per
// contention level and switches the whole pipeline's set at once: after every run it compares the
// memory-bound kernels' time with their quiet time (learned in the run, as the least each kernel
// has taken) and, when the drift crosses the next level's boundary on `window` runs in a row, moves
// one level up; below the current level's boundary (less a hysteresis band), one level down.
//
// Which kernels are memory-bound is decided by arithmetic intensity: FLOPs per compulsory byte
// (every input read once, the output written once, core/Shape.h) below `max_intensity`. A
// compute-bound kernel keeps one schedule at every level.
#ifndef OPGEN_ONNX_MODEL_VARIANTS_H
#define OPGEN_ONNX_MODEL_VARIANTS_H

#include "onnx/ModelCompile.h"
#include "tuner/Tuner.h"
#include "tuner/Variants.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace opgen::onnx_import {

struct ModelVariantOptions {
    std::vector<double> levels;  // contention levels above 0, increasing; empty: no variants
    // Kernels under this many FLOPs per compulsory byte get variants: below a CPU core's balance
    // of FLOPs to DRAM bandwidth on the hosts measured (142-232 GFLOP/s over 11-35 GB/s: 6-13).
    double max_intensity = 10;
    bool tune = true;                // tune the variants a kernel lacks; false: the cache's only
    tuner::VariantOptions tuning;    // how (its levels are set from `levels`)
};

// Whether `def` at `shape` does fewer than `max_intensity` FLOPs per byte it must move.
bool bandwidth_bound(const ComputeDef &def, const BoundShape &shape, double max_intensity);

// One kernel's entry point at one level.
struct LevelEntry {
    std::string function;    // its pipeline; empty: the level-0 kernel's own
    std::string point_json;  // the schedule of `function`
    double rel_quiet = 1;    // its quiet time over the quiet winner's (the tuning's figures)
    double drift = 1;        // its time under its level over its quiet time (the tuning's figures)
};

// The variant sets of one library.
struct ModelVariants {
    std::vector<double> levels;  // 0 first, then the options' levels
    // Per model kernel, one entry per level; empty for a kernel that keeps one schedule.
    std::vector<std::vector<LevelEntry>> kernels;
    // The memory-bound kernels' expected drift from their quiet time at each level (1 at level 0):
    // their times under the level over their quiet times, weighted by their quiet times.
    std::vector<double> level_drift;
    nlohmann::json report;  // deploy.json's "variants"
};

// Where and how the variants are tuned: the kernel cache and the model's tuning options.
struct VariantTuneContext {
    std::string db_path;
    std::optional<db::SigningKey> signing_key;
    std::string target;
    int threads = 1;
    tuner::TuneOptions tune_options;
    std::function<void(const std::string &)> log;
};

// The variant sets of `m`, whose kernel k runs `functions[k]` at level 0 (kernels of one op and
// shape share one). Each memory-bound distinct kernel's variants come from the cache at
// ctx.db_path (store/VariantStore.h), tuned there first where a level is missing (when o.tune);
// a level whose variant is the quiet winner itself, or that no tuning gave, runs the level-0
// kernel. New entry points are named `<function>_l<level index>`. Raises UserError as
// tune_variants does.
ModelVariants plan_model_variants(const CompiledModel &m, const std::vector<std::string> &functions,
                                  const ModelVariantOptions &o, const VariantTuneContext &ctx);

// The generated program's part (onnx/ModelProgram.h): declarations for `<name>.h` (after its
// `<name>_LEVELS` macro, the variant sets' count) and the source
// that goes after the kernel tables, defining `kernel_entry(k)`, `kernel_timed(k)`,
// `variant_kernel_done(k, seconds)`, `variant_run_done()` and the `<name>_*variant*` API. With
// `variants` null (or of one level) the entry is always the level-0 kernel and nothing is timed.
std::string variant_declarations(const std::string &name);
std::string variant_source(const std::string &name, const ModelVariants *variants, size_t kernels);

}  // namespace opgen::onnx_import

#endif
