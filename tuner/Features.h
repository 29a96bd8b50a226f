// Per-stage-group features of a candidate (docs/design.md §2.6): stage type, store bit, store num,
// compute bit, compute num, emit bit and emit num, and what makes them accurate on a CPU (footprint
// over capacity, arithmetic intensity, vector-lane use, tail waste, parallel tasks per core, unroll
// size, packing). costmodel/ sees only these numbers.
#ifndef OPGEN_TUNER_FEATURES_H
#define OPGEN_TUNER_FEATURES_H

#include "costmodel/CostModel.h"
#include "core/TilingSpace.h"

#include <string>
#include <vector>

namespace opgen::tuner {

// Column names, in order.
const std::vector<std::string> &feature_names();
int num_features();

// One row per group of the space's stage groups (main-memory groups included), appended to `out`;
// returns the number of rows. `contention_level` (the last column on every row) is the
// memory-bandwidth contention the candidate runs under (tuner/Contention.h: load threads x
// intensity; 0: a quiet machine).
int group_features(const ComputeDef &def, const BoundShape &shape, const Target &target,
                   const TilingRules &space, const SchedulePoint &p, int threads,
                   std::vector<float> &out, double contention_level = 0);

// The feature batch of `points`, in order, built by `workers` threads (each a contiguous share of
// the points; 1: on the calling thread). The rows are the same whatever `workers` is.
costmodel::FeatureBatch batch_features(const ComputeDef &def, const BoundShape &shape, const Target &target,
                                       const TilingRules &space, const std::vector<SchedulePoint> &points,
                                       int threads, int workers, double contention_level = 0);

// An analytical roofline estimate of the candidate's time in seconds: FLOPs over the peak scaled
// by vector-lane use and register-tile latency hiding, against the bytes each buffer level moves
// over its bandwidth. The cold-start ranking, and the baseline the learned model must beat.
double roofline_seconds(const ComputeDef &def, const BoundShape &shape, const Target &target,
                        const TilingRules &space, const SchedulePoint &p, int threads);

// The bytes the candidate's tiles move from outside L2: each cache tile's L2 footprint once per
// reduction block (the roofline's DRAM term counts it once per tile). On a quiet machine re-read
// panels often come from the L3; under a streaming load they come from DRAM.
double dram_bytes(const ComputeDef &def, const BoundShape &shape, const Target &target, const TilingRules &space,
                  const SchedulePoint &p, int threads);

// The roofline estimate under memory-bandwidth contention `contention_level` (tuner/Contention.h):
// roofline_seconds plus dram_bytes over one core's DRAM bandwidth, `contention_level` times, so
// that as contention grows the ranking trades compute efficiency for fewer bytes from outside L2
// (more reuse). Equal to roofline_seconds at level 0; a negative level counts as 0.
double contended_roofline_seconds(const ComputeDef &def, const BoundShape &shape, const Target &target,
                                  const TilingRules &space, const SchedulePoint &p, int threads,
                                  double contention_level);

}  // namespace opgen::tuner

#endif
