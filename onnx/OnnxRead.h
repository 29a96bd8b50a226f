// Reading an ONNX file for opgen_onnx's own use (private to the library: it exposes protobuf):
// parse, check that there is a graph, run ONNX's shape inference. Shared by `opgen extract`
// (OnnxExtract) and `opgen compile` (ModelGraph).
#ifndef OPGEN_ONNX_ONNX_READ_H
#define OPGEN_ONNX_ONNX_READ_H

#include "onnx/Npy.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <string>

namespace opgen::onnx_import {

// The model at `path` with inferred value shapes: the inputs' symbolic dimensions take their
// values from `dims`, the inputs in `fixed` become constants, and shape sub-graphs are folded
// into constants (ShapeFold.h). Raises UserError naming the file when it cannot be read, is not
// an ONNX model (no graph or no nodes), or fails shape inference, and naming the input when a
// fixed one is not an input of the model or its value's type or dims differ from the input's.
onnx::ModelProto read_onnx_with_shapes(const std::string &path, const std::map<std::string, int64_t> &dims = {},
                                       const FixedInputs &fixed = {});

// The default-domain opset the model imports; 0 when none.
int64_t onnx_opset(const onnx::ModelProto &model);

}  // namespace opgen::onnx_import

#endif
