// Weights re-laid out into the layout their kernel reads (docs/design.md §7.5): a weight that a
// kernel wants in another order than ONNX's row-major one is given a new tensor, its elements
// permuted once when the model is compiled, so the weights file holds the kernel's layout and the
// original is never loaded. The partition asks for these (Partition.relayouts); compile_model adds
// them to the graph.
//
// Layouts:
//   transpose   a matrix [R, C] as [C, R]: Gemm's B read through transB = 1 (B is N x K) becomes
//               the K x N operand of a plain matmul, whose rows stream (core/Streaming.h)
//   OIhw16i16o  convolution weights [F, C, KH, KW] as [F/16, C/16, KH, KW, 16, 16] (oneDNN's
//               blocked kernel layout, conv2d_nchwc's Wt)
//   Oihw16o     convolution weights [F, C, KH, KW] as [F/16, C, KH, KW, 16] (the first
//               convolution's, whose input channels are not blocked)
//   Ghw16g      depthwise weights [C, 1, KH, KW] as [C/16, KH, KW, 16]
//   winograd_f23  3 x 3 convolution weights [F, C, 3, 3] transformed for Winograd F(2x2, 3x3):
//               [16, C, F], U[a*4 + b, c, f] = (G g G^T)[a, b] (more elements than the source)
#ifndef OPGEN_ONNX_WEIGHT_LAYOUT_H
#define OPGEN_ONNX_WEIGHT_LAYOUT_H

#include <cstdint>
#include <string>
#include <vector>

namespace opgen::onnx_import {

struct ModelGraph;

struct WeightRelayout {
    std::string tensor;          // the new weight's name: "<source>@<layout>"
    std::string source;          // the ONNX weight it permutes
    std::string layout;          // one of the layouts above
    std::vector<int64_t> dims;   // the new weight's dimensions
};

// The relayout of weight `source` of dimensions `dims` into `layout`. Raises InternalError when
// `dims` do not fit the layout (the partition asks only for ones that do).
WeightRelayout make_relayout(const std::string &source, const std::vector<int64_t> &dims, const std::string &layout);

// The elements of `r`'s new tensor, from its source's `source` (row-major, dimensions `src_dims`).
std::vector<float> relaid_elements(const WeightRelayout &r, const std::vector<int64_t> &src_dims,
                                   const std::vector<float> &source);

// Adds every relayout's tensor to `g` as a weight, its elements permuted when the source's were
// read (a graph read without weights gets tensors without elements).
void add_relaid_weights(ModelGraph &g, const std::vector<WeightRelayout> &relayouts);

}  // namespace opgen::onnx_import

#endif
