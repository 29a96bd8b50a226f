// The legal tiling space (docs/design.md §7.2, the flow in §2.4): per loop axis of the main
// statement, the split factors at each buffer level (register tile, cache tile, reduction block)
// and the vector width, times the knobs a CPU needs (loop order at the cache-tile and register-tile
// levels, parallel loops, packing of each input, unrolling, prefetching). Groups that share an axis
// share its factor, so every point is one realisable schedule; a tiling is legal when the
// footprints of the groups in each buffer add up to no more than the buffer's capacity. The rules
// themselves, and questions about single points that need no enumeration, are in
// core/TilingRules.h.
//
// The space is held as its legal tilings times each tiling's knob combinations, never as a list of
// every point: its size is exact without enumerating the knobs, and point i is computed on demand
// (tilings in a stable order, knobs as a mixed-radix number inside each tiling).
#ifndef OPGEN_CORE_TILING_SPACE_H
#define OPGEN_CORE_TILING_SPACE_H

#include "core/ComputeDef.h"
#include "core/Schedule.h"
#include "core/Shape.h"
#include "core/StageGraph.h"
#include "core/Target.h"
#include "core/TilingRules.h"

#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace opgen {

// The legal points: a random-access view over (legal tiling, knob combination).
class LegalPoints {
public:
    size_t size() const { return size_t(offsets_.empty() ? 0 : offsets_.back()); }
    bool empty() const { return size() == 0; }
    SchedulePoint operator[](size_t i) const;
    SchedulePoint at(size_t i) const;  // std::out_of_range past the end
    SchedulePoint front() const { return (*this)[0]; }

    class iterator {
    public:
        using iterator_category = std::input_iterator_tag;
        using value_type = SchedulePoint;
        using difference_type = std::ptrdiff_t;
        using pointer = const SchedulePoint *;
        using reference = SchedulePoint;
        iterator(const LegalPoints *p, size_t i) : p_(p), i_(i) {}
        SchedulePoint operator*() const { return (*p_)[i_]; }
        iterator &operator++() {
            ++i_;
            return *this;
        }
        bool operator!=(const iterator &o) const { return i_ != o.i_; }
        bool operator==(const iterator &o) const { return i_ == o.i_; }

    private:
        const LegalPoints *p_;
        size_t i_;
    };
    iterator begin() const { return {this, 0}; }
    iterator end() const { return {this, size()}; }

    // The legal tilings (knobs at their first choice) and how many knob combinations each has.
    const std::vector<SchedulePoint> &tilings() const { return tilings_; }
    int64_t knob_count(size_t tiling) const { return offsets_[tiling + 1] - offsets_[tiling]; }
    // Index of the legal tiling `p` uses, or -1.
    int64_t tiling_index(const SchedulePoint &p) const;

private:
    friend struct TilingSpaceBuilder;
    std::vector<SchedulePoint> tilings_;
    std::vector<int64_t> offsets_{0};  // prefix sums of knob counts
    std::shared_ptr<const KnobChoices> knobs_;
    std::unordered_map<std::string, size_t> index_;  // tiling key -> position
};

// The rules (core/TilingRules.h) and every legal point they allow.
struct TilingSpace : TilingRules {
    LegalPoints legal;               // every legal point, in a stable order
    int64_t total_points = 0;        // points before the capacity check
    int64_t total_tilings = 0;       // tilings before the capacity check

    // True when `p` is one of the space's points (and so fits the buffers).
    bool contains(const SchedulePoint &p) const;
    // `n` distinct legal points drawn uniformly with `seed` (all of them when n >= size), in
    // draw order.
    std::vector<SchedulePoint> sample(size_t n, uint64_t seed) const;
};

// Builds the space for an op at a shape on a target. `threads` is how many cores kernels may use.
TilingSpace make_tiling_space(const ComputeDef &def, const BoundShape &shape, const Target &target,
                              int threads);

}  // namespace opgen

#endif
