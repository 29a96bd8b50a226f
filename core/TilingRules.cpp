#include "core/TilingRules.h"

#include "base/TilingTable.h"
#include "core/AmxTile.h"
#include "core/ConvWindow.h"
#include "core/DotProduct.h"
#include "core/ParallelLoops.h"
#include "core/StagePlacement.h"
#include "core/Streaming.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <queue>
#include <random>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace opgen {

namespace {

using tiling::block_options;
using tiling::innermost_regs;
using tiling::row_regs;
using tiling::step_block_options;
using tiling::tile_options;

// Prefetch distance offered as a knob, in steps of the outermost reduction loop of a block.
constexpr int kPrefetchDistance = 4;

// A reduction loop of at least this many steps, more than a 3x3 window's (which unrolls whole),
// whose every step reduces at least a vector's worth of products counts blocks of channels (CB of
// conv2d_nchwc: each step is a cb x KH x KW slab; at CB = 4 and 3x3 the whole loop's weights for
// one output block, 36 KiB, overflow a 32 KiB L1).
constexpr int64_t kWindowSteps = 4;
constexpr int64_t kBlockStepProducts = 16;

// (reg, tile) pairs of an axis: tiles a power-of-two number of register tiles, or the whole axis.
std::vector<std::pair<int64_t, int64_t>> make_axis_pairs(const std::vector<int64_t> &regs, int64_t extent,
                                                         bool single_tile) {
    std::vector<std::pair<int64_t, int64_t>> pairs;
    std::set<int64_t> tiles;
    for (int64_t r : regs) {
        for (int64_t t : tile_options(r, extent)) tiles.insert(t);
    }
    for (int64_t r : regs) {
        for (int64_t t : tiles) {
            if (tiling::is_offered_pair(r, t, extent, single_tile)) {
                pairs.emplace_back(r, t);
            }
        }
    }
    return pairs;
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

// The index of (width, axis) among the rules' vector choices, or -1.
int vector_width_index(const TilingRules &rules, int vw, int axis) {
    for (size_t v = 0; v < rules.vector_widths.size(); v++) {
        if (rules.vector_widths[v] == vw && rules.vector_axes[v] == axis) return int(v);
    }
    return -1;
}

// Whether the point names the space's variables in the space's order.
bool same_variables(const TilingRules &rules, const SchedulePoint &p) {
    if (p.axes.size() != rules.axes.size() || p.reduce.size() != rules.reduce.size()) return false;
    for (size_t i = 0; i < p.axes.size(); i++) {
        if (p.axes[i].var != rules.axes[i].var) return false;
    }
    for (size_t j = 0; j < p.reduce.size(); j++) {
        if (p.reduce[j].var != rules.reduce[j].var) return false;
    }
    return true;
}

// A blocked reduction computes the accumulator per cache tile: tiles must hold whole register
// tiles.
bool whole_register_tiles_if_blocked(const TilingRules &rules, const SchedulePoint &p) {
    bool blocked = false;
    for (size_t j = 0; j < p.reduce.size(); j++) blocked |= p.reduce[j].block < rules.reduce[j].extent;
    if (!blocked) return true;
    for (const auto &a : p.axes) {
        if (a.tile % a.reg != 0) return false;
    }
    return true;
}

// The cache tiles of `p`'s tiling: the iterations of all its cache-tile loops together.
int64_t cache_tiles(const TilingRules &rules, const SchedulePoint &p) {
    int64_t n = 1;
    for (size_t i = 0; i < p.axes.size() && i < rules.axes.size(); i++) {
        n *= (rules.axes[i].extent + p.axes[i].tile - 1) / std::max<int64_t>(1, p.axes[i].tile);
    }
    return n;
}

// The most cache tiles a tiling of the rules has (each axis at its smallest offered tile).
int64_t most_cache_tiles(const TilingRules &rules) {
    int64_t most = 1;
    for (size_t v = 0; v < rules.pairs.size(); v++) {
        int64_t n = 1;
        for (size_t i = 0; i < rules.pairs[v].size(); i++) {
            int64_t tile = rules.axes[i].extent;
            for (auto [r, t] : rules.pairs[v][i]) tile = std::min(tile, t);
            n *= (rules.axes[i].extent + tile - 1) / std::max<int64_t>(1, tile);
        }
        most = std::max(most, n);
    }
    return most;
}

// On several cores a tiling needs a tile per core where the shape has that many (docs/design.md
// §2.4): one of fewer tiles runs on fewer cores whatever its parallel loop (matmul 256^3 in one
// 256 x 256 tile ran at one core's speed on two).
bool enough_tiles(const TilingRules &rules, const SchedulePoint &p) {
    const int cores = rules.knobs.cores;
    return cores <= 1 || rules.most_tiles < cores || cache_tiles(rules, p) >= cores;
}

// The tiling of (vector width `v`, option indices `idx`: one per axis, then one per reduction),
// knobs at their first choice.
SchedulePoint tiling_at(const TilingRules &rules, size_t v, const std::vector<size_t> &idx) {
    SchedulePoint p;
    p.vector_width = rules.vector_widths[v];
    p.vector_axis = rules.vector_axes[v];
    for (size_t i = 0; i < rules.axes.size(); i++) {
        auto [r, t] = rules.pairs[v][i][idx[i]];
        p.axes.push_back({rules.axes[i].var, t, r});
    }
    for (size_t j = 0; j < rules.reduce.size(); j++) {
        p.reduce.push_back({rules.reduce[j].var, rules.reduce[j].blocks[idx[rules.axes.size() + j]]});
    }
    p.outer_order = rules.knobs.outer_orders.front();
    p.parallel_loops = parallel_choices(rules.knobs, p).front();
    p.packed = rules.knobs.pack_prefetch.front().first;
    p.prefetch = rules.knobs.pack_prefetch.front().second;
    p.unroll = rules.knobs.unroll_choices.front();
    p.stages = rules.knobs.stage_plans.front().stages;
    p.fast_math = rules.knobs.stage_plans.front().fast_math;
    p.channels_innermost = rules.knobs.channel_orders.front();
    p.dot_product = rules.knobs.dot_product;
    return p;
}

// The option counts of each coordinate under vector width `v`: axes, then reductions.
std::vector<size_t> option_counts(const TilingRules &rules, size_t v) {
    std::vector<size_t> dims;
    for (const auto &pairs : rules.pairs[v]) dims.push_back(pairs.size());
    for (const auto &r : rules.reduce) dims.push_back(r.blocks.size());
    return dims;
}

// A number naming (v, idx) uniquely within the rules, for memos and visited sets: idx in the mixed
// radix of v's option counts, then v as the lowest digit. (With v as the highest digit, as before,
// the widths' ranges overlapped wherever their option counts differ.)
uint64_t tiling_code(const TilingRules &rules, size_t v, const std::vector<size_t> &idx) {
    uint64_t code = 0;
    std::vector<size_t> dims = option_counts(rules, v);
    for (size_t c = 0; c < idx.size(); c++) code = code * dims[c] + idx[c];
    return code * std::max<size_t>(rules.pairs.size(), 1) + v;
}

double log_gap(int64_t a, int64_t b) {
    return std::fabs(std::log(double(std::max<int64_t>(a, 1)) / double(std::max<int64_t>(b, 1))));
}

// `p`'s knobs where they are offered for `tiling`'s tiling, else the first choice of each.
SchedulePoint with_knobs_of(const TilingRules &rules, SchedulePoint tiling, const SchedulePoint &p) {
    const KnobChoices &k = rules.knobs;
    auto has = [](const auto &v, const auto &x) { return std::find(v.begin(), v.end(), x) != v.end(); };
    if (has(k.outer_orders, p.outer_order)) tiling.outer_order = p.outer_order;
    tiling.tile_order = tile_order_matters(tiling) && !p.tile_order.empty() &&
                                std::find(k.tile_orders.begin() + 1, k.tile_orders.end(), p.tile_order) !=
                                    k.tile_orders.end()
                            ? p.tile_order
                            : std::vector<std::string>{};
    tiling.parallel_loops = p.parallel_loops;
    snap_parallel_loops(k, tiling);
    if (has(k.pack_prefetch, std::make_pair(p.packed, p.prefetch))) {
        tiling.packed = p.packed;
        tiling.prefetch = p.prefetch;
    } else if (has(k.pack_prefetch, std::make_pair(p.packed, 0))) {
        tiling.packed = p.packed;
        tiling.prefetch = 0;
    }
    if (has(k.unroll_choices, p.unroll)) tiling.unroll = p.unroll;
    if (has(k.stage_plans, StagePlan{p.stages, p.fast_math})) {
        tiling.stages = p.stages;
        tiling.fast_math = p.fast_math;
    }
    if (has(k.channel_orders, p.channels_innermost)) tiling.channels_innermost = p.channels_innermost;
    tiling.amx_tile = p.amx_tile && has(k.amx_tiles, true) && amx_tile_fits(k, tiling);
    return tiling;
}

// Vector widths on the innermost axis (extent `e0`): the target's `lanes`, and half of it where that
// leaves no remainder but the full width would (56 = 7 x 8 on a 16-lane machine); 1 when neither fits.
std::vector<int> vector_widths_for(int64_t e0, int lanes) {
    std::vector<int> widths;
    if (e0 >= lanes) widths.push_back(lanes);
    int half = lanes / 2;
    if (half >= 4 && e0 >= half && e0 % lanes != 0 && (e0 % half == 0 || e0 < lanes)) widths.push_back(half);
    if (widths.empty()) widths.push_back(1);
    return widths;
}

// Whether axis `i` (of `extents`, innermost first) is a lone row under vectors on the innermost
// axis: the second innermost, with no rows beside it (the third axis has one step), as a
// channel-blocked 1x1 convolution's pixels flattened by its view (ComputeDef::views). Measured
// at 1 thread: 28 of its pixels x one vector of channels, 1.2-1.7x 14 x 2 vectors or 7 x 4.
bool lone_row(size_t i, const std::vector<int64_t> &extents, int vector_axis) {
    return i == 1 && vector_axis == 0 && extents.size() > 2 && extents[2] == 1;
}

// An outer axis may carry the vectors instead of the innermost one (output channels of a
// convolution whose rows, 7 or 14 long, do not fill one vector): offered for a fused reduction
// whose innermost output axis is shorter than a full vector, or leaves a partial one where
// `tail_rows` (core/ConvWindow.h channel_vectors_for_tail_rows: a 3x3, or a 1x1 over 256 channels
// or more, with rows of 28 or 56), on the second and third innermost axes whose extents are whole
// vectors. Appends (lanes, axis) to the rules' vector choices. Not for the other rows that merely
// leave a tail: there the row already fills 87% of its lanes, and on 2026-11-25 a quiet 24-trial
// tuning of conv 56x56x64->256 1x1 spent 21 trials on channel-vector points (best 84.6 GFLOP/s)
// against 151.6 for the row points, since neither the roofline nor the bundled model (no
// vector-axis feature) tells the two apart yet.
void add_outer_vector_axes(TilingRules &s, const std::vector<int64_t> &extents, int lanes, bool fusable,
                           bool tail_rows) {
    if (!fusable || lanes <= 1 || extents.empty()) return;
    if (extents[0] >= lanes && !tail_rows) return;
    for (size_t i = 1; i < std::min<size_t>(3, extents.size()); i++) {
        if (extents[i] % lanes != 0) continue;
        s.vector_widths.push_back(lanes);
        s.vector_axes.push_back(int(i));
    }
}

std::vector<int64_t> axis_extents(const TilingRules &s) {
    std::vector<int64_t> extents;
    for (const AxisOptions &a : s.axes) extents.push_back(a.extent);
    return extents;
}

// Register-tile extents of the axis `i` places from the innermost (`extents`, innermost first), under
// the vector choice (width `vw` on axis `vector_axis`).
// `shared_fourth`: an operand of the main reduction does not depend on the fourth axis (a
// channel-blocked convolution's input does not depend on its output-channel blocks).
std::vector<int64_t> axis_regs(size_t i, const std::vector<int64_t> &extents, int vw, int vector_axis,
                               bool shared_fourth) {
    const int64_t extent = extents[i];
    if (int(i) == vector_axis) return innermost_regs(vw, extent);
    if (i <= 1) return row_regs(extent, lone_row(i, extents, vector_axis));
    // The fourth axis joins the register tile where an operand is shared along it: a
    // channel-blocked convolution's output-channel blocks, beside a lone row (a flattened 1x1,
    // whose third axis has one step) or beside rows of pixels (a 3x3 or a strided 1x1), so that
    // one broadcast input value feeds a vector of every block. Measured at 1 thread on an AMD
    // Zen 5 host, 56x56x64->256: 8 pixels x 2 blocks 257-261 GFLOP/s, 6 x 4 259, against 239 for
    // 28 x 1 (every FMA its own broadcast load beside 1 weight load).
    if (i == 2 || (i == 3 && (lone_row(1, extents, vector_axis) || (vector_axis == 0 && shared_fourth)))) {
        // A third axis (output channels of a convolution, the batch of a batched matmul) may
        // join the register tile: each loaded input vector then serves several outputs.
        return tiling::third_axis_regs(extent);
    }
    return {1};
}

// Whether some tensor the main reduction `ms` reads does not depend on the output axis `i` places
// from the innermost of `out` (false when `out` has no such axis).
bool operand_shared_along(const Statement &ms, const Statement &out, size_t i) {
    if (i >= out.vars.size()) return false;
    const std::string &var = out.vars[out.vars.size() - 1 - i];
    const std::vector<const ExprNode *> read = accesses(ms);
    return std::any_of(read.begin(), read.end(), [&](const ExprNode *a) { return !mentions_var(*a, var); });
}

// The options of each output axis, innermost first: register tiles, and cache tiles for the three
// innermost axes (the outer ones are not tiled).
// A register tile is the union over the vector choices.
std::vector<AxisOptions> axis_options(const Statement &out, const BoundShape &shape, const TilingRules &s) {
    std::vector<AxisOptions> axes;
    const size_t rank = out.vars.size();
    std::vector<int64_t> extents;
    for (size_t i = 0; i < rank; i++) extents.push_back(shape.var_extent(out, out.vars[rank - 1 - i]));
    for (size_t i = 0; i < rank; i++) {
        AxisOptions a;
        a.var = out.vars[rank - 1 - i];
        a.extent = extents[i];
        std::set<int64_t> regs;
        for (size_t v = 0; v < s.vector_widths.size(); v++) {
            for (int64_t r : axis_regs(i, extents, s.vector_widths[v], s.vector_axes[v], s.shared_fourth)) regs.insert(r);
        }
        a.regs.assign(regs.begin(), regs.end());
        if (i < 3) {
            std::set<int64_t> all;
            for (int64_t r : a.regs) {
                for (int64_t t : tile_options(r, a.extent)) all.insert(t);
            }
            a.tiles.assign(all.begin(), all.end());
        } else {
            a.tiles = {1};
        }
        axes.push_back(a);
    }
    return axes;
}

// True when the outermost reduction loop of `ms` steps over blocks of channels: kWindowSteps steps
// or more, each over at least kBlockStepProducts products of the loops inside it.
bool outermost_steps_over_blocks(const Statement &ms, const BoundShape &shape) {
    if (ms.reduce_vars.size() < 2 || shape.eval(ms.reduce_vars.front().extent) < kWindowSteps) return false;
    int64_t inside = 1;
    for (size_t i = 1; i < ms.reduce_vars.size(); i++) inside *= shape.eval(ms.reduce_vars[i].extent);
    return inside >= kBlockStepProducts;
}

// The reduction options of the main statement of `def`, innermost first: blocking pays on the
// longest reduction axis (k of a matmul, input channels of a convolution), in blocks of 16, and
// where the op streams its operands (core/Streaming.h: a GEMV) in blocks of a few rows; and on an
// outermost loop over channel blocks (conv2d_nchwc's CB), in blocks of a few steps, without which
// one output-channel block's weights (CB x 9 KiB at 3 x 3) overflow L1 from CB = 8 on. The others
// stay whole.
std::vector<ReduceOptions> reduce_options(const ComputeDef &def, const BoundShape &shape) {
    const Statement &ms = main_statement(def);
    std::vector<ReduceOptions> reduce;
    const ReduceVar *longest = longest_reduction(ms, shape);
    const bool block_steps = outermost_steps_over_blocks(ms, shape);
    const bool streaming = streams_operands(def, shape);
    for (auto it = ms.reduce_vars.rbegin(); it != ms.reduce_vars.rend(); ++it) {
        int64_t e = shape.eval(it->extent);
        std::set<int64_t> blocks{e};
        if (&*it == longest) {
            for (int64_t b : block_options(e)) blocks.insert(b);
            if (streaming) {
                for (int64_t b : streaming_blocks(e)) blocks.insert(b);
            }
        }
        if (block_steps && std::next(it) == ms.reduce_vars.rend()) {
            for (int64_t b : step_block_options(e)) blocks.insert(b);
        }
        reduce.push_back({it->name, e, {blocks.begin(), blocks.end()}});
    }
    return reduce;
}

// The (register tile, cache tile) pairs per vector width and axis (TilingRules::pairs).
std::vector<std::vector<std::vector<std::pair<int64_t, int64_t>>>> axis_pairs(const TilingRules &s) {
    std::vector<std::vector<std::vector<std::pair<int64_t, int64_t>>>> pairs;
    const std::vector<int64_t> extents = axis_extents(s);
    for (size_t v = 0; v < s.vector_widths.size(); v++) {
        std::vector<std::vector<std::pair<int64_t, int64_t>>> per_axis;
        for (size_t i = 0; i < s.axes.size(); i++) {
            const AxisOptions &a = s.axes[i];
            per_axis.push_back(make_axis_pairs(axis_regs(i, extents, s.vector_widths[v], s.vector_axes[v], s.shared_fourth),
                                               a.extent,
                                               a.tiles.size() == 1));
        }
        pairs.push_back(std::move(per_axis));
    }
    return pairs;
}

// Packing: any subset of the main statement's inputs (those a stage group reads; none unless the
// main statement is `fusable`); prefetching while one is read unpacked.
std::vector<std::pair<std::vector<std::string>, int>> pack_prefetch_choices(const ComputeDef &def,
                                                                            const std::vector<StageGroup> &groups,
                                                                            bool fusable) {
    std::vector<std::string> ins;
    if (fusable) {
        for (const TensorDecl *t : def.inputs()) {
            for (const auto &g : groups) {
                if (g.tensor == t->name && std::find(ins.begin(), ins.end(), t->name) == ins.end()) ins.push_back(t->name);
            }
        }
    }
    std::vector<std::pair<std::vector<std::string>, int>> choices;
    for (uint32_t mask = 0; mask < (1u << ins.size()); mask++) {
        std::vector<std::string> c;
        for (size_t i = 0; i < ins.size(); i++) {
            if (mask & (1u << i)) c.push_back(ins[i]);
        }
        choices.push_back({c, 0});
        if (fusable && c.size() < ins.size()) choices.push_back({c, kPrefetchDistance});
    }
    return choices;
}

// The knob choices for these axes: loop orders, parallel loops (for `threads` cores), packing and
// prefetching, unrolling.
KnobChoices knob_choices(const ComputeDef &def, const std::vector<AxisOptions> &axes,
                         const std::vector<StageGroup> &groups, int threads, bool fusable) {
    KnobChoices k;
    std::vector<std::string> natural;
    for (const auto &a : axes) natural.push_back(a.var);
    for (const auto &a : axes) k.extents.push_back(a.extent);
    k.cores = std::max(1, threads);
    k.outer_orders = outer_orders(natural);
    k.tile_orders = {natural};
    if (natural.size() >= 2) {
        auto swapped = natural;
        std::swap(swapped[0], swapped[1]);
        k.tile_orders.push_back(swapped);
    }
    k.pack_prefetch = pack_prefetch_choices(def, groups, fusable);
    k.unroll_choices = {true, false};
    return k;
}

// The stage knob: today's (nothing placed) and every offered placement, each with exact math and,
// where it changes the op, with fast math.
std::vector<StagePlan> stage_plan_choices(const ComputeDef &def, const BoundShape &shape, const Target &target) {
    std::vector<bool> fast = fast_math_applies(def) ? std::vector<bool>{false, true} : std::vector<bool>{false};
    std::vector<StagePlan> plans;
    for (bool f : fast) plans.push_back({{}, f});
    for (const auto &placement : offered_placements(def, shape, target)) {
        for (bool f : fast) plans.push_back({placement, f});
    }
    return plans;
}

// The smallest tiling the rules offer (narrowest vector width, smallest register tiles as cache
// tiles, smallest reduction blocks) in the first outer order: what a group must fit at the least.
SchedulePoint smallest_point(const TilingRules &s) {
    SchedulePoint smallest;
    const size_t narrowest =
        size_t(std::min_element(s.vector_widths.begin(), s.vector_widths.end()) - s.vector_widths.begin());
    smallest.vector_width = s.vector_widths[narrowest];
    smallest.vector_axis = s.vector_axes[narrowest];
    for (size_t i = 0; i < s.axes.size(); i++) {
        int64_t r = axis_regs(i, axis_extents(s), smallest.vector_width, smallest.vector_axis, s.shared_fourth).front();
        smallest.axes.push_back({s.axes[i].var, r, r});
    }
    for (const auto &r : s.reduce) smallest.reduce.push_back({r.var, r.blocks.front()});
    smallest.outer_order = s.knobs.outer_orders.front();
    return smallest;
}

// The footprint plan for the points of `s` as its groups stand.
std::shared_ptr<const FootprintPlan> footprint_plan(const ComputeDef &def, const BoundShape &shape,
                                                    const Target &target, const TilingRules &s) {
    std::vector<std::string> axis_vars, reduce_vars;
    for (const auto &a : s.axes) axis_vars.push_back(a.var);
    for (const auto &r : s.reduce) reduce_vars.push_back(r.var);
    return std::make_shared<const FootprintPlan>(def, shape, target, s.groups, axis_vars, reduce_vars);
}

// One vector width's options, each coordinate's (axes, then reductions) sorted by its own term of
// the distance to the point being repaired.
struct NearestOptions {
    std::vector<std::vector<size_t>> order;  // per coordinate: option indices, nearest first
    std::vector<std::vector<double>> cost;   // per coordinate: the term of each, in that order
    double base = 0;                         // the vector width's term
};

// Appends a coordinate whose options have the distance terms `terms`, sorted stably by them.
void add_coordinate(NearestOptions &o, const std::vector<double> &terms) {
    std::vector<size_t> order(terms.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return terms[a] < terms[b]; });
    std::vector<double> sorted;
    for (size_t i : order) sorted.push_back(terms[i]);
    o.order.push_back(std::move(order));
    o.cost.push_back(std::move(sorted));
}

// Per vector width of the rules, every coordinate's options ordered by their distance to `p`.
std::vector<NearestOptions> options_by_distance(const TilingRules &rules, const SchedulePoint &p) {
    std::vector<NearestOptions> per_width(rules.vector_widths.size());
    for (size_t v = 0; v < rules.vector_widths.size(); v++) {
        NearestOptions &o = per_width[v];
        o.base = (rules.vector_widths[v] == p.vector_width ? 0 : 1) + (rules.vector_axes[v] == p.vector_axis ? 0 : 1);
        for (size_t i = 0; i < rules.axes.size(); i++) {
            std::vector<double> terms;
            for (auto [r, t] : rules.pairs[v][i]) {
                terms.push_back(log_gap(t, p.axes[i].tile) + log_gap(r, p.axes[i].reg));
            }
            add_coordinate(o, terms);
        }
        for (size_t j = 0; j < rules.reduce.size(); j++) {
            std::vector<double> terms;
            for (int64_t b : rules.reduce[j].blocks) terms.push_back(log_gap(b, p.reduce[j].block));
            add_coordinate(o, terms);
        }
    }
    return per_width;
}

// A tiling on the best-first walk: vector width `v` and, per coordinate, its position in the
// sorted options.
struct WalkState {
    double cost;
    uint64_t code;  // ties broken by the code: deterministic
    size_t v;
    std::vector<size_t> rank;
    bool operator>(const WalkState &o) const { return cost != o.cost ? cost > o.cost : code > o.code; }
};

// The option index of each coordinate at the positions `rank`.
std::vector<size_t> option_indices(const NearestOptions &o, const std::vector<size_t> &rank) {
    std::vector<size_t> idx(rank.size());
    for (size_t c = 0; c < rank.size(); c++) idx[c] = o.order[c][rank[c]];
    return idx;
}

// The walk's state at positions `rank` of width v's sorted options: its distance and its code.
WalkState walk_state(const TilingRules &rules, const std::vector<NearestOptions> &per_width, size_t v,
                     std::vector<size_t> rank) {
    const NearestOptions &o = per_width[v];
    double cost = o.base;
    for (size_t c = 0; c < rank.size(); c++) cost += o.cost[c][rank[c]];
    uint64_t code = tiling_code(rules, v, option_indices(o, rank));
    return WalkState{cost, code, v, std::move(rank)};
}

// The walk's frontier, nearest first, and the tilings ever put on it.
struct Walk {
    std::priority_queue<WalkState, std::vector<WalkState>, std::greater<WalkState>> frontier;
    std::unordered_set<uint64_t> seen;

