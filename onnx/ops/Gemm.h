// Matrix products in their general forms (docs/design.md §3.2): Gemm with every attribute (alpha, beta,
// transA, transB, a bias C broadcast to the product, operands computed at run time) and MatMul
// with numpy-broadcast batch dimensions or 1-D operands. The partitioner keeps its tuned forms
// (dense layers with fused epilogues, batched attention products) for the nodes they fit; the
// rest come here.
#ifndef OPGEN_ONNX_OPS_GEMM_H
#define OPGEN_ONNX_OPS_GEMM_H

#include "onnx/ModelGraph.h"
#include "onnx/Partition.h"

#include <vector>

namespace opgen::onnx_import {

// The kernel computing Gemm or MatMul node `n` of `g`. Throws Unsupported for a non-float32
// operand, inner extents that differ or batch extents that do not broadcast.
std::vector<SubgraphKernel> gemm_kernels(const ModelGraph &g, const GraphNode &n);

} // namespace opgen::onnx_import

#endif
