// The C program of a deployed model (docs/design.md §7.4: a program generated against the
// target's interface, compiled into the inference library): a header declaring
// `<model>_load(weights_path)` / `<model>_run(inputs, outputs)` and the model's facts (inputs,
// outputs, their dims, the kernels), and a source that calls every kernel in graph order on
// Halide buffers whose dims are constants and whose memory the buffer plan gives: the caller's
// inputs and outputs, the weights loaded once, one arena for the intermediates.
#ifndef OPGEN_ONNX_MODEL_PROGRAM_H
#define OPGEN_ONNX_MODEL_PROGRAM_H

#include "onnx/BufferPlan.h"
#include "onnx/DynamicDims.h"
#include "onnx/ModelCompile.h"

#include <string>
#include <vector>

namespace opgen::onnx_import {

struct ModelProgram {
    std::string header;  // <name>.h
    std::string source;  // <name>.c
};

// `name` as a C identifier: characters other than letters, digits and '_' become '_', and a
// leading digit gets "m_" before it.
std::string model_identifier(const std::string &name);

// `text` with every "@M@" replaced by `name` (the generated sources' templates).
std::string with_model_name(std::string text, const std::string &name);

// The declarations of a program's header without its count macros (`<name>_INPUTS`, ...,
// `<name>_LEVELS`), whose values `<name>_counts` holds: what the runner (onnx/ModelRunner.h)
// compiles against, so that its object does not depend on the model.
std::string model_declarations(const std::string &name);

// The sizes a program computes its buffers' dims from: for a library of one shape constants, for
// one with dynamic dims (onnx/DynamicDims.h) affine rules of the ranges' values.
struct ProgramShapes {
    std::vector<DimRange> ranges;                // empty: one shape
    std::vector<std::vector<int64_t>> points;    // the specializations, one value per range
    std::vector<std::vector<std::vector<AffineSize>>> arg_dims;  // per kernel, op tensor, dim
    std::map<std::string, std::vector<AffineSize>> io_dims;      // the graph's inputs and outputs
};

// The shapes of `m` alone, every size a constant.
ProgramShapes static_shapes(const CompiledModel &m);

// The program of `m` named `name` (a C identifier) over `plan`. `functions[v][i]` is the pipeline
// kernel i calls in variant v (its object defines `<function>_argv`); kernels of the same op and
// shape may share one. A program of one shape has one variant; one with ranges has one per
// specialization (`shapes.points`, in order) and last the generic variant, called at every other
// value. `uses_amx`: some kernel runs on AMX tiles (core/AmxTile.h), so `<model>_load` asks the
// operating system for them first and fails, with the reason, where it refuses. `variants`: the
// bandwidth variant sets the program switches between (onnx/ModelVariants.h; null: one set).
struct ModelVariants;
ModelProgram model_program(const std::string &name, const CompiledModel &m, const BufferPlan &plan,
                           const std::vector<std::vector<std::string>> &functions, const ProgramShapes &shapes,
                           bool uses_amx = false, const ModelVariants *variants = nullptr);

}  // namespace opgen::onnx_import

#endif
