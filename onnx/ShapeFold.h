// Shape inference from the graph's inputs, with the shape sub-graphs folded (docs/design.md §3.1).
// Private to opgen_onnx (it exposes protobuf), like OnnxRead.h.
//
// Exporters compute shapes in the graph: Shape -> Gather -> Concat -> Reshape, ConstantOfShape,
// Range, Size. With every input dimension known, those values are constants: each node whose
// inputs are all constants (or a Shape or Size of a tensor whose shape is known) is evaluated
// here and replaced by an initializer, and shape inference runs again, until nothing more folds.
// Symbolic dimensions of the inputs take the values given; the shapes an exporter wrote for
// intermediates and outputs are dropped and inferred again, so only the inputs' dimensions ever
// need a value.
#ifndef OPGEN_ONNX_SHAPE_FOLD_H
#define OPGEN_ONNX_SHAPE_FOLD_H

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace opgen::onnx_import {

// Gives the inputs' symbolic dimensions their values from `dims`, forgets the shapes written for
// other values, and then alternates `infer` (ONNX shape inference on the model) with folding the
// constant nodes until no node folds. Constant nodes become initializers too. Nodes that cannot be
// evaluated stay as they are (the partitioner refuses them if it must).
void infer_and_fold(onnx::ModelProto &model, const std::map<std::string, int64_t> &dims,
                    const std::function<void(onnx::ModelProto &)> &infer);

} // namespace opgen::onnx_import

#endif
