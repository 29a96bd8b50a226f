// Layouts chosen across the graph (docs/design.md §3.2 and §7.4; weights in their kernels' layouts,
// §7.5): convolutions and pools run on channel-blocked activations (oneDNN's nChw16c: channel c
// of an N x C x H x W tensor at [n, c / 16, y, x, c % 16]) and stay blocked from one convolution
// to the next, with reorders only where a tensor crosses into an op that reads NCHW (the graph's
// edges, a view, a convolution whose channels are not multiples of 16, a depthwise convolution).
//
// A pass over a partition, after partition_graph:
//   - a convolution (group 1) with F % 16 == 0 becomes conv2d_nchwc with its epilogue (bias as
//     [F/16, 16], the residual R blocked, ReLU), its weights re-laid out into OIhw16i16o at compile
//     time (WeightLayout.h); one whose C is not a multiple of 16 (the stem's 3 channels) reads NCHW
//     and writes blocked, its weights in Oihw16o;
//   - a max or average pool whose input is blocked pools blocked; a global pool's 1 x 1 output is
//     the same bytes in both layouts, so it counts as NCHW;
//   - every other kernel reads NCHW: a blocked tensor it reads is reordered first, into
//     "<tensor>@nchw"; a blocked kernel reading an NCHW tensor gets "<tensor>@nChw16c";
//   - a graph output or a view's source is never left blocked: its kernel writes
//     "<tensor>@nChw16c" and a reorder writes the tensor.
// Every blocked or reorder kernel's op text is generated, as for any fused subgraph.
#ifndef OPGEN_ONNX_CHANNEL_BLOCKING_H
#define OPGEN_ONNX_CHANNEL_BLOCKING_H

#include "onnx/ModelGraph.h"
#include "onnx/Partition.h"

namespace opgen::onnx_import {

// Rewrites `p` to blocked layouts as above, adding the blocked and reordered tensors to `g` (as
// intermediates) and the weights' relayouts to p.relayouts. A partition with no convolution of
// 16k output channels is left as it is. With `winograd`, the 3 x 3 convolutions Winograd.h takes
// run as its three kernels.
void block_channels(ModelGraph &g, Partition &p, bool winograd = true);

}  // namespace opgen::onnx_import

#endif
