// Operators that move elements without computing on them (docs/design.md §3.2): Concat, Split, Slice with
// several axes and steps, Pad (constant, reflect, edge), Tile, DepthToSpace, SpaceToDepth and
// Resize in nearest mode by whole factors. Each output is one generated copy whose reads are affine
// in its indices: a tile, an upsampling or a block rearrangement is written over a higher-rank
// view of its output (the same row-major bytes), and a Concat selects among inputs read with zero
// padding outside their extents.
#ifndef OPGEN_ONNX_OPS_LAYOUT_H
#define OPGEN_ONNX_OPS_LAYOUT_H

#include "onnx/ModelGraph.h"
#include "onnx/Partition.h"

#include <string>
#include <vector>

namespace opgen::onnx_import {

// Whether `op_type` is one of this family's operators.
bool is_layout(const std::string &op_type);

// The kernels computing node `n` of `g`, one per output. Throws Unsupported for what they cannot
// express: bounds, pads, repeats, split sizes or scales computed at run time, negative pads, a
// Resize other than nearest by whole factors, a non-float32 tensor.
std::vector<SubgraphKernel> layout_kernels(const ModelGraph &g, const GraphNode &n);

} // namespace opgen::onnx_import

#endif
