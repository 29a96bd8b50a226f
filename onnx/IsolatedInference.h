// ONNX's shape inference run in a child process (issue 39: ONNX files are untrusted input). libonnx
// 1.12's inference functions divide by attribute values and dereference types that a malformed
// file leaves out (a fuzzer found both in seconds); ModelCheck.h rules out the cases we know, and
// this turns any other crash of the library into one clear error instead of a dead compiler. The
// child (fork) infers and sends the model back serialized through a pipe; the parent waits.
#ifndef OPGEN_ONNX_ISOLATED_INFERENCE_H
#define OPGEN_ONNX_ISOLATED_INFERENCE_H

#include <onnx/onnx_pb.h>

#include <string>

namespace opgen::onnx_import {

// Replaces `model` with the model after ONNX's shape inference (strict, with data propagation).
// Raises UserError naming `path` when inference fails, crashes or dies.
void infer_shapes_isolated(onnx::ModelProto &model, const std::string &path);

}  // namespace opgen::onnx_import

#endif
