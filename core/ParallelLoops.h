// Which of a schedule's cache-tile loops run in parallel (docs/design.md §2.4, §2.5). A point fuses
// its parallel_loops outermost cache-tile loops (outermost in its outer_order) into one parallel
// loop; its outer order decides which loops those are, so any tile loop (output-channel blocks,
// rows, images, the m or n tiles of a matmul) can carry the threads. What matters is how many
// iterations the fused loop has: a loop of one tile (the whole m of matmul 64x1024x4096, a blocked
// convolution's image and channel-block loops) runs on one core however many it is given. These
// functions count the trips and say which fusions are worth offering, for the tuner's space and
// the hand-written starting point alike.
#ifndef OPGEN_CORE_PARALLEL_LOOPS_H
#define OPGEN_CORE_PARALLEL_LOOPS_H

#include "core/Schedule.h"

#include <cstdint>
#include <vector>

namespace opgen {

// Iterations of each cache-tile loop of `p`, outermost first (the reverse of p.outer_order):
// ceil(extent / tile) of its axis. `extents` holds the axes' extents in p.axes' order. An axis
// that outer_order or `extents` does not cover counts as one iteration.
std::vector<int64_t> cache_loop_trips(const SchedulePoint &p, const std::vector<int64_t> &extents);

// The parallel_loops values worth offering for loops of `trips` (outermost first) on `cores`
// cores: the fewest outermost loops whose fused iterations reach `cores`, and one loop more where
// that loop has several iterations (finer tasks balance an odd count); where no fusion reaches
// `cores`, the fewest loops that give the most iterations. {0} (serial) on one core. Never a
// fusion of fewer than `cores` iterations while another reaches them.
std::vector<int> parallel_loop_choices(const std::vector<int64_t> &trips, int cores);
// The most values parallel_loop_choices offers.
constexpr size_t kMostParallelChoices = 2;

// Iterations of the loop that fusing the `loops` outermost of `trips` makes.
int64_t fused_trips(const std::vector<int64_t> &trips, int loops);

}  // namespace opgen

#endif
