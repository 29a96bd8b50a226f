// Quantized convolutions as one int8 kernel (docs/design.md §3.2, "QDQ fusion"): the bundled op
// conv2d_nhwc_u8s8_requant (u8 NHWC activations, s8 weights on vpdpbusd, the requantizing
// epilogue of matmul_u8s8_requant) in place of a float convolution between DequantizeLinear and
// QuantizeLinear kernels.
//
// Two forms are matched, rooted at their convolution:
//   QDQ        DQ(u8 activation, per tensor) and DQ(s8 weight initializer, per output channel,
//              zero point 0) -> Conv [+ its bias: a DQ of an int32 vector, folded to float32
//              when the model was read (WeightDequantize.h)] [+ Relu] -> Q (u8, per tensor)
//   QOperator  QLinearConv of a u8 activation and an s8 weight initializer (per tensor or per
//              channel scale, zero point 0) with an optional int32 bias, u8 output
// Both need a 2-D convolution of group 1 and the same stride, dilation and padding on every axis
// and side; the rest (a grouped convolution) stay on the per-operator kernels. The op sums whole
// groups of 4 channels (what vpdpbusd multiplies at once) and its padding reads 0: a convolution
// whose channels are not a multiple of 4 (a 3-channel stem), or whose padding must read a nonzero
// activation zero point, first copies X by a generated pad_u8_nchw_nhwc kernel into an NHWC
// tensor with the channels padded to a multiple of 4 and the border written out, both holding
// the zero point, and then convolves that copy without padding.
//
// The weight and bias fold at compile time as for the dense layers: Wt packed [KH, KW, C/4, F, 4],
// one int32 bias per output channel round(bias / (sx sw[f])) - zx sum W[f], the scale
// sx sw[f] / sy and the output zero point. The kernel reads and writes NHWC; the graph keeps its
// tensors' NCHW dimensions and QuantizedLayout.h decides where they are held NHWC.
#ifndef OPGEN_ONNX_QDQ_CONV_H
#define OPGEN_ONNX_QDQ_CONV_H

#include "onnx/ModelGraph.h"
#include "onnx/Partition.h"
#include "onnx/QdqFusion.h"

#include <vector>

namespace opgen::onnx_import {

// The bundled op the fused convolution runs (NHWC).
extern const char *const kQuantizedConv;

// The fused kernels for the quantized convolution at node `n` (a Conv or QLinearConv), in order,
// each with its `nodes`: the convolution, after its padding kernel where it needs one (that
// kernel's `constants` also carry the padded tensor, an NHWC intermediate). Empty when `n` is not
// the root of one of the forms above. Never throws for a model that does not fit.
std::vector<SubgraphKernel> fuse_quantized_conv(const ModelGraph &g, const GraphNode &n, const SoleReader &sole_reader);

}  // namespace opgen::onnx_import

#endif