    void visit(WalkState s) {
        if (seen.insert(s.code).second) frontier.push(std::move(s));
    }
};

// A walk starting from each vector width's nearest tiling (widths with an empty coordinate have
// none).
Walk start_walk(const TilingRules &rules, const std::vector<NearestOptions> &per_width) {
    Walk walk;
    for (size_t v = 0; v < rules.vector_widths.size(); v++) {
        const auto &order = per_width[v].order;
        if (std::any_of(order.begin(), order.end(), [](const auto &o) { return o.empty(); })) continue;
        walk.visit(walk_state(rules, per_width, v, std::vector<size_t>(order.size(), 0)));
    }
    return walk;
}

// Puts on the walk every tiling one step further than `s`: one coordinate at its next option.
void visit_neighbours(Walk &walk, const TilingRules &rules, const std::vector<NearestOptions> &per_width,
                      const WalkState &s) {
    for (size_t c = 0; c < s.rank.size(); c++) {
        if (s.rank[c] + 1 >= per_width[s.v].order[c].size()) continue;
        std::vector<size_t> next = s.rank;
        next[c]++;
        walk.visit(walk_state(rules, per_width, s.v, std::move(next)));
    }
}

}  // namespace

TilingRules make_tiling_rules(const ComputeDef &def, const BoundShape &shape, const Target &target, int threads) {
    TilingRules s;
    s.graph = build_stages(def, target);
    s.groups = group_stages(s.graph);
    const Statement &out = *def.statement_for(def.output().name);
    const Statement &ms = main_statement(def);
    const bool fusable = ms.reduce != ReduceKind::None && main_is_fusable(def);
    const int lanes = op_vector_lanes(def, target);
    std::vector<int64_t> extents;  // innermost first
    for (auto it = out.vars.rbegin(); it != out.vars.rend(); ++it) extents.push_back(shape.var_extent(out, *it));
    s.vector_widths = vector_widths_for(extents.front(), lanes);
    s.vector_axes.assign(s.vector_widths.size(), 0);
    const bool tail_rows = fusable && channel_vectors_for_tail_rows(ms, shape, extents.front(), lanes);
    add_outer_vector_axes(s, extents, lanes, fusable, tail_rows);
    s.vector_width = s.vector_widths.front();
    s.shared_fourth = fusable && operand_shared_along(ms, out, 3);
    s.axes = axis_options(out, shape, s);
    if (fusable) s.reduce = reduce_options(def, shape);
    s.pairs = axis_pairs(s);
    s.knobs = knob_choices(def, s.axes, s.groups, threads, fusable);
    s.knobs.stage_plans = stage_plan_choices(def, shape, target);
    if (fusable && window_inside_channels(ms, shape, kWindowSteps)) s.knobs.channel_orders = {false, true};
    if (fusable) s.knobs.dot_product = dot_product_group(def, shape, target);
    if (s.knobs.dot_product) s.knobs.channel_orders = {false};  // the group loop is innermost either way
    if (fusable && amx_tile_offered(def, shape, target)) s.knobs.amx_tiles = {false, true};
    for (const ReduceOptions &r : s.reduce) s.knobs.reduce_extents.push_back(r.extent);
    s.most_tiles = most_cache_tiles(s);
    // Groups that cannot fit their buffer even under the smallest tiling split into subgroups.
    s.groups = split_oversized_groups(def, shape, target, s.graph, s.groups, smallest_point(s));
    s.footprint_plan = footprint_plan(def, shape, target, s);
    return s;
}

