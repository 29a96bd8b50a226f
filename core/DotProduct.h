// Dot-product blocking (docs/design.md §2.4): where the main reduction of an op is a widening product of
// narrow types summed into a wider accumulator, and the target has the instruction that sums a
// small group of such products inside each vector lane, the schedule reduces the innermost
// reduction loop (of exactly that group's extent) inside the lanes: the update is made atomic and
// that loop vectorized, so Halide sees a VectorReduce and its x86 code generator (CodeGen_X86.cpp,
// codegen_vector_reduce) emits the instruction.
//
//   u8 x s8 -> i32, groups of 4: vpdpbusd (AVX512-VNNI; Halide 14 with avx512_sapphirerapids)
//   bf16 x bf16 -> f32, groups of 2: vdpbf16ps (AVX512-BF16, the same Halide feature)
//
// The op states the group in its reduction (`sum(kb: K/4, kk: 4)`) and reads the right-hand
// operand pre-packed so that the group is contiguous in memory (B[kb, n, kk]: one 64-byte row per
// 16 lanes), the layout these instructions read.
#ifndef OPGEN_CORE_DOT_PRODUCT_H
#define OPGEN_CORE_DOT_PRODUCT_H

#include "core/ComputeDef.h"
#include "core/Schedule.h"
#include "core/Shape.h"
#include "core/Target.h"

namespace opgen {

// The dot-product group of `def`'s main reduction on `target` at `shape`: 4 for a sum into i32 of
// products of a u8 and an i8 read where the target has avx512_vnni, 2 for a sum into f32 of
// products of two bf16 reads where it has avx512_bf16, each when the innermost reduction loop
// has exactly that extent and both reads move with it; 0 otherwise.
int dot_product_group(const ComputeDef &def, const BoundShape &shape, const Target &target);
// The same group from the types alone, at any shape: what the op's space can use on `target`.
int dot_product_types_group(const ComputeDef &def, const Target &target);

// The starting point of a dot-product GEMM (heuristic_point's): `p` (vectorized on its innermost
// axis, reductions whole) gets dot_product set and a register tile of 4 rows x 4 vectors (16
// accumulators, 4 operand vectors and a broadcast in 32 registers, as oneDNN's VNNI kernels hold
// them) inside cache tiles of 64 rows x 4 register tiles; nothing is packed (the grouped operand
// already is). Returns false, `p` unchanged, where dot_product_group is 0.
bool dot_product_point(const ComputeDef &def, const BoundShape &shape, const Target &target, SchedulePoint &p);

}  // namespace opgen

#endif
