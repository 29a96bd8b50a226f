// Shape-generic kernels: one compiled kernel serves every shape of its op (docs/design.md §2.9).
// The op is lowered with symbolic sizes (lower_to_halide_generic), the schedule of one tuned shape
// is applied as it stands (its split factors stay constants, except a cache tile that was the whole
// extent of its axis at the tuned shape: that tile is the extent at any shape, so the tiles follow
// the shape, unless an accumulator's unrolled loops would then span it) and every split is then
// guarded (TailStrategy::GuardWithIf), since an arbitrary shape divides no factor and may be
// smaller than one: no loop reads or writes outside its buffers. Three steps keep the symbolic
// sizes from costing where the exact kernel's constants cost nothing: a convolution's weights read
// by broadcast go through a panel with constant strides (codegen/GenericWeights.h), a zero-padded
// input is copied into a panel with its border (generic_point), and a statement placed in the
// output's tiles keeps its buffer of dynamic size on Halide's pseudostack, allocated once instead
// of at every tile. The parameters without a default are symbolic (matmul's M, N, K; conv2d_nchw's
// N, C, H, W, F); those with one (a kernel size KH, a channel block cb) and the attributes stay
// fixed at the tuned shape's values, so a 3x3 convolution keeps its unrolled 3x3 window.
//
// Nothing unverified is stored: checked_generic checks the symbolic pipeline (JIT-compiled, the same
// Funcs and schedule as the code) against the reference at several shapes with tails and sizes
// below the factors, every specialization run, before the code is compiled (generic_check_shapes).
// The code that ships is checked and compiled by a worker process of its own, whose LLVM runs
// with generic code's options (codegen/GenericBuild.h).
#ifndef OPGEN_CODEGEN_GENERIC_CODE_H
#define OPGEN_CODEGEN_GENERIC_CODE_H

#include "store/KernelCode.h"
#include "core/ComputeDef.h"
#include "core/Lower.h"
#include "core/Schedule.h"
#include "core/Shape.h"
#include "core/Target.h"

#include <string>
#include <vector>

namespace opgen {

// The parameters a generic kernel of `def` takes at run time: those without a default, in
// declaration order. Empty when the op has none (then it has no generic kernel).
std::vector<std::string> generic_symbols(const ComputeDef &def);

// The generic signature (runtime/GenericSignature.h) of `def` with the non-symbolic values of `shape`:
// each tensor's dims as expressions of the symbols, lets inlined and constants folded.
std::string generic_signature(const ComputeDef &def, const BoundShape &shape);

// The values the generic kernel from `shape` is compiled for: every parameter and attribute that
// is not a symbol, names sorted ("KH=3,KW=3,dilation=1,pad=1,stride=1"; "" for matmul).
std::string generic_fixed_values(const ComputeDef &def, const BoundShape &shape);

// Each tensor's dims (inputs in declaration order, then the output) as C expressions of int64_t
// variables named `prefix` + symbol, with opgen_floordiv, opgen_max and opgen_min for Halide's
// division, max and min (for `opgen library`'s dispatch code to define).
std::vector<std::vector<std::string>> generic_dims_c(const ComputeDef &def, const BoundShape &shape,
                                                    const std::string &prefix);

// The schedule a generic kernel applies for `point` (tuned at `shape`): the same, with every input
// the op reads past its edges at `shape` (a zero-padded input where the padding is not 0) packed at
// the cache tile when the point does not pack it. The exact kernel's loop partitioning splits the
// padded window's loops into a border and a clean steady state; with symbolic sizes Halide
// partitions the outer tile loops instead, their steady state is empty where one tile spans the
// plane, and the inner loops keep a select per load. A panel copied with its zero border keeps
// the selects in the copy (measured on an Intel Xeon host: 1.79-1.95x the exact kernel before,
// 1.17-1.31x after, C=32 F=48 40x40; but C=32 F=32 28x28 went 1.19x -> 1.56x, the copy costing
// more than the selects there). An AMX point (core/AmxTile.h) becomes the same tiling without
// AMX tiles, which need whole tiles that a symbolic shape does not promise.
SchedulePoint generic_point(const ComputeDef &def, const BoundShape &shape, const SchedulePoint &point);

// Whether the Halide loop dimension `dim` is the loop `loop`: a stage's loop names end in the
// split's own name ("x.x__t.x__r" is loop "x__r" of variable x).
bool names_loop(const std::string &dim, const std::string &loop);

// Every split of every Func the scheduled `op` computes, wrappers included, becomes GuardWithIf.
void guard_tails(LoweredOp &op);

// `def` lowered with symbolic sizes, generic_point of `point` (tuned at `shape`) applied, whole-extent tiles made
// to follow the extent, weights in constant-stride panels, tile buffers on the pseudostack, tails
// guarded; where an extent may be below its cache tile, the tile is min(tile, extent) (axes no
// accumulator in the output's tiles spans), so guarded loops stop at the extent.
// With `spanned`, the tiles of the axes that an accumulator computed in the output's tiles spans
// follow the extent (a whole-extent tile) or are balanced over it (clamp_tiles_except), so the
// accumulator covers the rows there are; without (the default), those axes keep their constant
// tiles, which an accumulator whose loops over them are unrolled whole needs (a convolution's
// channel block). checked_generic tries `spanned` first.
LoweredOp lower_generic(const ComputeDef &def, const BoundShape &shape, const SchedulePoint &point,
                        const Target &target, bool spanned = false);

// The shapes a generic kernel from `shape` is checked at: every symbol 1; every symbol about half
// of its tuned value, odd; every symbol its tuned value plus 3 (a tail past every factor); and each
// symbol alone at one of the last two among the others at the other, so that every specialization
// runs. Duplicates and shapes that do not bind (a let below 1) are left out.
std::vector<BoundShape> generic_check_shapes(const ComputeDef &def, const BoundShape &shape);

// Runs the scheduled generic `op` (JIT) at each shape and compares it with the reference. Returns
// "" when all match, else the first failure ("at M=1,N=1,K=1: C[0, 0]: got 2, want 1").
std::string verify_generic(LoweredOp &op, const Target &target, const std::vector<BoundShape> &shapes);

// lower_generic, after checking the result at generic_check_shapes against the reference;
// `checked` gets those shapes ("K=1,M=1,N=1;..."). Raises UserError when the op has no symbolic
// parameter, Halide cannot compile it or a check fails.
LoweredOp checked_generic(const ComputeDef &def, const BoundShape &shape, const SchedulePoint &point,
                          const Target &target, std::string &checked);

// The fields of `def`'s generic code from the schedule tuned at `shape` (`schedule_json`) that
// describe it: function, signature, schedule, symbols, fixed values and defaults; no bytes yet
// (link_kernel_code, codegen/CompiledCode.h, adds them).
db::KernelCode generic_code_header(const ComputeDef &def, const BoundShape &shape, const std::string &schedule_json);

}  // namespace opgen

#endif
