// QDQ fusion (docs/design.md §3.2, "QDQ fusion"): the quantized dense layers of a QDQ or
// QOperator model become one tuned int8 kernel, the bundled op matmul_u8s8_requant, instead of
// a float matrix product between DequantizeLinear and QuantizeLinear kernels.
//
// Two forms are matched, rooted at their product node:
//   QDQ        DQ(u8 activation, per tensor) x DQ(s8 weight initializer, per output column,
//              zero point 0) -> MatMul or Gemm [+ bias: Gemm's C as a float row or a DQ of an
//              int32 row, or a MatMul's Add of a float row] [+ Relu] -> Q (u8, per tensor)
//   QOperator  QLinearMatMul of a u8 activation and an s8 weight initializer (per tensor or per
//              column scale, zero point 0), u8 output
// Everything constant folds at compile time into the kernel's inputs: the weight packed into the
// layout the op reads (B[K/4, N, 4], four consecutive k of one column together, what vpdpbusd
// reads), the bias and the activation's zero point into one int32 bias per column
// (round(bias / (sx sw[n])) - zx * sum_k B[k, n]), the scales into sx sw[n] / sy per column. A
// Relu is absorbed only where the output's zero point is 0 (then the clamp at 0 is the Relu).
#ifndef OPGEN_ONNX_QDQ_FUSION_H
#define OPGEN_ONNX_QDQ_FUSION_H

#include "onnx/ModelGraph.h"
#include "onnx/Partition.h"

#include <functional>
#include <optional>
#include <string>

namespace opgen::onnx_import {

// The only reader of a tensor, if it has exactly one, is not a graph output and is not yet in a
// kernel; nullptr otherwise (the partitioner's view of the graph).
using SoleReader = std::function<const GraphNode *(const std::string &)>;

// The fused kernel for the quantized dense layer at node `n` (a MatMul, Gemm or QLinearMatMul),
// with `nodes` the graph nodes it covers and its folded weights in `constants` (their elements
// when the graph's weights were read, else only their dimensions); nullopt when `n` is not the
// root of one of the forms above. Never throws for a model that does not fit: it is then left
// to the per-operator kernels.
std::optional<SubgraphKernel> fuse_quantized_dense(const ModelGraph &g, const GraphNode &n,
                                                   const SoleReader &sole_reader);

}  // namespace opgen::onnx_import

#endif
