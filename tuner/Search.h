// Search strategies: which points of the legal space the tuner measures next (docs/design.md
// §2.6: the cost model ranks candidates, the best few are measured, the measurements
// retrain the model). Two strategies, one per file's factory, picked by the space's size:
//   - exhaustive: a space small enough is scored whole by the model every round;
//   - evolutionary: a larger one is searched by a seeded evolution guided by the model — a
//     population seeded from a sample of the space and the best measured points, children made by
//     mutating one split factor or knob (kept only when legal), the model's best survive.
// Both keep a seeded share epsilon of every batch after the first for points drawn at random from
// the whole space (epsilon-greedy), and never return a point already measured. The same seed and
// the same scores give the same batches.
#ifndef OPGEN_TUNER_SEARCH_H
#define OPGEN_TUNER_SEARCH_H

#include "core/TilingSpace.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace opgen::tuner {

// Scores points, higher is better (the model's predicted throughput, or the roofline's).
using ScoreFn = std::function<std::vector<double>(const std::vector<SchedulePoint> &)>;
// True when a point has been measured already (in this run or a recorded one).
using MeasuredFn = std::function<bool(const SchedulePoint &)>;

struct SearchOptions {
    uint64_t seed = 1;
    double epsilon = 0.25;            // share of each batch after the first drawn at random
    size_t exhaustive_limit = 20000;  // spaces up to this many points are scored whole
    size_t population = 512;          // evolutionary: points that survive each generation
    int generations = 4;              // evolutionary: generations per batch
};

class SearchStrategy {
public:
    virtual ~SearchStrategy() = default;
    virtual const char *name() const = 0;
    // Up to `n` unmeasured points: the best by `score` and, unless `first`, a share epsilon drawn
    // at random. `elite` are the best measured points so far, best first. Fewer than `n` (maybe
    // none) when the space is exhausted.
    virtual std::vector<SchedulePoint> next_batch(int n, const ScoreFn &score, const MeasuredFn &measured,
                                                  const std::vector<SchedulePoint> &elite, bool first) = 0;
};

std::unique_ptr<SearchStrategy> make_exhaustive_search(const TilingSpace &space, const SearchOptions &o);
std::unique_ptr<SearchStrategy> make_evolutionary_search(const TilingSpace &space, const SearchOptions &o);
// Exhaustive when the legal space has at most o.exhaustive_limit points, else evolutionary.
std::unique_ptr<SearchStrategy> make_search(const TilingSpace &space, const SearchOptions &o);

// A stable text key of a point (every field), for sets and lookups.
std::string point_key(const SchedulePoint &p);

}  // namespace opgen::tuner

#endif
