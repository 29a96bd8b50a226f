// Dynamic dimensions (docs/design.md §3.6): `opgen compile --dim seq=1..512` builds one library
// that takes seq's value at call time. The model is read and partitioned at several values of its
// ranged dims (probes); each must give the same kernels, ops and tensors, and every size of every
// kernel (its op's parameters, its tensors' dims) must be one affine function of the ranged dims,
// the same at every probe. Those functions are what the program evaluates at call time. The library
// holds, per kernel, the kernels tuned at the specialized values and, for a kernel whose shape
// varies, its op's shape-generic kernel (codegen/GenericCode.h) for every other value; the buffer
// plan and the weights are those of the largest values, which every smaller value fits (no size
// shrinks as a dim grows).
#ifndef OPGEN_ONNX_DYNAMIC_DIMS_H
#define OPGEN_ONNX_DYNAMIC_DIMS_H

#include "onnx/ModelCompile.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace opgen::onnx_import {

// A symbolic dimension given as a range: its values lo..hi, and those compiled with kernels tuned
// for them (sorted, within the range, hi among them).
struct DimRange {
    std::string name;
    int64_t lo = 0, hi = 0;
    std::vector<int64_t> specialized;
};

// "seq=1..512" as a range specialized at hi alone; nullopt when `text` holds no "..".
// UserError when it is malformed, lo < 1 or lo >= hi.
std::optional<DimRange> parse_dim_range(const std::string &text);

// Adds "seq=16,64,128" (`--specialize`) to the range it names; UserError when no range has that
// name or a value lies outside it.
void add_specializations(std::vector<DimRange> &ranges, const std::string &text);

// A size as a function of the ranged dims: base + sum of per[i] * value[i].
struct AffineSize {
    int64_t base = 0;
    std::vector<int64_t> per;  // one per range; empty for a constant
    int64_t at(const std::vector<int64_t> &values) const;
    bool varies() const;
};

struct DynamicModel {
    std::vector<DimRange> ranges;
    CompiledModel top;  // every range at its hi: the model the plan and the weights are made for
    std::vector<std::vector<int64_t>> points;  // the specializations: one value per range
    std::vector<CompiledModel> specialized;    // the model at each point (no weights' elements)
    // Per kernel, per op tensor in call order (inputs, then the output), per dim (outermost first).
    std::vector<std::vector<std::vector<AffineSize>>> arg_dims;
    std::vector<bool> varies;  // per kernel: whether its shape depends on a range
    std::vector<std::set<std::string>> varying;  // per kernel: its op's parameters that do
    std::map<std::string, std::vector<AffineSize>> io_dims;  // the graph's inputs and outputs
};

// Compiles the model at the ranges' probes and specializations (`fixed` dims as for compile_model,
// the other arguments too) and derives every size's affine form. UserError naming the kernel or
// tensor when the model's graph differs between two values, a size is not affine in the ranges or
// shrinks as one grows, or a kernel whose shape varies has an op without that size as a
// parameter (its generic kernel could not take it).
DynamicModel compile_dynamic_model(const std::string &path, const std::map<std::string, int64_t> &fixed,
                                   const std::vector<DimRange> &ranges, const OpLibrary &lib, int64_t max_bytes,
                                   bool blocked, const FixedInputs &fixed_inputs);

// The text of kernel k's op with every parameter that does not vary given its value as a default,
// so that its generic kernel takes only the varying ones at run time and keeps the others'
// constants (a dense layer's N and K).
std::string generic_op_text(const DynamicModel &d, size_t k);

}  // namespace opgen::onnx_import

#endif
