// Generic kernels (codegen/GenericCode.h): the weights of a convolution copied, per register block of
// output channels, into a panel whose strides are constants.
//
// A generic conv2d_nchw kernel reads Wt[f, c, ry, rx] by broadcast, one scalar per output channel
// of its register block, and Wt's channel stride is C*KH*KW, unknown until run time: the exact
// kernel forms the block's 8 addresses with immediate offsets, the generic one carries a chain of
// adds of the symbolic stride through its innermost loop. Copied into a panel laid out
// [c][ry][rx][f of the block], computed at the output's register loop of f (so it is reused by
// every register tile of the block's cache tile), the reads are one pointer plus constants: the
// block's extent and the window's are constants, only the outermost (c) extent is symbolic. The
// panel's block extent is bounded to the register tile; where a ragged edge needs fewer channels
// it reads the weights' repeated edge (the generic lowering clamps its inputs), which nothing
// stores. A prefetch of the weights goes with them (the reduction no longer reads the weights
// themselves).
#ifndef OPGEN_CODEGEN_GENERIC_WEIGHTS_H
#define OPGEN_CODEGEN_GENERIC_WEIGHTS_H

#include "core/Lower.h"
#include "core/Schedule.h"

#include <set>
#include <string>
#include <vector>

namespace opgen {

// The inputs pack_generic_weights copies for `point`: every input the main statement reads
// that the point does not pack, that no index of the vectorized output variable reaches
// (broadcast), whose dimension indexed by exactly a register-tiled output variable (reg > 1) has
// at least two reduction-indexed dimensions inside it (a window: conv's Wt, not matmul's A), and
// where that variable's register loop is outside the accumulator's compute level and runs at least
// 8 register tiles of the other axes per panel at the tuned shape (the panel's copy is paid back).
// Empty for every other schedule.
std::vector<std::string> generic_weight_panels(const LoweredOp &op, const SchedulePoint &point);

// Applies the panels generic_weight_panels names to the scheduled generic `op` (after
// apply_schedule, before the tails are guarded). Nothing for a point without one.
void pack_generic_weights(LoweredOp &op, const SchedulePoint &point);

// The panels the schedule packs with the vectorized variable's dimension innermost (conv's Wt
// re-laid out [c][ry][rx][f], Schedule.cpp vectorize_panel) span that variable's whole extent where
// its tile follows the extent (GenericCode.cpp follow_whole_extent_tiles): every other stride of the
// panel is then a multiple of the symbolic extent, and the update's loads of the window's weights
// need one address register each. Each such panel is computed at that variable's register loop
// instead, bounded to its register tile, where that loop is outside the accumulator's and is
// reused as pack_generic_weights requires: its strides are constants again. Its copy is the same
// work where the register loop is the outermost register loop. Nothing for other points.
void bound_vector_panels(LoweredOp &op, const SchedulePoint &point, const std::set<std::string> &followed);

}  // namespace opgen

#endif
