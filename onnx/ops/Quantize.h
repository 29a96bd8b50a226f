// Quantized operators (docs/design.md §2.4, §3.2): QuantizeLinear and DequantizeLinear (a scale
// and zero point per tensor or per channel of an axis, given as tensors), DynamicQuantizeLinear
// (the scale and zero point from the input's range, then the quantization), MatMulInteger (u8 or
// i8 products summed in int32, after the zero points) and QLinearMatMul (the same sum requantized:
// scaled by a_scale * b_scale / y_scale, rounded half to even, the output zero point added,
// saturated). Each is a generated op in the tensors' own types; scales and zero points are read as
// the kernel's inputs, so they may be constants or given at run time.
#ifndef OPGEN_ONNX_OPS_QUANTIZE_H
#define OPGEN_ONNX_OPS_QUANTIZE_H

#include "onnx/ModelGraph.h"
#include "onnx/Partition.h"

#include <string>
#include <vector>

namespace opgen::onnx_import {

// Whether `op_type` is one of this family's operators.
bool is_quantized_op(const std::string &op_type);

// The declarations and statements that requantize int32 sums: P = `sum` (int32), R =
// saturate(round((P + `bias`) * `scale`) + `zero`) in float32, then output `out` of the u8 or i8
// `out_type` = R; every tensor of dims `dims` read at `at` (`bias` may be empty).
// QLinearMatMul's and QLinearConv's epilogue.
std::string requantized_text(const std::string &sum, const std::string &bias, const std::string &scale,
                             const std::string &zero, const std::string &out, const std::string &out_type,
                             const std::string &dims, const std::string &at);

// The kernel of node `n`. Throws Unsupported for zero points or scales of a shape the operator
// does not define and for matrix products whose batch axes differ.
std::vector<SubgraphKernel> quantized_kernels(const ModelGraph &g, const GraphNode &n);

} // namespace opgen::onnx_import

#endif
