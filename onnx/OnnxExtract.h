// Model import (docs/design.md §3.1 and §7.4: from a network file to deployable code): reads an
// ONNX model, runs ONNX's shape inference, and maps every node opgen has an op for to that op at a
// concrete shape, so the model's kernels can be tuned as a batch manifest (core/Manifest.h).
//
// Mapped: MatMul (2-D weights -> matmul with the leading dims folded into M; equal batch dims ->
// batch_matmul), Gemm -> matmul, Conv (group 1 -> conv2d_nchw, group = channels ->
// depthwise_conv2d), MaxPool / AveragePool / GlobalMaxPool / GlobalAveragePool -> max_pool2d /
// avg_pool2d, Softmax, LayerNormalization, and the elementwise Relu, Sigmoid, Gelu, Add, Mul
// (same-shape operands). Every other node, and a mapped one whose attributes opgen's op cannot
// express (asymmetric padding, broadcasting, ...), is listed as unsupported with the reason.
#ifndef OPGEN_ONNX_ONNX_EXTRACT_H
#define OPGEN_ONNX_ONNX_EXTRACT_H

#include "core/OpLibrary.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace opgen::onnx_import {

// One supported node.
struct ExtractedKernel {
    std::string onnx_op;  // "Conv"
    std::string node;     // the node's name, or "#<index>" when it has none
    std::string op;       // opgen op, "conv2d_nchw"
    std::string shape;    // canonical shape of the op, "C=64,F=64,H=56,..."
};

struct UnsupportedNodes {
    int64_t count = 0;
    std::vector<std::string> nodes;  // the first few names
};

struct Extraction {
    std::string model;
    int64_t nodes = 0;
    int64_t opset = 0;
    std::vector<ExtractedKernel> kernels;  // graph order
    // (onnx op, reason) -> nodes
    std::map<std::pair<std::string, std::string>, UnsupportedNodes> unsupported;
};

// Reads the model at `path`, infers shapes, and maps its nodes. `dims` gives values to symbolic
// dimensions ("batch" -> 1); a node whose shapes stay unknown is listed as unsupported. Every
// mapped shape is bound against its op from `lib` (a shape that does not bind is unsupported,
// with the reason). Raises UserError naming the file when it cannot be read, is not an ONNX
// model, or fails shape inference.
Extraction extract_onnx(const std::string &path, const OpLibrary &lib, const std::map<std::string, int64_t> &dims);

// The batch manifest of an extraction: one entry per opgen op, its distinct shapes in graph
// order; the model, the node counts and the unsupported nodes under "source".
nlohmann::json extraction_manifest(const Extraction &x);

}  // namespace opgen::onnx_import

#endif
