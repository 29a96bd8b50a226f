#include "onnx/OnnxRead.h"

#include "base/Error.h"
#include "onnx/IsolatedInference.h"
#include "onnx/ModelCheck.h"
#include "onnx/ShapeFold.h"

#include <algorithm>
#include <fstream>

namespace opgen::onnx_import {

namespace {

// The value's dims agree with the input's declared ones: the same rank, and equal where the model
// gives a number (a symbolic or absent dimension takes the value's).
bool dims_agree(const onnx::ValueInfoProto &input, const NpyArray &value) {
    if (!input.type().tensor_type().has_shape()) return true;
    const auto &shape = input.type().tensor_type().shape();
    if (shape.dim_size() != int(value.dims.size())) return false;
    for (int d = 0; d < shape.dim_size(); d++)
        if (shape.dim(d).has_dim_value() && shape.dim(d).dim_value() != value.dims[size_t(d)]) return false;
    return true;
}

std::string dims_text(const std::vector<int64_t> &dims) {
    std::string s;
    for (int64_t d : dims) s += (s.empty() ? "" : "x") + std::to_string(d);
    return s.empty() ? "a scalar" : s;
}

// Each input of `fixed` becomes an initializer holding its value and leaves the graph's inputs.
void fix_inputs(onnx::ModelProto &model, const FixedInputs &fixed, const std::string &path) {
    auto *inputs = model.mutable_graph()->mutable_input();
    for (const auto &entry : fixed) {
        const std::string &name = entry.first;  // not a structured binding: the lambda reads it
        const NpyArray &value = entry.second;
        auto it = std::find_if(inputs->begin(), inputs->end(), [&](const auto &v) { return v.name() == name; });
        user_check(it != inputs->end()) << "model '" << path << "': --fix-input " << name << ": the model has no input '"
                                        << name << "'";
        const int declared = it->type().tensor_type().elem_type();
        user_check(declared == value.onnx_type) << "model '" << path << "': --fix-input " << name << ": the input has ONNX type "
                                               << declared << ", the value " << value.onnx_type;
        user_check(dims_agree(*it, value)) << "model '" << path << "': --fix-input " << name << ": the value's dims ("
                                           << dims_text(value.dims) << ") do not fit the input's";
        onnx::TensorProto *t = model.mutable_graph()->add_initializer();
        t->set_name(name);
        t->set_data_type(value.onnx_type);
        for (int64_t d : value.dims) t->add_dims(d);
        t->set_raw_data(value.bytes);
        inputs->erase(it);
    }
}

}  // namespace

onnx::ModelProto read_onnx_with_shapes(const std::string &path, const std::map<std::string, int64_t> &dims,
                                       const FixedInputs &fixed) {
    std::ifstream in(path, std::ios::binary);
    user_check(in.good()) << "cannot read model '" << path << "'";
    onnx::ModelProto model;
    user_check(model.ParseFromIstream(&in)) << "model '" << path << "': not an ONNX model (protobuf parse failed)";
    user_check(model.has_graph() && model.graph().node_size() > 0)
        << "model '" << path << "': not an ONNX model (no graph or no nodes)";
    check_model_file(model, path);
    fix_inputs(model, fixed, path);
    // Inference runs in a child process: libonnx crashes on some malformed files.
    auto infer = [&](onnx::ModelProto &m) { infer_shapes_isolated(m, path); };
    infer_and_fold(model, dims, infer);
    return model;
}

int64_t onnx_opset(const onnx::ModelProto &model) {
    int64_t opset = 0;
    for (const auto &o : model.opset_import())
        if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
    return opset;
}

}  // namespace opgen::onnx_import