std::vector<int> parallel_choices(const KnobChoices &knobs, const SchedulePoint &p) {
    return parallel_loop_choices(cache_loop_trips(p, knobs.extents), knobs.cores);
}

size_t loop_plan_count(const KnobChoices &knobs, const SchedulePoint &tiling) {
    if (knobs.cores <= 1) return knobs.outer_orders.size();
    SchedulePoint p = tiling;
    size_t n = 0;
    for (const auto &order : knobs.outer_orders) {
        p.outer_order = order;
        n += parallel_choices(knobs, p).size();
    }
    return n;
}

void set_loop_plan(const KnobChoices &knobs, SchedulePoint &p, size_t plan) {
    for (const auto &order : knobs.outer_orders) {
        p.outer_order = order;
        std::vector<int> choices = parallel_choices(knobs, p);
        if (plan < choices.size()) {
            p.parallel_loops = choices[plan];
            return;
        }
        plan -= choices.size();
    }
}

void snap_parallel_loops(const KnobChoices &knobs, SchedulePoint &p) {
    std::vector<int> choices = parallel_choices(knobs, p);
    if (std::find(choices.begin(), choices.end(), p.parallel_loops) == choices.end()) p.parallel_loops = choices.front();
}

bool amx_tile_fits(const KnobChoices &knobs, const SchedulePoint &p) {
    if (!amx_register_tile(p) || p.reduce.size() != knobs.reduce_extents.size()) return false;
    for (size_t j = 0; j < p.reduce.size(); j++) {
        if (p.reduce[j].block != knobs.reduce_extents[j]) return false;
    }
    return true;
}

