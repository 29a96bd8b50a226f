#include "tuner/TilingSpace.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unordered_set>

namespace opgen::tuner {

namespace {

// Prefetch distance offered as a knob, in steps of the outermost reduction loop of a block.
constexpr int kPrefetchDistance = 4;

std::vector<int64_t> tile_options(int64_t reg_min, int64_t extent) {
    // Powers of two times the register tile, and the whole extent.
    std::set<int64_t> s{extent};
    for (int64_t t = reg_min; t < extent; t *= 2) s.insert(t);
    return {s.begin(), s.end()};
}

// Reduction blocks: the multiples of 16 up to 1024 that divide the extent; where there are none
// (K = 1115), powers of two from 64 with a guarded last block; and the extent itself (not blocked).
std::vector<int64_t> block_options(int64_t extent) {
    std::vector<int64_t> b;
    for (int64_t d = 16; d < extent; d++) {
        if (extent % d == 0 && (d % 16 == 0) && d <= 1024) b.push_back(d);
    }
    if (b.empty()) {
        for (int64_t d = 64; d <= 512 && d < extent; d *= 2) b.push_back(d);
    }
    b.push_back(extent);
    return b;
}

// Register-tile extents of the innermost axis for vector width `vw`: one to four vectors, or the
// whole axis when it is a few vectors exactly.
std::vector<int64_t> innermost_regs(int vw, int64_t extent) {
    if (vw <= 1) return {extent};
    std::set<int64_t> r;
    for (int k = 1; k <= 4 && k * vw <= extent; k++) r.insert(int64_t(k) * vw);
    if (extent % vw == 0 && extent / vw <= 8) r.insert(extent);
    return {r.begin(), r.end()};
}

// (reg, tile) pairs of an axis: tiles a power-of-two number of register tiles, or the whole axis.
std::vector<std::pair<int64_t, int64_t>> axis_pairs(const std::vector<int64_t> &regs, int64_t extent, bool single_tile) {
    std::vector<std::pair<int64_t, int64_t>> pairs;
    std::set<int64_t> tiles;
    for (int64_t r : regs) {
        for (int64_t t : tile_options(r, extent)) tiles.insert(t);
    }
    for (int64_t r : regs) {
        for (int64_t t : tiles) {
            if (t >= r && (t % r == 0 || t == extent) && (single_tile || t == extent || ((t / r) & (t / r - 1)) == 0)) {
                pairs.emplace_back(r, t);
            }
        }
    }
    return pairs;
}

std::string tiling_key(const SchedulePoint &p) {
    std::ostringstream k;
    for (const auto &a : p.axes) k << a.var << ":" << a.tile << "/" << a.reg << ";";
    for (const auto &r : p.reduce) k << r.var << ":" << r.block << ";";
    k << "vw" << p.vector_width;
    return k.str();
}

// Swapping the register-tile loops matters only when both innermost axes hold several register
// tiles per cache tile.
bool tile_order_matters(const SchedulePoint &p) {
    return p.axes.size() >= 2 && p.axes[0].tile > p.axes[0].reg && p.axes[1].tile > p.axes[1].reg;
}

std::vector<size_t> knob_dims(const KnobChoices &k, const SchedulePoint &tiling) {
    return {k.outer_orders.size(), tile_order_matters(tiling) ? k.tile_orders.size() : 1, k.parallel_choices.size(),
            k.pack_prefetch.size(), k.unroll_choices.size()};
}

int64_t product(const std::vector<size_t> &dims) {
    int64_t n = 1;
    for (size_t d : dims) n *= int64_t(d);
    return n;
}

std::vector<std::vector<std::string>> outer_orders(const std::vector<std::string> &natural) {
    // Every order of the (up to) three innermost axes; the rest stay outermost in their order.
    size_t free = std::min<size_t>(3, natural.size());
    std::vector<size_t> perm(free);
    std::iota(perm.begin(), perm.end(), 0);
    std::vector<std::vector<std::string>> orders;
    do {
        std::vector<std::string> o;
        for (size_t i : perm) o.push_back(natural[i]);
        for (size_t i = free; i < natural.size(); i++) o.push_back(natural[i]);
        orders.push_back(o);
    } while (std::next_permutation(perm.begin(), perm.end()));
    return orders;
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
    p.outer_order = k.outer_orders[digit[0]];
    p.tile_order = digit[1] == 0 ? std::vector<std::string>{} : k.tile_orders[digit[1]];
    p.parallel_loops = k.parallel_choices[digit[2]];
    p.packed = k.pack_prefetch[digit[3]].first;
    p.prefetch = k.pack_prefetch[digit[3]].second;
    p.unroll = k.unroll_choices[digit[4]];
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

bool LegalPoints::knobs_valid(const SchedulePoint &p, size_t tiling) const {
    const KnobChoices &k = *knobs_;
    auto has = [](const auto &v, const auto &x) { return std::find(v.begin(), v.end(), x) != v.end(); };
    bool tile_ok = p.tile_order.empty() ||
                   (tile_order_matters(tilings_[tiling]) &&
                    std::find(k.tile_orders.begin() + 1, k.tile_orders.end(), p.tile_order) != k.tile_orders.end());
    return has(k.outer_orders, p.outer_order) && tile_ok && has(k.parallel_choices, p.parallel_loops) &&
           has(k.pack_prefetch, std::make_pair(p.packed, p.prefetch)) && has(k.unroll_choices, p.unroll);
}

TilingSpace make_tiling_space(const ComputeDef &def, const BoundShape &shape, const Target &target, int threads) {
    TilingSpace s;
    s.graph = build_stages(def, target);
    s.groups = group_stages(s.graph);
    const Statement &out = *def.statement_for(def.output().name);
    const Statement &ms = main_statement(def);
    int lanes = target.vector_lanes(dtype_bytes(def.output().dtype));
    size_t rank = out.vars.size();
    // Vector widths on the innermost axis: the target's, and half of it where that leaves no
    // remainder but the full width would (56 = 7 x 8 on a 16-lane machine).
    int64_t e0 = shape.var_extent(out, out.vars[rank - 1]);
    if (e0 >= lanes) s.vector_widths.push_back(lanes);
    int half = lanes / 2;
    if (half >= 4 && e0 >= half && e0 % lanes != 0 && (e0 % half == 0 || e0 < lanes)) s.vector_widths.push_back(half);
    if (s.vector_widths.empty()) s.vector_widths.push_back(1);
    s.vector_width = s.vector_widths.front();
    for (size_t i = 0; i < rank; i++) {
        AxisOptions a;
        a.var = out.vars[rank - 1 - i];
        a.extent = shape.var_extent(out, a.var);
        if (i == 0) {
            std::set<int64_t> regs;
            for (int vw : s.vector_widths) {
                for (int64_t r : innermost_regs(vw, a.extent)) regs.insert(r);
            }
            a.regs.assign(regs.begin(), regs.end());
        } else if (i == 1) {
            for (int64_t r : {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16}) {
                if (r <= a.extent) a.regs.push_back(r);
            }
        } else if (i == 2) {
            // A third axis (output channels of a convolution, the batch of a batched matmul) may
            // join the register tile: each loaded input vector then serves several outputs.
            for (int64_t r : {1, 2, 4, 8}) {
                if (r <= a.extent) a.regs.push_back(r);
            }
        } else {
            a.regs.push_back(1);
        }
        if (i < 3) {
            std::set<int64_t> all;
            for (int64_t r : a.regs) {
                for (int64_t t : tile_options(r, a.extent)) all.insert(t);
            }
            a.tiles.assign(all.begin(), all.end());
        } else {
            a.tiles = {1};
        }
        s.axes.push_back(a);
    }
    bool fusable = ms.reduce != ReduceKind::None && main_is_fusable(def);
    if (fusable) {
        // Blocking pays on the longest reduction axis (k of a matmul, input channels of a
        // convolution); the others stay whole.
        auto longest = ms.reduce_vars.rbegin();
        for (auto it = ms.reduce_vars.rbegin(); it != ms.reduce_vars.rend(); ++it) {
            if (shape.eval(it->extent) > shape.eval(longest->extent)) longest = it;
        }
        for (auto it = ms.reduce_vars.rbegin(); it != ms.reduce_vars.rend(); ++it) {
            int64_t e = shape.eval(it->extent);
            s.reduce.push_back({it->name, e, it == longest ? block_options(e) : std::vector<int64_t>{e}});
        }
    }

    // Knobs.
    std::vector<std::string> natural;
    for (const auto &a : s.axes) natural.push_back(a.var);
    s.knobs.outer_orders = outer_orders(natural);
    s.knobs.tile_orders = {natural};
    if (natural.size() >= 2) {
        auto swapped = natural;
        std::swap(swapped[0], swapped[1]);
        s.knobs.tile_orders.push_back(swapped);
    }
    s.knobs.parallel_choices = threads > 1 ? std::vector<int>{1, 2} : std::vector<int>{0};
    if (rank < 2 && threads > 1) s.knobs.parallel_choices = {1};
    // Packing: any subset of the main statement's inputs; prefetching while one is read unpacked.
    std::vector<std::string> ins;
    if (fusable) {
        for (const TensorDecl *t : def.inputs()) {
            for (const auto &g : s.groups) {
                if (g.tensor == t->name && std::find(ins.begin(), ins.end(), t->name) == ins.end()) ins.push_back(t->name);
            }
        }
    }
    for (uint32_t mask = 0; mask < (1u << ins.size()); mask++) {
        std::vector<std::string> c;
        for (size_t i = 0; i < ins.size(); i++) {
            if (mask & (1u << i)) c.push_back(ins[i]);
        }
        s.knobs.pack_prefetch.push_back({c, 0});
        if (fusable && c.size() < ins.size()) s.knobs.pack_prefetch.push_back({c, kPrefetchDistance});
    }
    s.knobs.unroll_choices = {true, false};
    TilingSpaceBuilder::set_knobs(s.legal, s.knobs);

    // Groups that cannot fit their buffer even under the smallest tiling split into subgroups.
    SchedulePoint smallest;
    smallest.vector_width = s.vector_widths.back();
    for (size_t i = 0; i < s.axes.size(); i++) {
        int64_t r = i == 0 ? innermost_regs(smallest.vector_width, s.axes[0].extent).front() : s.axes[i].regs.front();
        smallest.axes.push_back({s.axes[i].var, r, r});
    }
    for (const auto &r : s.reduce) smallest.reduce.push_back({r.var, r.blocks.front()});
    smallest.outer_order = s.knobs.outer_orders.front();
    s.groups = split_oversized_groups(def, shape, target, s.graph, s.groups, smallest);

    // Enumerate the tilings: per vector width, an odometer over every axis' (reg, tile) pairs and
    // every reduction block. The capacity check runs once per tiling, before the knobs multiply it.
    for (int vw : s.vector_widths) {
        std::vector<std::vector<std::pair<int64_t, int64_t>>> pairs;
        for (size_t i = 0; i < s.axes.size(); i++) {
            const AxisOptions &a = s.axes[i];
            pairs.push_back(axis_pairs(i == 0 ? innermost_regs(vw, a.extent) : a.regs, a.extent, a.tiles.size() == 1));
        }
        std::vector<size_t> dims;
        for (const auto &p : pairs) dims.push_back(p.size());
        for (const auto &r : s.reduce) dims.push_back(r.blocks.size());
        std::vector<size_t> idx(dims.size(), 0);
        while (true) {
            SchedulePoint base;
            base.vector_width = vw;
            bool blocked = false;
            for (size_t i = 0; i < s.axes.size(); i++) {
                auto [r, t] = pairs[i][idx[i]];
                base.axes.push_back({s.axes[i].var, t, r});
            }
            for (size_t j = 0; j < s.reduce.size(); j++) {
                int64_t b = s.reduce[j].blocks[idx[s.axes.size() + j]];
                blocked |= b < s.reduce[j].extent;
                base.reduce.push_back({s.reduce[j].var, b});
            }
            base.outer_order = s.knobs.outer_orders.front();
            base.parallel_loops = s.knobs.parallel_choices.front();
            base.packed = s.knobs.pack_prefetch.front().first;
            int64_t knobs = product(knob_dims(s.knobs, base));
            s.total_points += knobs;
            s.total_tilings++;
            bool ok = true;
            if (blocked) {
                for (const auto &a : base.axes) ok &= a.tile % a.reg == 0;
            }
            // Knobs change the order and placement of loops, not how much data a tile touches.
            if (ok && fits_buffers(target, footprints(def, shape, target, s.groups, base))) {
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
    return tiling.axes == p.axes && tiling.reduce == p.reduce && legal.knobs_valid(p, size_t(t));
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

}  // namespace opgen::tuner
