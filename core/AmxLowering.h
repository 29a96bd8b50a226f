// The lowering of AMX points (core/AmxTile.h, docs/design.md §2.4): two Halide custom lowering
// passes that every pipeline of an AMX point carries, run after Halide 14's own lowering (whose
// ExtractTileOperations makes the tile loads, tdpbusd and tile stores).
//
//   widen_amx_reduction  Halide 14 issues one tdpbusd per group of 4: A as 16 rows x 4 bytes, B as
//                        one row of 64, K = 4 bytes, at the instruction's full 16 cycles (measured
//                        5.7 ns at K = 4, 5.3 at K = 64): a sixteenth of the AMX peak. G steps of
//                        that loop become one tdpbusd of K = 4G (A 16 rows x 4G bytes, B G rows of
//                        its [K/4][N][4] layout), G the largest of 16, 8, 4, 2 dividing the trips.
//   jam_amx_tiles        Halide 14 gives an accumulator Func one tile, so each tdpbusd loads its
//   own
//                        A and B tiles; two neighbouring register tiles summed in one loop load the
//                        operand they share once (3 tile loads per 2 tdpbusd instead of 4).
//
// Both change only loops of the exact form they expect (the same sums per element, exact in i32)
// and leave any other as it is: still correct, only slower.
#ifndef OPGEN_CORE_AMX_LOWERING_H
#define OPGEN_CORE_AMX_LOWERING_H

#include "core/Lower.h"

#include <Halide.h>

namespace opgen {

// Adds widen_amx_reduction, then jam_amx_tiles, to `pipeline` (which then owns them) when `op` was
// scheduled with an AMX point (LoweredOp::amx_tile, set by apply_schedule); nothing otherwise.
void add_amx_lowering(Halide::Pipeline &pipeline, const LoweredOp &op);

} // namespace opgen

#endif
