// Reductions over any axes (docs/design.md §3.2): ReduceSum (axes as an input or attribute), ReduceMean,
// ReduceMax, ReduceMin, ReduceProd, ReduceSumSquare, ReduceL1, ReduceL2, ReduceLogSum and
// ReduceLogSumExp, keepdims or not. Each is a generated op over the input's axes D0..Dr-1 whose
// name carries which axes it reduces ("r") and keeps ("k"), and whether it keeps them as extent 1.
#ifndef OPGEN_ONNX_OPS_REDUCE_H
#define OPGEN_ONNX_OPS_REDUCE_H

#include "onnx/ModelGraph.h"
#include "onnx/Partition.h"

#include <string>

namespace opgen::onnx_import {

// Whether `op_type` is one of this family's operators.
bool is_reduction(const std::string &op_type);

// Whether node `n` reduces over no axis (noop_with_empty_axes with no axes given): the identity.
bool reduces_nothing(const ModelGraph &g, const GraphNode &n);

// The kernel computing node `n` of `g`. Throws Unsupported for axes computed at run time, a
// reduction over no axis (noop_with_empty_axes), an axis out of range or a non-float32 input.
SubgraphKernel reduce_kernel(const ModelGraph &g, const GraphNode &n);

} // namespace opgen::onnx_import

#endif
