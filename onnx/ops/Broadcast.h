// Elementwise operators with numpy broadcasting over any number of operands (docs/design.md §3.2): the
// variadic Sum, Mean, Max and Min; PRelu; Pow by a tensor exponent; Clip with bounds computed at
// run time; Mod (fmod); and the unary Floor, Ceil, Round and Sign written with the op language's
// casts. One generated op over the output's axes D0..Dr-1 reads each operand at its own axes and
// at index 0 where it stretches (a scalar is read as a one-element tensor).
#ifndef OPGEN_ONNX_OPS_BROADCAST_H
#define OPGEN_ONNX_OPS_BROADCAST_H

#include "onnx/ModelGraph.h"
#include "onnx/Partition.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace opgen::onnx_import {

using Dims = std::vector<int64_t>;

// The expression of an output element from the operands' reads, in operand order.
using Combine = std::function<std::string(const std::vector<std::string> &reads)>;

// The kernel writing `output` = combine(inputs...) with numpy broadcasting. Its op is named
// `base` + "_b" + each operand's pattern over the output's axes ("f": its own extent, "1":
// stretched or absent), so one op serves every shape of that pattern; the first two operands are
// A and B, the output C. Throws Unsupported for a non-float32 operand, one of higher rank than the
// output or extents that do not broadcast.
// `read_as` reads an operand under other dimensions of as many elements (ONNX's legacy
// broadcasts).
// `stages` are locals of the output's shape computed first, each in its own type (so a float
// formula can feed an integer output, rounded in between): a stage's combine sees the operands'
// reads and then the earlier stages', `combine` all of them.
struct BroadcastStage {
    std::string name, type;
    Combine combine;
};
SubgraphKernel broadcast_kernel(const ModelGraph &g, const std::vector<std::string> &inputs,
                                const std::string &output, const std::string &base,
                                const std::string &what, const Combine &combine,
                                const std::map<std::string, Dims> &read_as = {},
                                const std::vector<BroadcastStage> &stages = {});

// Whether node `n` is this family's: its operator, and for Pow and Clip operands computed at run
// time (the partitioner writes constant exponents and bounds into the op text instead).
bool is_broadcast(const ModelGraph &g, const GraphNode &n);

// The kernel computing node `n`; throws Unsupported as broadcast_kernel does, and for Mod of
// integers (fmod 0).
std::vector<SubgraphKernel> broadcast_kernels(const ModelGraph &g, const GraphNode &n);

} // namespace opgen::onnx_import

#endif
