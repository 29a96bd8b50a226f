// The weights file of a deployed model (docs/design.md §7.4: the weights beside the library): every
// weight a kernel reads, at the offset the buffer plan gave it, so that loading is one read into
// one aligned buffer and nothing else of the model file is kept (docs/design.md §7.5). No kernel
// needs a layout other than ONNX's row-major one today, so the bytes are the model's own.
//
// Format (little-endian): 64 bytes of header, "OPGENWT1", the payload's size in bytes (uint64),
// the payload's FNV-1a 64-bit hash (uint64), zeros; then the payload.
#ifndef OPGEN_ONNX_MODEL_WEIGHTS_H
#define OPGEN_ONNX_MODEL_WEIGHTS_H

#include "onnx/BufferPlan.h"
#include "onnx/ModelCompile.h"

#include <cstdint>
#include <string>

namespace opgen::onnx_import {

constexpr int64_t weights_header_bytes = 64;

// FNV-1a, 64 bits, over `size` bytes.
uint64_t fnv1a64(const void *data, size_t size);

// The weights file of `m` laid out as `plan` says. `m` must have been read with its weights;
// raises UserError naming the weight whose elements are missing otherwise.
std::string weights_file_bytes(const CompiledModel &m, const BufferPlan &plan);

}  // namespace opgen::onnx_import

#endif
