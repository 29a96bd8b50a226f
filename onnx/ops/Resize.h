// ONNX Resize in every mode and coordinate transformation (docs/design.md §3.2), beyond the
// whole-factor nearest copy (onnx/ops/Layout.h): each resized axis k is a product with a matrix
// W_k[o, i] computed at compile time from ONNX's formulas (nearest with its rounding, linear,
// cubic with its coefficient and exclude_outside; half_pixel, pytorch_half_pixel, align_corners,
// asymmetric, tf_half_pixel_for_nn), so the generated op reads only affine indices: one stage per
// resized axis, T_j[.., o, ..] = sum(i: I_k) W_k[o, i] T_j-1[.., i, ..], innermost axis first.
// The matrices are weights the kernel carries (SubgraphKernel::constants). A stage does I_k
// multiply-adds per output where an interpolation needs 1 to 4: right for small and moderate
// images, wasteful for large ones.
#ifndef OPGEN_ONNX_OPS_RESIZE_H
#define OPGEN_ONNX_OPS_RESIZE_H

#include "onnx/ModelGraph.h"
#include "onnx/Partition.h"

#include <vector>

namespace opgen::onnx_import {

// The kernel of Resize node `n`. Throws Unsupported for scales, sizes or roi computed at run time,
// tf_crop_and_resize (its extrapolated values), and a non-float32 tensor.
std::vector<SubgraphKernel> resize_kernels(const ModelGraph &g, const GraphNode &n);

// The interpolation matrix of one axis, row-major [out][in]: exposed for tests.
struct ResizeAxis {
    int64_t in = 0, out = 0;
    double scale = 1;  // the scale ONNX uses: the given one, or out / in when sizes are given
};
struct ResizeMode {
    std::string mode = "nearest", coordinates = "half_pixel", rounding = "round_prefer_floor";
    double cubic_a = -0.75;
    bool exclude_outside = false;
};
std::vector<double> resize_matrix(const ResizeAxis &axis, const ResizeMode &m);

} // namespace opgen::onnx_import

#endif
