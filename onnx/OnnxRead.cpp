#include "onnx/OnnxRead.h"

#include "base/Error.h"
#include "onnx/ShapeFold.h"

#include <onnx/shape_inference/implementation.h>

#include <fstream>

namespace opgen::onnx_import {

onnx::ModelProto read_onnx_with_shapes(const std::string &path, const std::map<std::string, int64_t> &dims) {
    std::ifstream in(path, std::ios::binary);
    user_check(in.good()) << "cannot read model '" << path << "'";
    onnx::ModelProto model;
    user_check(model.ParseFromIstream(&in)) << "model '" << path << "': not an ONNX model (protobuf parse failed)";
    user_check(model.has_graph() && model.graph().node_size() > 0)
        << "model '" << path << "': not an ONNX model (no graph or no nodes)";
    auto infer = [&](onnx::ModelProto &m) {
        try {
            onnx::ShapeInferenceOptions options(false, 1, true);
            onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), options);
        } catch (const std::exception &e) {
            std::string msg = e.what();
            while (!msg.empty() && (msg.back() == '\n' || msg.back() == '.')) msg.pop_back();
            user_check(false) << "model '" << path << "': shape inference failed: " << msg;
        }
    };
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
