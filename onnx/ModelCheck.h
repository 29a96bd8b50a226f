// The checks a model file passes before anything reads it by index or infers its shapes (docs/design.md §3.1:
// ONNX files are untrusted input):
// - every node reads only tensors that a graph input, an initializer or an earlier node defines
//   (ONNX's topological order; a cycle breaks it);
// - every node of a known operator has the inputs and outputs its schema allows at the model's
//   opset, with its required inputs named;
// - the attribute values ONNX's shape inference divides or loops by (strides, dilations, kernel
//   shapes, group counts: positive; pads: not negative), which libonnx 1.12 does not check itself
//   and would crash on.
#ifndef OPGEN_ONNX_MODEL_CHECK_H
#define OPGEN_ONNX_MODEL_CHECK_H

#include <onnx/onnx_pb.h>

#include <string>

namespace opgen::onnx_import {

// Raises UserError naming the file and the first problem found.
void check_model_file(const onnx::ModelProto &model, const std::string &path);

}  // namespace opgen::onnx_import

#endif
