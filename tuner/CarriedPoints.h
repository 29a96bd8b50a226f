// Carried points: a tuning task's first candidates taken from related winners in the cache.
//
// A fused op tuned at a shape where its plain twin already has a winner (matmul_bias_gelu beside
// matmul at 1024^3, a conv with bias and ReLU beside the conv) shares the twin's loop nest: the
// main statement, its variables and its inputs are the same, only the epilogue differs. The
// twin's loop choices (tiles, orders, packing, parallel loops, vector axis) are then a strong
// candidate for the fused op, and measuring them first keeps two independent short searches from
// landing on different tilings of one loop nest (measured on 2026-11-25: matmul_bias_gelu 1024^3
// on one thread ran 0.92x the plain matmul with its own 16-trial winner, 0.99x at the matmul's
// tiling). A carried point is the donor's loop choices with the task's own stage plan (its
// reference point's), kept only where the task's legal space holds it, so it is as legal as any
// other candidate and is verified and timed like one.
//
// The same op's winner at the same shape for another thread count is a donor too (measured
// 2026-11-25: sgemm 256^3 on one thread, the two-thread winner's register tile, 32x8, ran 262
// GFLOP/s where 16- and 32-trial one-thread tunes kept a 16x16 tile at 224-231; the tile lies in
// a legal space of 206,640 points the search did not sample). Its parallel loops are the task's
// own (the reference's) where the space holds no others for these loops.
#ifndef OPGEN_TUNER_CARRIEDPOINTS_H
#define OPGEN_TUNER_CARRIEDPOINTS_H

#include "store/KernelCache.h"
#include "core/TilingSpace.h"

#include <vector>

namespace opgen::tuner {

// The distinct points of `space` carried over from `donors` (winners at the task's shape and
// target; the task's own key among them is skipped), in donor order, at most `limit`. A donor
// whose schedule does not parse, or whose loop choices the space does not hold, gives none.
// The cache targets whose winners are donors for a task keyed on `own`, given `plain`, the task's
// kernel_key at every thread count it may borrow from (tuner/Tuner.h): `own`'s first; then, when
// `own` is one of them or its cold_key (tuner/ColdInputs.h), every other of their targets, each
// hot then cold. A key of another kind (a contention level's) has only its own.
std::vector<std::string> donor_targets(const db::KernelKey &own, const std::vector<db::KernelKey> &plain);

std::vector<SchedulePoint> carried_points(const TilingSpace &space, const SchedulePoint &reference,
                                          const db::KernelKey &own, const std::vector<db::KernelRecord> &donors,
                                          size_t limit = 4);

}  // namespace opgen::tuner

#endif
