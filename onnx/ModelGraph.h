// A whole ONNX model as a graph with every shape concrete (docs/design.md §7.4: translating a
// network file into opgen's intermediate form). Unlike `opgen extract`, which lists what it can map
// and skips the rest, compiling needs the whole graph: every value's shape must be known, and the
// model is refused when it is not.
//
// The graph keeps what partitioning needs and nothing of protobuf: nodes with their attributes,
// tensors with their dimensions and kind (input, weight, intermediate, output), the values of
// small constants (reshape targets, slice bounds, scalars such as GELU's sqrt 2), and who produces
// and consumes each tensor. Constant nodes become weights.
#ifndef OPGEN_ONNX_MODEL_GRAPH_H
#define OPGEN_ONNX_MODEL_GRAPH_H

#include "base/DType.h"
#include "onnx/Npy.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace opgen::onnx_import {

struct NodeAttr {
    int64_t i = 0;
    double f = 0;
    std::string s;
    std::vector<int64_t> ints;
};

struct GraphNode {
    int index = 0;
    std::string name;  // the node's name, or "#<index>" when it has none
    std::string op_type;
    std::vector<std::string> inputs;  // "" for an omitted optional input
    std::vector<std::string> outputs;
    std::map<std::string, NodeAttr> attrs;

    bool has(const std::string &attr) const { return attrs.count(attr) != 0; }
    int64_t int_attr(const std::string &attr, int64_t fallback) const;
    double float_attr(const std::string &attr, double fallback) const;
    std::vector<int64_t> ints_attr(const std::string &attr, const std::vector<int64_t> &fallback) const;
};

enum class TensorKind { Input, Weight, Intermediate, Output };

struct GraphTensor {
    std::string name;
    std::vector<int64_t> dims;
    TensorKind kind = TensorKind::Intermediate;
    int elem_type = 1;           // ONNX TensorProto data type; 1 is float32
    std::vector<double> values;  // a weight's elements when it has at most 64 of them
    std::vector<float> data;     // a float32 weight's elements, when read with `with_weights`
    std::string raw;             // another type's weight: its bytes as dtype() lays them out
    std::string layout;          // how its buffer holds it: "" row-major over dims; "nChw16c"
                                 // channel-blocked (onnx/ChannelBlocking.h); "nhwc" for the
                                 // int8 convolutions (onnx/QuantizedLayout.h)

    int64_t elements() const;
    int64_t bytes() const;
    // The op language's type that holds it, bit for bit as ONNX lays it out: f32 for float32, i32
    // and i64 for int32 and int64, u8 for bool (one byte, 0 or 1) and uint8, i8 for int8; nullopt
    // for the types opgen does not compute (docs/design.md §3.1).
    std::optional<DType> dtype() const;
    bool is_bool() const { return elem_type == 9; }
};

struct ModelGraph {
    std::string path;
    int64_t opset = 0;
    std::vector<GraphNode> nodes;  // topological order, as ONNX requires
    std::map<std::string, GraphTensor> tensors;
    std::vector<std::string> inputs, outputs;          // graph inputs (not weights) and outputs
    std::map<std::string, int> producer;               // tensor -> node index
    std::map<std::string, std::vector<int>> consumers;  // tensor -> node indices, graph order

    const GraphTensor &tensor(const std::string &name) const;
    bool is_weight(const std::string &name) const;
};

// Reads the model at `path`, runs ONNX shape inference, and builds the graph. `dims` gives values
// to symbolic dimensions ("batch" -> 1). Raises UserError naming the file when it cannot be read,
// is not an ONNX model or fails shape inference; when dimensions stay symbolic without a value
// (all of them named in one message, with the `--dim NAME=N` that fixes them); and when a value's
// shape stays unknown after inference. `with_weights` also keeps every float32 weight's elements.
// `fixed` gives inputs values at compile time (OnnxRead.h): they are weights, not inputs.
ModelGraph read_model_graph(const std::string &path, const std::map<std::string, int64_t> &dims,
                            bool with_weights = false, const FixedInputs &fixed = {});

}  // namespace opgen::onnx_import

#endif
