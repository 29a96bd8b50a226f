// The reference: a direct interpreter of a ComputeDef, independent of Halide, used to check every
// kernel before its time counts. It evaluates on demand, one output point at a time, memoising
// intermediate (local) tensors, so that a large kernel can be checked at a sample of points without
// computing the whole output the slow way. It follows the language's rule that a statement computes
// in its tensor's type: float32 statements in double precision (more accurate than any kernel),
// integer ones with Halide's rounding-down division and wrap-around, float16 ones rounded after
// every operation.
#ifndef OPGEN_CORE_REFERENCE_H
#define OPGEN_CORE_REFERENCE_H

#include "core/ComputeDef.h"
#include "core/HostTensor.h"
#include "core/Shape.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace opgen {

// Fills every input of the op, in its own type, with seeded uniform values: floats in [-1, 1)
// (bf16 and f16 rounded to their type), u8 and i8 over their whole range (the signs a dot product
// must get right), i32 small integers in [-4, 4].
std::map<std::string, HostTensor> random_inputs(const ComputeDef &def, const BoundShape &shape,
                                                uint64_t seed);

class ReferenceEvaluator {
public:
    ReferenceEvaluator(const ComputeDef &def, const BoundShape &shape,
                       const std::map<std::string, HostTensor> &inputs);
    ~ReferenceEvaluator();
    // The value of the output (or any computed tensor) at `index` (outermost first). A UserError
    // when the op reads a tensor outside its extent; an InternalError for an input's name or an
    // index outside the tensor.
    double value(const std::string &tensor, const std::vector<int64_t> &index);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Result of comparing a kernel's output with the reference.
struct Verification {
    bool ok = false;
    int64_t points_checked = 0;
    double max_error = 0;       // max |got - want| / (1 + |want|)
    std::string first_mismatch; // "C[3, 17]: got 1.5, want 2.25"
};

// Reference values at a set of output points, computed once per task and checked against every
// candidate: every point when the op is small enough, else `sample_points` seeded points plus the
// output's corners and row ends (where tails and padding go wrong).
struct ReferenceSample {
    std::vector<int64_t> flat; // row-major offsets into the output
    std::vector<double> want;
    std::string output_name;
    std::vector<int64_t> dims;
};
ReferenceSample reference_sample(const ComputeDef &def, const BoundShape &shape,
                                 const std::map<std::string, HostTensor> &inputs,
                                 int64_t sample_points = 1500, uint64_t seed = 7);
Verification check_output(const ReferenceSample &sample, const HostTensor &output,
                          double tolerance = 1e-3);

// Integer outputs are compared exactly, whatever `tolerance` says.
// Compares `output` with the reference at every point when the op is small enough, else at
// `sample_points` seeded points plus the output's corners. `tolerance` bounds
// |got - want| / (1 + |want|).
Verification verify_output(const ComputeDef &def, const BoundShape &shape,
                           const std::map<std::string, HostTensor> &inputs,
                           const HostTensor &output, double tolerance = 1e-3,
                           int64_t sample_points = 1500, uint64_t seed = 7);

} // namespace opgen

#endif
