// Operators over positions rather than values (docs/design.md §3.2): ArgMax and ArgMin (int64
// positions of the first or last extreme along an axis), Gather and GatherElements (elements at
// positions a tensor gives), Trilu (the upper or lower triangle of the last two axes, the rest
// zero) and Expand (a broadcast copy to a larger shape). Each is a generated op of the element
// types the model gives.
#ifndef OPGEN_ONNX_OPS_INDEX_H
#define OPGEN_ONNX_OPS_INDEX_H

#include "onnx/ModelGraph.h"
#include "onnx/Partition.h"

#include <string>
#include <vector>

namespace opgen::onnx_import {

// Whether `op_type` is one of this family's operators.
bool is_index_op(const std::string &op_type);

// The kernels computing node `n` of `g`. Throws Unsupported for a Trilu diagonal or an Expand shape
// computed at run time, and for an axis out of range.
std::vector<SubgraphKernel> index_kernels(const ModelGraph &g, const GraphNode &n);

} // namespace opgen::onnx_import

#endif
