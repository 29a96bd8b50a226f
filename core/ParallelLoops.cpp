#include "core/ParallelLoops.h"

#include <algorithm>

namespace opgen {

std::vector<int64_t> cache_loop_trips(const SchedulePoint &p, const std::vector<int64_t> &extents) {
    std::vector<int64_t> trips;
    for (auto name = p.outer_order.rbegin(); name != p.outer_order.rend(); ++name) {
        int64_t t = 1;
        for (size_t i = 0; i < p.axes.size() && i < extents.size(); i++) {
            if (p.axes[i].var == *name && p.axes[i].tile > 0) t = (extents[i] + p.axes[i].tile - 1) / p.axes[i].tile;
        }
        trips.push_back(t);
    }
    return trips;
}

int64_t fused_trips(const std::vector<int64_t> &trips, int loops) {
    int64_t n = 1;
    for (size_t i = 0; i < trips.size() && int(i) < loops; i++) n *= trips[i];
    return n;
}

std::vector<int> parallel_loop_choices(const std::vector<int64_t> &trips, int cores) {
    if (cores <= 1) return {0};
    const int n = int(trips.size());
    if (n == 0) return {1};
    // The fewest loops reaching `cores`; failing that, the fewest giving the most iterations.
    int k = 0, best = 1;
    for (int i = 1; i <= n; i++) {
        if (fused_trips(trips, i) > fused_trips(trips, best)) best = i;
        if (!k && fused_trips(trips, i) >= cores) k = i;
    }
    if (!k) return {best};
    std::vector<int> choices{k};
    if (k < n && trips[size_t(k)] > 1) choices.push_back(k + 1);
    return choices;
}

}  // namespace opgen
