// NumPy's .npy format for arrays in C order: how whole-model inputs and outputs travel
// between opgen, the ONNX Runtime driver (scripts/ort/run.js) and the numpy reference.
#ifndef OPGEN_ONNX_NPY_H
#define OPGEN_ONNX_NPY_H

#include "core/Reference.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace opgen::onnx_import {

// An array as a .npy file holds it: its ONNX element type (1 float32, 2 uint8, 3 int8, 6 int32,
// 7 int64, 9 bool), dims and the elements' bytes in C order.
struct NpyArray {
    int onnx_type = 1;
    std::vector<int64_t> dims;
    std::string bytes;
};

// Graph inputs given values at compile time (`opgen compile --fix-input NAME=FILE.npy`): each
// becomes a constant of the model (an initializer), no longer an input, so the shapes it decides
// (a Reshape's shape, a Slice's starts, a reduction's axes) are known and folded (OnnxRead.h).
using FixedInputs = std::map<std::string, NpyArray>;

// The op language's type that holds ONNX element type `onnx_type` with the same bytes (bool and
// uint8 as u8); nullopt for the types no kernel computes.
std::optional<DType> onnx_element_dtype(int onnx_type);

// Reads a .npy file of one of NpyArray's types, C order, version 1 to 3. Raises UserError naming
// the file when it cannot be read or holds another type or order.
NpyArray read_npy_array(const std::string &path);

// Reads a .npy file of float32 ('<f4'), C order; UserError for another type.
HostTensor read_npy(const std::string &path);

// The array as a host tensor of the op language's type that holds it (bool as u8).
HostTensor host_tensor(const NpyArray &a);

// The bytes of a version 1 .npy file holding `t` in its type (u8 as uint8).
std::string npy_bytes(const HostTensor &t);

}  // namespace opgen::onnx_import

#endif
