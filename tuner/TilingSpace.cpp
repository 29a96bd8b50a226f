#include "tuner/TilingSpace.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <set>

namespace opgen::tuner {

namespace {

std::vector<int64_t> tile_options(int64_t reg_min, int64_t extent) {
    // Powers of two times the register tile, and the whole extent.
    std::set<int64_t> s{extent};
    for (int64_t t = reg_min; t < extent; t *= 2) s.insert(t);
    return {s.begin(), s.end()};
}

std::vector<int64_t> block_options(int64_t extent) {
    std::vector<int64_t> b;
    for (int64_t d = 16; d < extent; d++) {
        if (extent % d == 0 && (d % 16 == 0) && d <= 1024) b.push_back(d);
    }
    b.push_back(extent);
    return b;
}

}  // namespace

TilingSpace make_tiling_space(const ComputeDef &def, const BoundShape &shape, const Target &target, int threads) {
    TilingSpace s;
    s.graph = build_stages(def, target);
    s.groups = group_stages(s.graph);
    const Statement &out = *def.statement_for(def.output().name);
    const Statement &ms = main_statement(def);
    int lanes = target.vector_lanes(dtype_bytes(def.output().dtype));
    size_t rank = out.vars.size();
    for (size_t i = 0; i < rank; i++) {
        AxisOptions a;
        a.var = out.vars[rank - 1 - i];
        a.extent = shape.var_extent(out, a.var);
        if (i == 0) {
            s.vector_width = a.extent >= lanes ? lanes : 1;
            if (s.vector_width > 1) {
                for (int k = 1; k <= 4 && k * lanes <= a.extent; k++) a.regs.push_back(k * lanes);
            } else {
                a.regs.push_back(a.extent);
            }
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
    // Outer orders: the natural one, and the two innermost swapped.
    std::vector<std::string> natural;
    for (const auto &a : s.axes) natural.push_back(a.var);
    s.orders.push_back(natural);
    if (natural.size() >= 2) {
        auto swapped = natural;
        std::swap(swapped[0], swapped[1]);
        s.orders.push_back(swapped);
    }
    s.parallel_choices = threads > 1 ? std::vector<int>{1, 2} : std::vector<int>{0};
    if (rank < 2 && threads > 1) s.parallel_choices = {1};
    // Packing: any subset of the main statement's inputs.
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
        s.pack_choices.push_back(c);
    }

    // Enumerate: an odometer over every axis' (reg, tile) pairs and every reduction block, then
    // the knobs; the capacity check runs once per tiling, before the knobs multiply it.
    std::vector<std::vector<std::pair<int64_t, int64_t>>> axis_pairs;
    for (const auto &a : s.axes) {
        std::vector<std::pair<int64_t, int64_t>> pairs;
        for (int64_t r : a.regs) {
            for (int64_t t : a.tiles) {
                if (t >= r && (t % r == 0 || t == a.extent) && (a.tiles.size() == 1 || t == a.extent || ((t / r) & (t / r - 1)) == 0)) {
                    pairs.emplace_back(r, t);
                }
            }
        }
        axis_pairs.push_back(pairs);
    }
    std::vector<size_t> dims;
    for (const auto &p : axis_pairs) dims.push_back(p.size());
    for (const auto &r : s.reduce) dims.push_back(r.blocks.size());
    std::vector<size_t> idx(dims.size(), 0);
    int64_t knobs = int64_t(s.orders.size() * s.parallel_choices.size() * s.pack_choices.size());
    while (true) {
        SchedulePoint base;
        base.vector_width = s.vector_width;
        bool blocked = false;
        for (size_t i = 0; i < s.axes.size(); i++) {
            auto [r, t] = axis_pairs[i][idx[i]];
            base.axes.push_back({s.axes[i].var, t, r});
        }
        for (size_t j = 0; j < s.reduce.size(); j++) {
            int64_t b = s.reduce[j].blocks[idx[s.axes.size() + j]];
            blocked |= b < s.reduce[j].extent;
            base.reduce.push_back({s.reduce[j].var, b});
        }
        s.total_points += knobs;
        bool ok = true;
        if (blocked) {
            for (const auto &a : base.axes) ok &= a.tile % a.reg == 0;
        }
        // Packing changes where data sits, not how much of it a tile touches: one check serves all.
        base.outer_order = s.orders.front();
        if (ok && fits_buffers(target, footprints(def, shape, target, s.groups, base))) {
            for (const auto &order : s.orders) {
                for (int par : s.parallel_choices) {
                    for (const auto &pack : s.pack_choices) {
                        SchedulePoint p = base;
                        p.outer_order = order;
                        p.parallel_loops = par;
                        p.packed = pack;
                        s.legal.push_back(std::move(p));
                    }
                }
            }
        }
        size_t k = 0;
        while (k < idx.size() && ++idx[k] == dims[k]) idx[k++] = 0;
        if (k == idx.size()) break;
    }
    return s;
}

bool TilingSpace::contains(const SchedulePoint &p) const {
    return std::find(legal.begin(), legal.end(), p) != legal.end();
}

std::vector<SchedulePoint> TilingSpace::sample(size_t n, uint64_t seed) const {
    if (n >= legal.size()) return legal;
    std::vector<size_t> order(legal.size());
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 rng(seed);
    // A partial Fisher-Yates shuffle: the first n entries are a uniform sample without repeats.
    for (size_t i = 0; i < n; i++) {
        std::uniform_int_distribution<size_t> u(i, order.size() - 1);
        std::swap(order[i], order[u(rng)]);
    }
    std::vector<SchedulePoint> out;
    for (size_t i = 0; i < n; i++) out.push_back(legal[order[i]]);
    return out;
}

}  // namespace opgen::tuner