size_t amx_choice_count(const KnobChoices &knobs, const SchedulePoint &tiling) {
    return amx_tile_fits(knobs, tiling) ? knobs.amx_tiles.size() : 1;
}

bool tile_order_matters(const SchedulePoint &p) {
    return p.axes.size() >= 2 && p.axes[0].tile > p.axes[0].reg && p.axes[1].tile > p.axes[1].reg;
}

bool offered_tiling(const TilingRules &rules, const SchedulePoint &p) {
    int v = vector_width_index(rules, p.vector_width, p.vector_axis);
    if (v < 0 || !same_variables(rules, p)) return false;
    for (size_t i = 0; i < p.axes.size(); i++) {
        const auto &pairs = rules.pairs[size_t(v)][i];
        if (std::find(pairs.begin(), pairs.end(), std::make_pair(p.axes[i].reg, p.axes[i].tile)) == pairs.end()) {
            return false;
        }
    }
    for (size_t j = 0; j < p.reduce.size(); j++) {
        const auto &blocks = rules.reduce[j].blocks;
        if (std::find(blocks.begin(), blocks.end(), p.reduce[j].block) == blocks.end()) return false;
    }
    return whole_register_tiles_if_blocked(rules, p) && enough_tiles(rules, p);
}

bool offered_knobs(const KnobChoices &k, const SchedulePoint &p) {
    auto has = [](const auto &v, const auto &x) { return std::find(v.begin(), v.end(), x) != v.end(); };
    bool tile_ok = p.tile_order.empty() ||
                   (tile_order_matters(p) &&
                    std::find(k.tile_orders.begin() + 1, k.tile_orders.end(), p.tile_order) != k.tile_orders.end());
    return has(k.outer_orders, p.outer_order) && tile_ok && has(parallel_choices(k, p), p.parallel_loops) &&
           has(k.pack_prefetch, std::make_pair(p.packed, p.prefetch)) && has(k.unroll_choices, p.unroll) &&
           has(k.stage_plans, StagePlan{p.stages, p.fast_math}) && has(k.channel_orders, p.channels_innermost) &&
           p.dot_product == k.dot_product && (!p.amx_tile || (has(k.amx_tiles, true) && amx_tile_fits(k, p)));
}

