// The legal tiling space (seed 004, paragraphs 61 and 72): per loop axis of the main statement,
// the split factors at each buffer level (register tile, cache tile, reduction block), and the
// knobs a CPU needs (outer loop order, parallel loops, packing of each input). Groups that share
// an axis share its factor, so every point is one realisable schedule; a point is legal when the
// footprints of the groups in each buffer add up to no more than the buffer's capacity.
#ifndef OPGEN_TUNER_TILING_SPACE_H
#define OPGEN_TUNER_TILING_SPACE_H

#include "opgen/ComputeDef.h"
#include "opgen/Schedule.h"
#include "opgen/Shape.h"
#include "opgen/StageGraph.h"
#include "opgen/Target.h"

#include <cstdint>
#include <string>
#include <vector>

namespace opgen::tuner {

// The options of one output axis, innermost axis first.
struct AxisOptions {
    std::string var;
    int64_t extent = 1;
    std::vector<int64_t> regs;   // register-tile extents
    std::vector<int64_t> tiles;  // cache-tile extents (each used with the regs that fit in it)
};

struct ReduceOptions {
    std::string var;
    int64_t extent = 1;
    std::vector<int64_t> blocks;  // divisors of the extent; the extent itself means "not blocked"
};

struct TilingSpace {
    StageGraph graph;
    std::vector<StageGroup> groups;
    std::vector<AxisOptions> axes;
    std::vector<ReduceOptions> reduce;
    std::vector<std::vector<std::string>> orders;  // outer loop orders, innermost first
    std::vector<int> parallel_choices;
    std::vector<std::vector<std::string>> pack_choices;
    int vector_width = 1;
    // Every legal point, in a stable order (axes, then reduction, then knobs, each ascending).
    std::vector<SchedulePoint> legal;
    // Points enumerated before the capacity check.
    int64_t total_points = 0;

    // True when `p` is one of the space's points and fits the buffers.
    bool contains(const SchedulePoint &p) const;
    // `n` distinct legal points drawn uniformly with `seed` (all of them when n >= size).
    std::vector<SchedulePoint> sample(size_t n, uint64_t seed) const;
};

// Builds the space for an op at a shape on a target. `threads` is how many cores kernels may use.
TilingSpace make_tiling_space(const ComputeDef &def, const BoundShape &shape, const Target &target,
                              int threads);

}  // namespace opgen::tuner

#endif
