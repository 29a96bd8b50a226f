#include "onnx/OnnxRead.h"

#include "base/Error.h"
#include "onnx/IsolatedInference.h"
#include "onnx/ModelCheck.h"
#include "onnx/ShapeFold.h"

#include <fstream>

namespace opgen::onnx_import {

onnx::ModelProto read_onnx_with_shapes(const std::string &path, const std::map<std::string, int64_t> &dims) {
    std::ifstream in(path, std::ios::binary);
    user_check(in.good()) << "cannot read model '" << path << "'";
    onnx::ModelProto model;
    user_check(model.ParseFromIstream(&in)) << "model '" << path << "': not an ONNX model (protobuf parse failed)";
    user_check(model.has_graph() && model.graph().node_size() > 0)
        << "model '" << path << "': not an ONNX model (no graph or no nodes)";
    check_model_file(model, path);
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
