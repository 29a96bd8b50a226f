// lower_to_halide: a ComputeDef bound to a shape -> Halide Funcs, with no schedule.
//
// Each input becomes an ImageParam whose extents and strides are fixed to the shape (so the
// compiled code knows them as constants); a zero_pad input is wrapped in a constant-exterior
// boundary. Each statement becomes a Func; a reduction statement becomes two: `<T>_acc`, the
// accumulator with its init and update, and `<T>`, a pure copy, so that a schedule can keep the
// accumulator in registers (the cache_write of seed 004) while `<T>` writes memory.
// Halide's first dimension is the innermost, so every variable list here is reversed with respect
// to the op file (whose last index is contiguous). Every value of a statement is computed in its
// tensor's type (docs/op-language.md, "Types"); exp, log, tanh, sqrt and erf compute in float32 and
// convert back, so each Func has exactly its tensor's type.
// With fast math (a choice of the schedule point, fast_math), exp is Halide's fast_exp (relative
// error below 1e-5 where exp is a normal float, 0 where it underflows; tests/opgen/LowerTest.cpp)
// and a floating-point division by anything but a constant is a multiplication by the reciprocal
// (one more rounding), which Halide hoists out of the loops where the divisor does not change:
// softmax's / rsum[m], layernorm's / sqrt(variance[m] + eps) become one division per row; erf and
// tanh are fast_erf and fast_tanh (opgen/FastMath.h).
#ifndef OPGEN_LOWER_H
#define OPGEN_LOWER_H

#include "opgen/ComputeDef.h"
#include "opgen/Shape.h"

#include <Halide.h>

#include <map>
#include <string>
#include <vector>

namespace opgen {

struct LoweredStage {
    const Statement *statement = nullptr;
    Halide::Func func;                   // the tensor
    Halide::Func acc;                    // the accumulator of a reduction; undefined otherwise
    std::vector<Halide::Var> vars;       // innermost first
    std::vector<std::string> var_names;  // innermost first
    Halide::RDom rdom;                   // innermost first; undefined without a reduction
    std::vector<std::string> rvar_names; // innermost first

    bool is_reduction() const { return acc.defined(); }
};

struct LoweredOp {
    const ComputeDef *def = nullptr;
    BoundShape shape;
    std::vector<Halide::ImageParam> params; // one per input, in declaration order
    std::vector<std::string> param_names;
    std::map<std::string, Halide::Func> input_funcs; // what the statements read
    std::vector<LoweredStage> stages;                // statement order
    Halide::Func output;

    LoweredStage &stage(const std::string &tensor);
    const LoweredStage *find_stage(const std::string &tensor) const;
};

// `fast_math`: exp becomes Halide's fast_exp (a polynomial that vectorizes) instead of a scalar
// expf call per lane, and divisions multiplications by the reciprocal (above).
LoweredOp lower_to_halide(const ComputeDef &def, const BoundShape &shape, bool fast_math = false);

Halide::Type halide_type(DType t);

} // namespace opgen

#endif
