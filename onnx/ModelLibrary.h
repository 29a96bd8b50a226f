// The deployable artifact of `opgen compile` (docs/design.md §3, ideas in §7.3-§7.5): every
// subgraph's kernel from the kernel cache (missing ones tuned into it by the batch machinery, or
// Halide's heuristic point without tuning), compiled in parallel worker processes, and combined
// with the generated program (onnx/ModelProgram.h), the buffer plan (BufferPlan.h) and the weights
// (ModelWeights.h) into files for DIR:
//   <model>.h, lib<model>.a    `<model>_load(weights)` / `<model>_run(inputs, outputs)`, with the
//                              kernels and one Halide runtime inside
//   <model>.weights            the weights kernels read, laid out as the plan says
//   <model>-runner             a main linked with the library (onnx/ModelRunner.h)
//   src/<model>.c, src/runner.c  the generated sources, to read or rebuild with
//   deploy.json                the kernels' origins, the plan's memory, the compile's times
#ifndef OPGEN_ONNX_MODEL_LIBRARY_H
#define OPGEN_ONNX_MODEL_LIBRARY_H

#include "onnx/BufferPlan.h"
#include "onnx/DynamicDims.h"
#include "onnx/ModelCompile.h"
#include "onnx/ModelVariants.h"
#include "tuner/Tuner.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace opgen::onnx_import {

struct DeployOptions {
    std::string db_path = "opgen.db";    // the kernel cache (created when absent and tuning)
    std::optional<db::SigningKey> signing_key;  // signs the code that tuning stores (CodeSignature.h)
    std::string target = "host";
    std::vector<std::string> ops_dirs;   // where bundled ops come from (as for compile_model)
    int threads = 1;                     // the thread count the kernels are keyed and tuned at
    bool tune = true;                    // tune missing kernels; false: Halide's heuristic point
    int trials = 24;                     // per missing kernel (at most, unless even_trials)
    // Every missing kernel gets `trials`; otherwise those with a small share of the model's
    // estimated time get fewer (tuner/TrialBudget.h).
    bool even_trials = false;
    uint64_t seed = 1;
    tuner::TuneOptions tune_options;     // everything else about tuning (workers, budgets)
    // Time each kernel with its weights cold (flushed from the caches before every timed call, as
    // the other layers' weights evict them in the model; tuner/ColdInputs.h) and prefer the
    // winners cached that way. Without tuning, a kernel with no cold winner takes its hot one.
    bool cold_weights = true;
    int compile_jobs = 1;                // compile worker processes
    // Bandwidth variants of the memory-bound kernels (onnx/ModelVariants.h, `--variants`); no
    // levels: one schedule per kernel. Not with dynamic dims.
    ModelVariantOptions variants;
    std::function<void(const std::string &)> log;  // progress lines; may be empty
};

struct DeployedModel {
    std::string name;                          // the C identifier of the model's functions
    std::map<std::string, std::string> files;  // path relative to DIR -> bytes
    std::string runner;                        // the runner's path relative to DIR
    nlohmann::json report;                     // deploy.json
};

// Builds the deployable files of `m` (read with its weights) with `plan`. Raises UserError when a
// missing kernel cannot be tuned (no correct candidate), a kernel does not compile, or the C
// compiler, archiver or linker fails; nothing is written anywhere but a scratch folder.
DeployedModel build_model_library(const CompiledModel &m, const BufferPlan &plan, const DeployOptions &options);

// The same for a model with dynamic dims (DynamicDims.h), planned at its largest values (`plan`
// of d.top): the kernels of every specialization from the cache (tuned where missing), the
// shape-generic kernels of the kernels whose shapes vary, and a program choosing between them at
// each call; deploy.json gains "dynamic" (the ranges, the specializations, the generic kernels).
DeployedModel build_dynamic_library(const DynamicModel &d, const BufferPlan &plan, const DeployOptions &options);

}  // namespace opgen::onnx_import

#endif
