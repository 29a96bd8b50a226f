// The operands the QDQ fusions match (docs/design.md §3.2, "QDQ fusion"): per-tensor u8
// activations with their constant scale and zero point, the DequantizeLinear that writes a value,
// the requantizing QuantizeLinear (after a Relu) that ends a quantized layer, and the constants a
// fused kernel reads in place of the model's. Shared by the dense layers (QdqFusion.h) and the
// convolutions (QdqConv.h).
#ifndef OPGEN_ONNX_QDQ_OPERANDS_H
#define OPGEN_ONNX_QDQ_OPERANDS_H

#include "onnx/ModelGraph.h"
#include "onnx/OpText.h"
#include "onnx/QdqFusion.h"

#include <optional>
#include <string>
#include <vector>

namespace opgen::onnx_import {

constexpr int kOnnxFloat = 1, kOnnxUint8 = 2, kOnnxInt8 = 3, kOnnxInt32 = 6;

// Whether input `i` of `n` is given.
bool present(const GraphNode &n, size_t i);

// Whether constant `t` is all zeros (assumed when its elements were not read: the folds then
// compute no elements either).
bool all_zero(const ModelGraph &g, const std::string &t);

// A per-tensor u8 value: the tensor, its scale and zero point.
struct PerTensor {
    std::string tensor;
    double scale = 1;
    int64_t zero = 0;
};

// Tensor `t` with the scale and zero point inputs `s`, `z` of a (De)QuantizeLinear or QLinear
// node, when both are single constants (`z` of u8; absent: 0).
std::optional<PerTensor> per_tensor(const ModelGraph &g, const std::string &t, const std::string &s,
                                    const std::string &z);

// The DequantizeLinear that writes `t`, if one does.
const GraphNode *dequantize_of(const ModelGraph &g, const std::string &t);

// The end of a quantized layer whose float result is `t`: an optional Relu (only where the output
// zero point is 0, so that the clamp at 0 is the Relu) and a QuantizeLinear to u8, each the sole
// reader of its input.
struct RequantizedOutput {
    PerTensor y;
    std::vector<int> nodes;
};
std::optional<RequantizedOutput> match_requantized_output(const ModelGraph &g, const std::string &t,
                                                          const SoleReader &sole_reader);

// A weight tensor a fused kernel reads (its elements are filled by the caller).
GraphTensor folded_constant(const std::string &name, const Dims &dims, int elem_type);

// The one value `out` of an attribute given per axis or per side (strides, pads, dilations);
// false when they differ or none is given.
bool one_value(const Dims &v, int64_t &out);

// Element `i` of a vector of 1 or more values (a per-tensor or per-channel parameter).
double per_channel(const std::vector<double> &v, int64_t i);

}  // namespace opgen::onnx_import

#endif
