// NumPy's .npy format for float32 arrays in C order: how whole-model inputs and outputs travel
// between opgen, the ONNX Runtime driver (scripts/ort/run.js) and the numpy reference.
#ifndef OPGEN_ONNX_NPY_H
#define OPGEN_ONNX_NPY_H

#include "core/Reference.h"

#include <string>

namespace opgen::onnx_import {

// Reads a .npy file of float32 ('<f4'), C order, version 1 to 3. Raises UserError naming the file
// when it cannot be read or holds another type or order.
HostTensor read_npy(const std::string &path);

// The bytes of a version 1 .npy file holding `t` as float32.
std::string npy_bytes(const HostTensor &t);

}  // namespace opgen::onnx_import

#endif
