#include "onnx/ModelCheck.h"

#include "base/Error.h"

#include <onnx/defs/schema.h>

#include <set>

namespace opgen::onnx_import {

namespace {

// The default-domain opset the model imports; 0 when none.
int64_t default_opset(const onnx::ModelProto &model) {
    int64_t opset = 0;
    for (const auto &o : model.opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
    return opset;
}

// A node of a known operator has as many inputs and outputs as its schema allows, and names its
// required inputs: code after this reads a node's inputs by index. Unknown operators are left to
// the partitioner, which refuses them by name.
void check_node_arity(const onnx::NodeProto &n, int64_t opset, const std::string &path) {
    if (!(n.domain().empty() || n.domain() == "ai.onnx")) return;
    const std::string node = "model '" + path + "': node '" + n.name() + "' (" + n.op_type() + ")";
    const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(n.op_type(), int(opset));
    if (!schema) {
        // An operator ONNX knows, but not at the model's opset (or the model imports none).
        user_check(!onnx::OpSchemaRegistry::Schema(n.op_type())) << node << " does not exist at opset " << opset;
        return;
    }
    user_check(n.input_size() >= schema->min_input() && n.input_size() <= schema->max_input())
        << node << " has " << n.input_size() << " input(s); opset " << opset << " allows "
        << schema->min_input() << " to " << schema->max_input();
    user_check(n.output_size() >= schema->min_output() && n.output_size() <= schema->max_output())
        << node << " has " << n.output_size() << " output(s); opset " << opset << " allows "
        << schema->min_output() << " to " << schema->max_output();
    for (int i = 0; i < schema->min_input(); i++) {
        user_check(!n.input(i).empty()) << node << " leaves its required input " << i << " unnamed";
    }
}

// The integer attributes whose values must be positive, and those that must not be negative.
const std::set<std::string> kPositive = {"strides", "dilations", "kernel_shape", "group", "blocksize"};
const std::set<std::string> kNotNegative = {"pads", "output_padding"};

// The operators whose attributes those are (Pad's opset-2 "pads" may be negative: it crops).
const std::set<std::string> kWindowed = {"Conv",        "ConvTranspose", "ConvInteger", "QLinearConv",
                                         "MaxPool",     "AveragePool",   "LpPool",      "MaxUnpool",
                                         "DepthToSpace", "SpaceToDepth"};

void check_attribute_values(const onnx::NodeProto &n, const std::string &path) {
    if (!kWindowed.count(n.op_type())) return;
    for (const onnx::AttributeProto &a : n.attribute()) {
        bool positive = kPositive.count(a.name()) > 0;
        if (!positive && !kNotNegative.count(a.name())) continue;
        auto check = [&](int64_t v) {
            user_check(positive ? v > 0 : v >= 0)
                << "model '" << path << "': node '" << n.name() << "' (" << n.op_type() << ") has " << a.name()
                << " " << v << "; " << a.name() << (positive ? " must be positive" : " must not be negative");
        };
        if (a.type() == onnx::AttributeProto::INT) check(a.i());
        for (int64_t v : a.ints()) check(v);
    }
}

}  // namespace

void check_model_file(const onnx::ModelProto &model, const std::string &path) {
    const onnx::GraphProto &g = model.graph();
    const int64_t opset = default_opset(model);
    std::set<std::string> defined;
    for (const auto &t : g.initializer()) defined.insert(t.name());
    for (const auto &v : g.input()) defined.insert(v.name());
    for (const onnx::NodeProto &n : g.node()) {
        for (const std::string &in : n.input()) {
            user_check(in.empty() || defined.count(in))
                << "model '" << path << "': node '" << n.name() << "' (" << n.op_type() << ") reads '" << in
                << "', which no graph input, initializer or earlier node defines (nodes must be in topological "
                   "order, without cycles)";
        }
        check_node_arity(n, opset, path);
        check_attribute_values(n, path);
        defined.insert(n.output().begin(), n.output().end());
    }
}

}  // namespace opgen::onnx_import
