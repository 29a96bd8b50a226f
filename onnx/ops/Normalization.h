// Normalizations on any axis (docs/design.md §3.2): Softmax, LogSoftmax and Hardmax; LayerNormalization
// (with its Mean and InvStdDev outputs), BatchNormalization (inference, and training mode with
// its running statistics), InstanceNormalization and LpNormalization. Each node becomes generated
// ops over its input viewed as the few axes the normalization needs ([A, K, B] around one axis;
// [M, N] when the normalized axes are the last ones; [N, C, S] for the per-channel forms), so one
// op serves every rank and shape of that form.
#ifndef OPGEN_ONNX_OPS_NORMALIZATION_H
#define OPGEN_ONNX_OPS_NORMALIZATION_H

#include "onnx/ModelGraph.h"
#include "onnx/Partition.h"

#include <string>
#include <vector>

namespace opgen::onnx_import {

// Whether `op_type` is one of this family's operators.
bool is_normalization(const std::string &op_type);

// The kernels computing node `n` of `g` (one per output it writes). Throws Unsupported for an
// attribute value or an operand the ops cannot express (a scale that is not a row of the
// normalized extent, a non-float32 tensor).
std::vector<SubgraphKernel> normalization_kernels(const ModelGraph &g, const GraphNode &n);

} // namespace opgen::onnx_import

#endif
