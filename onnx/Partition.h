// Partitioning a whole model into fused subgraphs, each one op of the op language (docs/design.md
// §3.2; as in §7.3, the graph is split into subgraphs that are compiled separately and combined).
//
// Walking the graph in order, a subgraph starts at a compute node and absorbs what follows it
// while each intermediate value has no other reader:
//   conv      Conv (group 1 or depthwise) + bias + the residual Add + Relu, in the order met
//   dense     MatMul / Gemm with a weight + bias + residual Add + Relu, Tanh or the exact GELU
//             (x * 0.5 * (1 + erf(x / sqrt 2)), written as ONNX nodes)
//   attention a MatMul of two activations (attention's batched matmuls) + the Transposes that
//             feed it and the one that reads it + a constant scale
//   layernorm, softmax (last axis), pool (MaxPool, AveragePool, global pools), Slice and
//             Transpose as copies, and elementwise nodes left alone (Add, Sub, Mul, Div of equal
//             shapes or with a scalar constant; Relu, Sigmoid, Tanh, Erf, Exp, Log, Sqrt, Abs, Neg)
// Reshape, Flatten, Squeeze, Unsqueeze, Identity and Dropout are views: the same row-major buffer
// under other dimensions, no kernel.
//
// A subgraph whose form is a bundled op (conv2d_bias_relu, matmul_bias_gelu, softmax, ...) uses
// it; otherwise its op text is generated here, named after its form (conv2d_bias_add_relu,
// batch_matmul_tb0231_scale). Two subgraphs of the same form share one op; shapes differ.
//
// A kernel may read a weight in another layout than ONNX's (WeightLayout.h): Gemm's B with
// transB = 1 is read as the transpose, so the classifier (M = 1) is a plain matmul whose weight
// rows stream instead of a GEMV that reads B across its rows.
#ifndef OPGEN_ONNX_PARTITION_H
#define OPGEN_ONNX_PARTITION_H

#include "onnx/ModelGraph.h"
#include "onnx/WeightLayout.h"

#include <string>
#include <utility>
#include <vector>

namespace opgen::onnx_import {

struct SubgraphKernel {
    std::string kind;        // conv, dense, attention, layernorm, softmax, pool, elementwise, copy
    std::string op;          // bundled or generated op name
    bool generated = false;
    std::string text;        // the generated op's file text; empty for a bundled op
    std::string shape;       // shape text for the op ("M=128,N=768,K=768")
    // Each output element is computed from the same element of each input of the output's dims
    // (and of one-element inputs) alone: the kernel computes the same in any layout they share.
    bool pointwise = false;
    std::vector<int> nodes;  // graph node indices it covers, in graph order
    // op tensor -> graph tensor, inputs in the op's order, then the output
    std::vector<std::pair<std::string, std::string>> args;
    // Tensors the model does not hold that compile_model adds to the graph: weights computed at
    // compile time that the op reads, each with its elements (a resize's interpolation matrices,
    // an int8 layer's packed weights), or an intermediate between the kernels of one fusion (the
    // padded copy a quantized convolution reads, QdqConv.h).
    std::vector<GraphTensor> constants;
};

// A tensor that is another's buffer under other dimensions (a Reshape and its kin).
struct TensorView {
    std::string tensor, source;
    int node = 0;
};

struct Partition {
    std::vector<SubgraphKernel> kernels;  // an execution order: each after what it reads
    std::vector<TensorView> views;
    std::vector<WeightRelayout> relayouts;  // weights the kernels read in another layout, by new name
};

// Partitions `g`. Every node must land in a subgraph or a view; otherwise raises one UserError
// listing the nodes the op language cannot express yet, counted by operator and reason
// ("model 'm.onnx': 3 nodes cannot be compiled: Gather x2 (no opgen op), ...").
Partition partition_graph(const ModelGraph &g);

}  // namespace opgen::onnx_import

#endif
