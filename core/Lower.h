// lower_to_halide: a ComputeDef bound to a shape -> Halide Funcs, with no schedule.
//
// Each input becomes an ImageParam whose extents and strides are fixed to the shape (so the
// compiled code knows them as constants); a zero_pad input is wrapped in a constant-exterior
// boundary. Each statement becomes a Func; a reduction statement becomes two: `<T>_acc`, the
// accumulator with its init and update, and `<T>`, a pure copy, so that a schedule can keep the
// accumulator in registers (a cache_write, docs/design.md §7.1) while `<T>` writes memory.
// Halide's first dimension is the innermost, so every variable list here is reversed with respect
// to the op file (whose last index is contiguous). Every value of a statement is computed in its
// tensor's type (docs/op-language.md, "Types"); exp, log, tanh, sqrt and erf compute in float32 and
// convert back, so each Func has exactly its tensor's type.
// With fast math (a choice of the schedule point, fast_math), exp is Halide's fast_exp (relative
// error below 1e-5 where exp is a normal float, 0 where it underflows; tests/core/LowerTest.cpp)
// and a floating-point division by anything but a constant is a multiplication by the reciprocal
// (one more rounding), which Halide hoists out of the loops where the divisor does not change:
// softmax's / rsum[m], layernorm's / sqrt(variance[m] + eps) become one division per row; erf and
// tanh are fast_erf and fast_tanh (core/FastMath.h).
#ifndef OPGEN_CORE_LOWER_H
#define OPGEN_CORE_LOWER_H

#include "core/ComputeDef.h"
#include "core/Shape.h"

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
    std::vector<std::string> rvar_idents; // as printed in generated source (printed_rvar), innermost first

    bool is_reduction() const { return acc.defined(); }
};

// The C++ identifier generated source gives reduction variable `var` of statement `s`: its name,
// or "<tensor>_<name>" where the name is also an index variable of some statement or another
// statement's reduction variable (softmax's `n` is both), which one scope cannot declare twice.
std::string printed_rvar(const ComputeDef &def, const Statement &s, const std::string &var);

struct LoweredOp {
    const ComputeDef *def = nullptr;
    BoundShape shape;
    std::vector<Halide::ImageParam> params; // one per input, in declaration order
    std::vector<std::string> param_names;
    std::map<std::string, Halide::Func> input_funcs; // what the statements read
    // Strided reads without a window (core/Gather.h), exact lowering only: per access, the Func
    // over its statement's variables it reads through, and per dimension of the input (outermost
    // first) the variable its index moves with ("" where constant).
    struct GatheredRead {
        Halide::Func func;
        std::vector<std::string> dims;
    };
    std::map<const ExprNode *, GatheredRead> gathered_reads;
    std::vector<LoweredStage> stages;                // statement order
    Halide::Func output;
    // Generic lowering only (lower_to_halide_generic): the symbolic parameters and every let, as
    // Halide expressions of the input buffers' extents. Empty when every size is a constant.
    std::map<std::string, Halide::Expr> symbols;
    // Generic lowering with `full_tiles` only: per output variable named there, "the output's
    // extent along it covers its tile" (extent >= the tile). Where all of them hold, the inputs
    // are read unclamped (see lower_to_halide_generic); a specialization on exactly these
    // expressions (codegen/GenericCode.cpp) lets the simplifier drop the clamps there.
    std::map<std::string, Halide::Expr> full_tile;
    // Set by apply_schedule for a point with amx_tile: the pipeline needs widen_amx_reduction
    // (core/AmxLowering.h, add_amx_lowering) and the process AMX permission (base/AmxPermission.h).
    bool amx_tile = false;

    LoweredStage &stage(const std::string &tensor);
    // The gathered read of input `tensor` (above), or null; the Func the statements read it
    // through: its gather, else input_funcs'.
    const GatheredRead *gathered_read(const std::string &tensor) const;
    Halide::Func read_func(const std::string &tensor) const;
    const LoweredStage *find_stage(const std::string &tensor) const;
};

// `fast_math`: exp becomes Halide's fast_exp (a polynomial that vectorizes) instead of a scalar
// expf call per lane, and divisions multiplications by the reciprocal (above).
LoweredOp lower_to_halide(const ComputeDef &def, const BoundShape &shape, bool fast_math = false);

// The symbolic ("generic") lowering: the same Funcs, but the parameters named in `symbolic` are
// not constants: each is the extent of the first input dimension the op declares with exactly that
// parameter (A: f32[M, K] gives M and K), read from the buffer at run time, and every let, index,
// reduction extent and output extent is a Halide expression of them. The other parameters and
// attributes keep `shape`'s values, and `shape` stays the op's shape for the schedule's choices
// (so a schedule tuned at `shape` applies unchanged; its split factors are constants). An input
// the op does not pad reads as its repeated edge past its end, so that a tile computed whole at a
// ragged edge (codegen/GenericCode.h) reads nothing outside the buffer. Every
// buffer is dense row-major; an input dimension not naming a parameter of its own must have the
// extent its declaration gives, and the output the extents of its shape (Halide checks both at
// each call). Raises UserError naming the op and the parameter when a symbolic parameter is no
// input's extent.
//
// `full_tiles` (output variable -> tile) names the tiles a schedule keeps whole where the output
// covers them (ShiftInwards, codegen/GenericCode.cpp): where every such extent covers its tile, an
// unpadded input is read unclamped, promised in bounds (each read of such a schedule is), since
// clamped reads at a shifted last tile become gathers; elsewhere it reads its repeated edge.
LoweredOp lower_to_halide_generic(const ComputeDef &def, const BoundShape &shape,
                                  const std::vector<std::string> &symbolic, bool fast_math = false,
                                  const std::map<std::string, int64_t> &full_tiles = {});

Halide::Type halide_type(DType t);

} // namespace opgen

#endif
