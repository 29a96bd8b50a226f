// The quantized convolutions' layout across the graph (docs/design.md §3.2, "QDQ fusion"): the
// fused int8 convolution (QdqConv.h) reads and writes NHWC, the layout whose four consecutive
// channels of a pixel vpdpbusd reads at once, so a quantized network's activations are held NHWC
// from one int8 convolution to the next, with transposes only where a tensor crosses into a
// kernel that reads NCHW.
//
// A pass over a partition, after partition_graph and block_channels:
//   - an int8 convolution or max pool reads its activation NHWC (an NCHW one is transposed
//     first, into "<tensor>@nhwc") and writes NHWC; a convolution's padded copy of its input
//     (QdqConv.h) is written NHWC by its own kernel;
//   - a pointwise kernel (SubgraphKernel::pointwise: a QDQ chain, a Q or DQ, a float Add or
//     Relu) whose inputs are all of its output's dims or of one element computes the same in any
//     layout: when one of them is held NHWC it reads them all NHWC and writes NHWC (the residual
//     Add between two convolutions, in u8 or in float32);
//   - every other kernel reads NCHW: an NHWC tensor it reads is transposed back first, into
//     "<tensor>@nchw";
//   - a graph output or a view's source is never left NHWC.
// The tensors keep their logical NCHW dimensions in the graph; the layout is GraphTensor::layout.
#ifndef OPGEN_ONNX_QUANTIZED_LAYOUT_H
#define OPGEN_ONNX_QUANTIZED_LAYOUT_H

#include "onnx/ModelGraph.h"
#include "onnx/Partition.h"

namespace opgen::onnx_import {

// Rewrites `p` as above, adding the transposed tensors to `g` as intermediates. A partition
// without an int8 convolution is left as it is.
void hold_quantized_nhwc(ModelGraph &g, Partition &p);

}  // namespace opgen::onnx_import

#endif
