// A compiled model evaluated kernel by kernel with the op language's reference interpreter
// (core/Reference.h): every subgraph's op, bundled or generated, at its bound shape, reading the
// model's weights and the tensors earlier kernels produced, views sharing their source's buffer.
// It checks the partitioning itself: when its outputs match ONNX Runtime's, the fused subgraphs
// and the generated op texts compute the model. An interpreter, so for small models only.
#ifndef OPGEN_ONNX_MODEL_REFERENCE_H
#define OPGEN_ONNX_MODEL_REFERENCE_H

#include "core/Reference.h"
#include "onnx/ModelCompile.h"

#include <map>
#include <string>

namespace opgen::onnx_import {

// The model's outputs, by name, for `inputs` (one per graph input). `m` must have been compiled
// with its weights. Raises UserError when an input is missing or has the wrong number of
// elements.
std::map<std::string, HostTensor> evaluate_compiled_model(const CompiledModel &m,
                                                          const std::map<std::string, HostTensor> &inputs);

}  // namespace opgen::onnx_import

#endif
