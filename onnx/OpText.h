// What every generated op of the model compiler shares (docs/design.md §3.2, §6.4): the reason a
// node cannot be placed, and the small text helpers that write op-language source. The partitioner
// (Partition.cpp) and the operator families under onnx/ops/ build op texts with them.
#ifndef OPGEN_ONNX_OP_TEXT_H
#define OPGEN_ONNX_OP_TEXT_H

#include "onnx/ModelGraph.h"
#include "onnx/Partition.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace opgen::onnx_import {

using Dims = std::vector<int64_t>;

// A node the partitioner cannot place; carries the reason shown to the user. Thrown by the
// operator families and caught by the partitioner, which lists every such node in one error.
struct Unsupported {
    std::string reason;
};

// The first line of every generated op.
extern const char *const kGeneratedHeader;

std::string join(const std::vector<std::string> &parts, const std::string &sep);

// The shortest decimal text that reads back as the same float32 (ONNX's attributes and
// constants are float32): 1e-12, not 9.99999996e-13.
std::string literal(double v);

// The epilogue of a channel-blocked convolution's local Z (ChannelBlocking's steps "bias", "add",
// "relu", "relu6", in order), read at index list `at` ("fo, ..., fi"; bias is [FB, fb], the
// residual R indexed as Z): its doc phrase (", then adds a per-channel bias, ...") and Y's value.
std::string blocked_epilogue_doc(const std::vector<std::string> &steps);
std::string blocked_epilogue(const std::string &at, const std::vector<std::string> &steps);

// "0213" for the permutation {0, 2, 1, 3}.
std::string digits(const Dims &perm);

// The product of d[from..to).
int64_t product(const Dims &d, size_t from, size_t to);

// "M=128,N=768" from {{"M", 128}, {"N", 768}}.
std::string shape_text(const std::vector<std::pair<std::string, int64_t>> &values);

// Axis `axis` of a rank-`rank` tensor, negative counting from the end; Unsupported when out of
// range.
int64_t normalize_axis(int64_t axis, int64_t rank);

// Throws Unsupported unless tensor `t` of `g` is float32.
void require_float(const ModelGraph &g, const std::string &t);

// The op language's type name of tensor `t` ("f32", "i64", "u8" for bool: GraphTensor::dtype);
// Unsupported for a type no kernel computes.
std::string type_name(const ModelGraph &g, const std::string &t);

// Whether every tensor of `tensors` is float32.
bool all_float(const ModelGraph &g, const std::vector<std::string> &tensors);

// "" when every tensor of `tensors` is float32, else "_" and their type names in order
// ("_i64i64u8"): generated ops of the same pattern over other types get other names.
std::string type_suffix(const ModelGraph &g, const std::vector<std::string> &tensors);

// The values of a constant (a weight of at most 64 elements), or Unsupported naming `what`
// when they are computed at run time.
std::vector<double> constant_values(const ModelGraph &g, const std::string &t,
                                    const std::string &what);

// A generated kernel of kind `kind`: op `name` with `text`, bound at `shape`, reading and writing
// the graph tensors `args` (op tensor -> graph tensor, inputs first, the output last).
SubgraphKernel generated_kernel(const std::string &kind, const std::string &name,
                                const std::string &text, const std::string &shape,
                                std::vector<std::pair<std::string, std::string>> args);

// Names D0..Dn-1 and variables i0..in-1 for a rank-n tensor, with the shape values of `d`.
struct AxisNames {
    std::vector<std::string> dims, vars;
    std::vector<std::pair<std::string, int64_t>> shape;
};
AxisNames axis_names(const Dims &d);

} // namespace opgen::onnx_import

#endif