std::vector<Footprint> footprints(const TilingRules &rules, const ComputeDef &def, const BoundShape &shape,
                                  const Target &target, const SchedulePoint &p) {
    if (rules.footprint_plan && rules.footprint_plan->matches(p)) return rules.footprint_plan->footprints(p);
    return footprints(def, shape, target, rules.groups, p);
}

bool fits(const TilingRules &rules, const ComputeDef &def, const BoundShape &shape, const Target &target,
          const SchedulePoint &p) {
    // Knobs change the order and placement of loops, not how much data a tile touches.
    if (rules.footprint_plan && rules.footprint_plan->matches(p)) return rules.footprint_plan->fits(p);
    return fits_buffers(target, footprints(def, shape, target, rules.groups, p));
}

bool is_legal_point(const TilingRules &rules, const ComputeDef &def, const BoundShape &shape, const Target &target,
                    const SchedulePoint &p) {
    return offered_tiling(rules, p) && offered_knobs(rules.knobs, p) && fits(rules, def, shape, target, p);
}

std::optional<SchedulePoint> repair_point(const TilingRules &rules, const ComputeDef &def, const BoundShape &shape,
                                          const Target &target, const SchedulePoint &p, int max_checks) {
    if (!same_variables(rules, p)) return std::nullopt;
    if (is_legal_point(rules, def, shape, target, p)) return p;
    // The distance is a sum of one term per coordinate, so with each coordinate's options sorted by
    // their own term, a best-first walk that steps one coordinate to its next option visits the
    // tilings in order of distance: the first legal one is the nearest.
    const std::vector<NearestOptions> per_width = options_by_distance(rules, p);
    Walk walk = start_walk(rules, per_width);
    int checks = 0;
    while (!walk.frontier.empty() && checks < max_checks) {
        WalkState s = walk.frontier.top();
        walk.frontier.pop();
        SchedulePoint tiling = tiling_at(rules, s.v, option_indices(per_width[s.v], s.rank));
        if (whole_register_tiles_if_blocked(rules, tiling) && enough_tiles(rules, tiling)) {
            checks++;
            if (fits(rules, def, shape, target, tiling)) return with_knobs_of(rules, tiling, p);
        }
        visit_neighbours(walk, rules, per_width, s);
    }
    return std::nullopt;
}

