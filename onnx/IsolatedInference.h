// ONNX's shape inference run in a child process (docs/design.md §3.1: ONNX files are untrusted input). libonnx
// 1.12's inference functions divide by attribute values and dereference types that a malformed
// file leaves out (a fuzzer found both in seconds); ModelCheck.h rules out the cases we know, and
// this turns any other crash of the library into one clear error instead of a dead compiler. The
// child (fork) infers and sends back through a pipe what inference adds (the graph's value_info and
// its outputs' types), not the weights; the parent waits and takes them.
#ifndef OPGEN_ONNX_ISOLATED_INFERENCE_H
#define OPGEN_ONNX_ISOLATED_INFERENCE_H

#include <onnx/onnx_pb.h>

#include <string>

namespace opgen::onnx_import {

// Gives `model` what ONNX's shape inference (strict, with data propagation) infers: the graph's
// value_info and its outputs' types.
// Raises UserError naming `path` when inference fails, crashes or dies.
void infer_shapes_isolated(onnx::ModelProto &model, const std::string &path);

}  // namespace opgen::onnx_import

#endif
