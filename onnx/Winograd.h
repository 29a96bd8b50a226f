// Winograd F(2x2, 3x3) for the channel-blocked 3 x 3 convolutions (docs/design.md §3.2): each
// 2 x 2 tile of outputs comes from the 4 x 4 patch of inputs around it as
//     Y = A^T [ sum over c of (B^T d_c B) * (G g_c G^T) ] A,
// 16 products per tile and channel pair where the direct convolution takes 36, so the 3 x 3s'
// arithmetic shrinks 2.25x. It runs as three kernels over two intermediates:
//   winograd_f23_in    V[a, b, ty, tx, c] = (B^T d B)[a, b] of X's patch at (2 ty - 1, 2 tx - 1)
//   batch_matmul       M[a*4 + b] = V[a*4 + b] U[a*4 + b]   (16 products of T x C by C x F)
//   winograd_f23_out   Y's tile (ty, tx) = A^T M A, then the convolution's bias, residual, ReLU
// U is the weight transformed when the model is compiled (WeightLayout.h, "winograd_f23"); B^T B
// and A^T A are kernel constants. Padding 1 is the input transform's zero-padded reads, so the
// direct convolution's answer comes out to float32 rounding (each product sums more terms).
#ifndef OPGEN_ONNX_WINOGRAD_H
#define OPGEN_ONNX_WINOGRAD_H

#include "onnx/ModelGraph.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace opgen::onnx_import {

// Whether the convolution of shape `conv` (Partition's N, C, H, W, F, KH, KW, stride, pad,
// dilation) runs as Winograd F(2x2, 3x3): one image, a 3 x 3 window at stride 1, padding 1 and
// dilation 1, channels in whole blocks of 16 and an even output height and width (the tiles cover
// it exactly).
bool winograd_applies(const std::map<std::string, int64_t> &conv);

// The input transform's op (channel-blocked X of one image to V as 4 x 4 x TY x TX x CB x 16).
std::string winograd_in_text();

// The output transform's op named `name`, with the convolution's epilogue `steps` ("bias", "add",
// "relu", "relu6", ChannelBlocking's conv steps), writing blocked Y as FB x TY x 2 x TX x 2 x 16.
std::string winograd_out_text(const std::string &name, const std::vector<std::string> &steps);

// The transforms' constants: "winograd_f23_B2" [4, 4, 4, 4] (B^T[a, i] B^T[b, j]) and
// "winograd_f23_A2" [2, 2, 4, 4] (A^T[dy, a] A^T[dx, b]), weights of the graph; their elements
// only `with_data`.
std::vector<GraphTensor> winograd_constants(bool with_data);

}  // namespace opgen::onnx_import

#endif