std::vector<SchedulePoint> sample_legal_points(const TilingRules &rules, const ComputeDef &def,
                                               const BoundShape &shape, const Target &target, size_t n,
                                               uint64_t seed, size_t max_draws) {
    // Uniform over legal points: a vector width in proportion to its number of tilings, each
    // coordinate uniform, every knob uniform (a tile order other than the natural one is drawn as
    // often as where it matters, and rejected where it does not), then kept when legal.
    const KnobChoices &k = rules.knobs;
    std::vector<double> weight;
    for (size_t v = 0; v < rules.vector_widths.size(); v++) {
        double w = 1;
        for (size_t d : option_counts(rules, v)) w *= double(d);
        weight.push_back(w);
    }
    std::vector<SchedulePoint> out;
    if (std::accumulate(weight.begin(), weight.end(), 0.0) == 0) return out;
    std::mt19937_64 rng(seed);
    std::discrete_distribution<size_t> pick_width(weight.begin(), weight.end());
    auto uniform = [&](size_t count) { return std::uniform_int_distribution<size_t>(0, count - 1)(rng); };
    // A parallel choice is drawn among as many as an order can have and rejected past the order's.
    const size_t most_parallel = k.cores > 1 ? kMostParallelChoices : 1;
    const uint64_t knob_combinations = k.outer_orders.size() * k.tile_orders.size() * most_parallel *
                                       k.pack_prefetch.size() * k.unroll_choices.size() * k.stage_plans.size() *
                                       k.channel_orders.size() * k.amx_tiles.size();
    std::unordered_map<uint64_t, bool> tiling_fits;  // capacity checks, by tiling code
    std::unordered_set<uint64_t> chosen;             // (tiling, knobs) codes drawn and kept
    for (size_t draw = 0; draw < max_draws && out.size() < n; draw++) {
        size_t v = pick_width(rng);
        std::vector<size_t> dims = option_counts(rules, v), idx(dims.size());
        for (size_t c = 0; c < dims.size(); c++) idx[c] = uniform(dims[c]);
        size_t outer = uniform(k.outer_orders.size()), tile = uniform(k.tile_orders.size()),
               parallel = uniform(most_parallel), pack = uniform(k.pack_prefetch.size()),
               unroll = uniform(k.unroll_choices.size());
        // Drawn only where there is a choice, so an op with one plan draws what it always did.
        size_t plan = k.stage_plans.size() > 1 ? uniform(k.stage_plans.size()) : 0;
        size_t channels = k.channel_orders.size() > 1 ? uniform(k.channel_orders.size()) : 0;
        size_t amx = k.amx_tiles.size() > 1 ? uniform(k.amx_tiles.size()) : 0;
        SchedulePoint p = tiling_at(rules, v, idx);
        if (tile > 0 && !tile_order_matters(p)) continue;
        if (amx > 0 && !amx_tile_fits(k, p)) continue;
        uint64_t code = tiling_code(rules, v, idx);
        uint64_t knobs =
            ((((((outer * k.tile_orders.size() + tile) * most_parallel + parallel) * k.pack_prefetch.size() +
             pack) * k.unroll_choices.size() + unroll) * k.stage_plans.size() + plan) * k.channel_orders.size() +
             channels) * k.amx_tiles.size() + amx;
        if (chosen.count(code * knob_combinations + knobs)) continue;
        if (!whole_register_tiles_if_blocked(rules, p) || !enough_tiles(rules, p)) continue;
        auto memo = tiling_fits.find(code);
        if (memo == tiling_fits.end()) memo = tiling_fits.emplace(code, fits(rules, def, shape, target, p)).first;
        if (!memo->second) continue;
        p.outer_order = k.outer_orders[outer];
        std::vector<int> offered = parallel_choices(k, p);
        if (parallel >= offered.size()) continue;
        p.tile_order = tile == 0 ? std::vector<std::string>{} : k.tile_orders[tile];
        p.parallel_loops = offered[parallel];
        p.packed = k.pack_prefetch[pack].first;
        p.prefetch = k.pack_prefetch[pack].second;
        p.unroll = k.unroll_choices[unroll];
        p.stages = k.stage_plans[plan].stages;
        p.fast_math = k.stage_plans[plan].fast_math;
        p.channels_innermost = k.channel_orders[channels];
        p.amx_tile = k.amx_tiles[amx];
        chosen.insert(code * knob_combinations + knobs);
        out.push_back(std::move(p));
    }
    return out;
}

}  // namespace opgen
