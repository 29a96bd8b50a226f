// Sliding-window operators in their general forms (docs/design.md §3.2): Conv with any number of spatial
// axes (1 to 3), groups, per-axis strides and dilations, per-side pads or auto_pad, and weights
// computed at run time; ConvTranspose at stride 1 likewise; MaxPool, AveragePool, GlobalMaxPool
// and GlobalAveragePool likewise, with ceil_mode and count_include_pad. The partitioner keeps its
// tuned 2-D forms (bundled ops, fused epilogues, channel blocking) for the convolutions and pools
// they fit; the rest come here.
#ifndef OPGEN_ONNX_OPS_WINDOW_H
#define OPGEN_ONNX_OPS_WINDOW_H

#include "onnx/ModelGraph.h"
#include "onnx/Partition.h"

#include <string>
#include <vector>

namespace opgen::onnx_import {

// The kernel computing Conv, ConvTranspose or pool node `n` of `g` in the general form. Throws
// Unsupported for more than 3 spatial axes, a ConvTranspose stride above 1, a pool's Indices
// output, or a non-float32 tensor.
std::vector<SubgraphKernel> window_kernels(const ModelGraph &g, const GraphNode &n);

} // namespace opgen::onnx_import

#endif
