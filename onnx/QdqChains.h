// QDQ elementwise chains (docs/design.md §3.2, "QDQ fusion"): between the int8 layers of a QDQ
// model, float elementwise work is written as DequantizeLinear nodes, float operators and one
// QuantizeLinear (a residual DQ + DQ -> Add -> Relu -> Q; a GELU between two dense layers). Each
// such chain becomes one generated kernel that reads the u8 tensors and writes the u8 result:
// the dequantizing, the float expression and the requantizing in one statement, with no float
// tensor in memory.
//
// A chain ends at a QuantizeLinear to u8 with a constant per-tensor scale and zero point. Going
// back from it, every value is a DequantizeLinear of a u8 tensor (constant per-tensor scale and
// zero point), a scalar constant, or an Add, Sub, Mul, Div, Relu, Tanh or Erf of chain values;
// every tensor read or written inside it has the Q's dimensions, and no value inside it is read
// outside it or is a graph output.
#ifndef OPGEN_ONNX_QDQ_CHAINS_H
#define OPGEN_ONNX_QDQ_CHAINS_H

#include "onnx/ModelGraph.h"
#include "onnx/Partition.h"

#include <functional>
#include <optional>

namespace opgen::onnx_import {

// Whether node index `i` may join a fused kernel (not yet taken by another).
using NodeFree = std::function<bool(int)>;

// The fused kernel of the chain that ends at QuantizeLinear node `q` (its `nodes` filled), or
// nullopt when `q` does not end one of at least one float operator.
std::optional<SubgraphKernel> fuse_quantized_chain(const ModelGraph &g, const GraphNode &q, const NodeFree &free);

}  // namespace opgen::onnx_import

#endif
