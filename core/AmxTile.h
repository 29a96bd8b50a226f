// AMX accumulator tiles (docs/design.md §2.4): where the target has amx_int8 and the main reduction
// is an int8 dot product (core/DotProduct.h, u8 x s8 -> i32 in groups of 4) over a two-axis output
// whose extents are multiples of 16, the space also offers each tiling whose register tile is
// 16 rows x 16 columns (one vector of i32) with the reduction unblocked as an AMX point: the
// accumulator is one AMX tile (16 rows of 64 bytes) instead of 16 vector registers.
//
// Halide 14 lowers it (src/ExtractTileOperations.cpp, the schedule of
// test/correctness/tiled_matmul.cpp) when the accumulator Func is stored in MemoryType::AMXTile, its
// init and its update are vectorized over the whole 16 x 16 tile, the update atomic with the group
// loop vectorized innermost (a VectorReduce of 4), and its only reader copies the tile whole
// (tile_store). Its matcher takes one group per instruction: each tdpbusd sums K = 4 bytes (A as 16
// rows x 4 bytes, B as one row of 64), which costs the instruction's full 16 cycles and caps the
// kernel at a sixteenth of the AMX peak, below vpdpbusd's (measured on this project's Sapphire
// Rapids host: 5.7 ns per tdpbusd at K = 4 and at K = 64). So the pipeline also runs
// widen_amx_reduction, a lowering pass that turns G consecutive steps of that loop into one
// instruction of K = 4G bytes (G up to 16: A as 16 rows x 64 bytes, B as 16 rows of its packed
// [K/4][N][4] layout), the AMX instruction's full depth. Halide 15 matches the wide form itself.
//
// Halide 14 also gives an accumulator Func one tile allocation, so each tdpbusd loads its own A and
// B tiles: jam_amx_tiles, a second pass, sums two neighbouring register tiles in one loop, which
// load the operand they share once (3 tile loads per 2 tdpbusd instead of 4).
//
// Linux gives a process the AMX register state only on request: request_amx_permission
// (base/AmxPermission.h) runs before any kernel of such a point is called.
#ifndef OPGEN_CORE_AMX_TILE_H
#define OPGEN_CORE_AMX_TILE_H

#include "base/TilingTable.h"
#include "core/ComputeDef.h"
#include "core/Schedule.h"
#include "core/Shape.h"
#include "core/Target.h"

#include <Halide.h>

namespace opgen {

// An AMX accumulator tile: 16 rows of 16 i32 (64 bytes), as the runtime's refit knows it too.
constexpr int kAmxTileRows = int(tiling::kAmxTileRows);
constexpr int kAmxTileColumns = int(tiling::kAmxTileColumns);

// Whether the space of `def` at `shape` on `target` offers AMX points: the target has amx_int8,
// the main reduction is a fusable u8 x s8 -> i32 dot product in groups of 4 (dot_product_group),
// and the output has two axes whose extents are multiples of the tile's rows and columns.
bool amx_tile_offered(const ComputeDef &def, const BoundShape &shape, const Target &target);

// Whether `p`'s register tile is an AMX tile's: vectors of 16 on the innermost axis, which is the
// vectorized one, and a register tile of 16 x 16 on its two axes. (The reduction must also be
// unblocked: the accumulator lives per register tile.)
bool amx_register_tile(const SchedulePoint &p);

// The starting point of an AMX GEMM (heuristic_point's where amx_tile_offered): `p` with a register
// tile of 16 x 16, cache tiles of 64 rows x 64 columns (clamped to the shape), the reduction
// unblocked, nothing packed, amx_tile set. Returns false, `p` unchanged, where not offered.
bool amx_tile_point(const ComputeDef &def, const BoundShape &shape, const Target &target, SchedulePoint &p);

// widen_amx_reduction, a lowering pass run after Halide's own: every serial loop whose body is one
// tdpbusd of K = 4 bytes on tiles loaded at addresses that step by 4 bytes (A) and by one row (B)
// per iteration, with a trip count divisible by G in {16, 8, 4, 2} (the largest), becomes a loop of
// a G-th of the trips of one tdpbusd of K = 4G bytes: the same sums per element, exact in i32. Any
// other loop is left as it is (still correct, at K = 4).
// jam_amx_tiles, run after it: a serial loop of an even trip count whose body is one accumulator
// tile zeroed, summed by such a loop and copied out becomes a loop of half the trips over two
// tiles summed in one loop. Any other loop is left as it is.

// Adds widen_amx_reduction and jam_amx_tiles to `pipeline` (which then owns them) when `op` was
// scheduled with an AMX point (LoweredOp::amx_tile).
void add_amx_lowering(Halide::Pipeline &pipeline, const LoweredOp &op);

}  // namespace opgen

#endif
