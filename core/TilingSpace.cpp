#include "core/TilingSpace.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unordered_set>

namespace opgen {

namespace {

std::string tiling_key(const SchedulePoint &p) {
    std::ostringstream k;
    for (const auto &a : p.axes) k << a.var << ":" << a.tile << "/" << a.reg << ";";
    for (const auto &r : p.reduce) k << r.var << ":" << r.block << ";";
    k << "vw" << p.vector_width;
    if (p.vector_axis) k << "@" << p.vector_axis;
    return k.str();
}

// The knob digits of a tiling: (outer order, parallel loops) pairs, tile orders, packing and
// prefetching, unrolling, stage plans, channel orders, AMX tiles. The first digit's radix depends on the tiling: an order's
// parallel choices depend on its loops' trip counts (core/TilingRules.h loop_plan_count); so do
// the tile orders' and the AMX tiles' (amx_choice_count).
std::vector<size_t> knob_dims(const KnobChoices &k, const SchedulePoint &tiling) {
    return {loop_plan_count(k, tiling), tile_order_matters(tiling) ? k.tile_orders.size() : 1, k.pack_prefetch.size(),
            k.unroll_choices.size(), k.stage_plans.size(), k.channel_orders.size(), amx_choice_count(k, tiling)};
}

int64_t product(const std::vector<size_t> &dims) {
    int64_t n = 1;
    for (size_t d : dims) n *= int64_t(d);
    return n;
}

}  // namespace

struct TilingSpaceBuilder {
    static void add(LegalPoints &l, const SchedulePoint &tiling, int64_t knobs) {
        l.index_.emplace(tiling_key(tiling), l.tilings_.size());
        l.tilings_.push_back(tiling);
        l.offsets_.push_back(l.offsets_.back() + knobs);
    }
    static void set_knobs(LegalPoints &l, const KnobChoices &k) { l.knobs_ = std::make_shared<const KnobChoices>(k); }
};

SchedulePoint LegalPoints::operator[](size_t i) const {
    auto it = std::upper_bound(offsets_.begin(), offsets_.end(), int64_t(i));
    size_t t = size_t(it - offsets_.begin()) - 1;
    SchedulePoint p = tilings_[t];
    int64_t rest = int64_t(i) - offsets_[t];
    const KnobChoices &k = *knobs_;
    std::vector<size_t> dims = knob_dims(k, p), digit(dims.size());
    for (size_t d = dims.size(); d-- > 0;) {
        digit[d] = size_t(rest % int64_t(dims[d]));
        rest /= int64_t(dims[d]);
    }
    set_loop_plan(k, p, digit[0]);
    p.tile_order = digit[1] == 0 ? std::vector<std::string>{} : k.tile_orders[digit[1]];
    p.packed = k.pack_prefetch[digit[2]].first;
    p.prefetch = k.pack_prefetch[digit[2]].second;
    p.unroll = k.unroll_choices[digit[3]];
    p.stages = k.stage_plans[digit[4]].stages;
    p.fast_math = k.stage_plans[digit[4]].fast_math;
    p.channels_innermost = k.channel_orders[digit[5]];
    p.amx_tile = k.amx_tiles[digit[6]];
    return p;
}

SchedulePoint LegalPoints::at(size_t i) const {
    if (i >= size()) throw std::out_of_range("legal point " + std::to_string(i) + " of " + std::to_string(size()));
    return (*this)[i];
}

int64_t LegalPoints::tiling_index(const SchedulePoint &p) const {
    auto it = index_.find(tiling_key(p));
    return it == index_.end() ? -1 : int64_t(it->second);
}

TilingSpace make_tiling_space(const ComputeDef &def, const BoundShape &shape, const Target &target, int threads) {
    TilingSpace s;
    static_cast<TilingRules &>(s) = make_tiling_rules(def, shape, target, threads);
    TilingSpaceBuilder::set_knobs(s.legal, s.knobs);
    // Enumerate the tilings: per vector width, an odometer over every axis' (reg, tile) pairs and
    // every reduction block. The capacity check runs once per tiling, before the knobs multiply it.
    for (size_t v = 0; v < s.vector_widths.size(); v++) {
        const auto &pairs = s.pairs[v];
        std::vector<size_t> dims;
        for (const auto &p : pairs) dims.push_back(p.size());
        for (const auto &r : s.reduce) dims.push_back(r.blocks.size());
        if (std::find(dims.begin(), dims.end(), size_t(0)) != dims.end()) continue;
        std::vector<size_t> idx(dims.size(), 0);
        while (true) {
            SchedulePoint base;
            base.vector_width = s.vector_widths[v];
            base.vector_axis = s.vector_axes[v];
            for (size_t i = 0; i < s.axes.size(); i++) {
                auto [r, t] = pairs[i][idx[i]];
                base.axes.push_back({s.axes[i].var, t, r});
            }
            for (size_t j = 0; j < s.reduce.size(); j++) {
                base.reduce.push_back({s.reduce[j].var, s.reduce[j].blocks[idx[s.axes.size() + j]]});
            }
            base.outer_order = s.knobs.outer_orders.front();
            base.parallel_loops = parallel_choices(s.knobs, base).front();
            base.packed = s.knobs.pack_prefetch.front().first;
            base.dot_product = s.knobs.dot_product;
            int64_t knobs = product(knob_dims(s.knobs, base));
            s.total_points += knobs;
            s.total_tilings++;
            // The same test as is_legal_point's, whose other parts hold by construction here.
            if (offered_tiling(s, base) && fits(s, def, shape, target, base)) {
                TilingSpaceBuilder::add(s.legal, base, knobs);
            }
            size_t k = 0;
            while (k < idx.size() && ++idx[k] == dims[k]) idx[k++] = 0;
            if (k == idx.size()) break;
        }
    }
    return s;
}

bool TilingSpace::contains(const SchedulePoint &p) const {
    int64_t t = legal.tiling_index(p);
    if (t < 0) return false;
    const SchedulePoint &tiling = legal.tilings()[size_t(t)];
    return tiling.axes == p.axes && tiling.reduce == p.reduce && offered_knobs(knobs, p);
}

std::vector<SchedulePoint> TilingSpace::sample(size_t n, uint64_t seed) const {
    size_t size = legal.size();
    std::vector<SchedulePoint> out;
    if (n >= size) {
        for (size_t i = 0; i < size; i++) out.push_back(legal[i]);
        return out;
    }
    // Floyd's algorithm: n distinct indices, every n-subset equally likely, without a list of all.
    std::mt19937_64 rng(seed);
    std::unordered_set<size_t> chosen;
    std::vector<size_t> order;
    for (size_t j = size - n; j < size; j++) {
        size_t t = std::uniform_int_distribution<size_t>(0, j)(rng);
        size_t pick = chosen.count(t) ? j : t;
        chosen.insert(pick);
        order.push_back(pick);
    }
    for (size_t i : order) out.push_back(legal[i]);
    return out;
}

}  // namespace opgen
