// AMX accumulator tiles (docs/design.md §2.4): where the target has amx_int8 and the main reduction
// is an int8 dot product (core/DotProduct.h, u8 x s8 -> i32 in groups of 4) over a two-axis output
// whose extents are multiples of 16, the space also offers each tiling whose register tile is
// 16 rows x 16 columns (one vector of i32) with the reduction unblocked as an AMX point: the
// accumulator is one AMX tile (16 rows of 64 bytes) instead of 16 vector registers.
//
// Halide 14 lowers it (src/ExtractTileOperations.cpp, the schedule of
// test/correctness/tiled_matmul.cpp) when the accumulator Func is stored in MemoryType::AMXTile,
// its init and its update are vectorized over the whole 16 x 16 tile, the update atomic with the
// group loop vectorized innermost (a VectorReduce of 4), and its only reader copies the tile whole
// (tile_store). Two lowering passes of opgen's finish the job (core/AmxLowering.h): Halide 14's
// tdpbusd sums only K = 4 bytes (a sixteenth of the instruction's work, at its full cost), and it
// gives an accumulator Func one tile.
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
bool amx_tile_point(const ComputeDef &def, const BoundShape &shape, const Target &target,
                    SchedulePoint &p);

} // namespace opgen

#endif
