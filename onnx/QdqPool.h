// Quantized max pooling as one u8 kernel (docs/design.md §3.2, "QDQ fusion"): a DQ(u8, per
// tensor) -> MaxPool -> Q(u8, per tensor) between two int8 convolutions (a ResNet's stem) pools
// the u8 values themselves: dequantizing and requantizing are both monotone, so the maximum of
// the requantized values is the requantized maximum, and the kernel takes the window's u8
// maximum and then requantizes it once (the identity where the two scales and zero points agree).
// It reads and writes NHWC, the int8 region's layout (QuantizedLayout.h).
//
// Matched: a 2-D MaxPool of one output (no indices), the same stride and padding on every axis
// and side, no dilation, ceil_mode 0, its input the sole reader of a DequantizeLinear of a u8
// tensor and its output read only by a QuantizeLinear to u8, scales and zero points constant.
#ifndef OPGEN_ONNX_QDQ_POOL_H
#define OPGEN_ONNX_QDQ_POOL_H

#include "onnx/ModelGraph.h"
#include "onnx/Partition.h"
#include "onnx/QdqFusion.h"

#include <optional>

namespace opgen::onnx_import {

// The op the fused kernel runs (generated, NHWC).
extern const char *const kQuantizedMaxPool;

// The fused kernel for the quantized max pooling at node `n` with its `nodes`, or nullopt when
// `n` is not one. Never throws for a model that does not fit.
std::optional<SubgraphKernel> fuse_quantized_max_pool(const ModelGraph &g, const GraphNode &n,
                                                      const SoleReader &sole_reader);

}  // namespace opgen::onnx_import

#endif
