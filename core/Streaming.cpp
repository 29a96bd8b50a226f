#include "core/Streaming.h"

#include <algorithm>

namespace opgen {

namespace {

// Rows of the streamed operand read at once: few enough for the prefetchers to follow each.
constexpr int64_t kStreamingBlocks[] = {4, 8};

// Register tiles at most this many vectors wide: what the space offers (core/TilingRules.cpp).
constexpr int64_t kMaxRegisterVectors = 4;

// The cache tile of an axis of `extent` with register tile `reg` (whole register tiles, as a
// blocked reduction needs): the whole axis on one core where that is whole register tiles; else
// the largest power-of-two number of register tiles that leaves a tile for every core.
int64_t tile_per_core(int64_t extent, int64_t reg, int cores) {
    if (cores <= 1 && extent % reg == 0) return extent;
    int64_t tile = reg;
    while (tile * 2 <= extent && (extent + tile * 2 - 1) / (tile * 2) >= cores) tile *= 2;
    return tile;
}

// A blocked reduction needs cache tiles of whole register tiles: an axis whose tile is not one
// gets the largest power-of-two number of register tiles within it.
void whole_register_tiles(AxisTiling &a) {
    if (a.tile % a.reg == 0) return;
    int64_t tile = a.reg;
    while (tile * 2 <= a.tile) tile *= 2;
    a.tile = tile;
}

// Puts the vectorized axis' cache-tile loop outermost (orders are innermost first).
void vector_axis_outermost(SchedulePoint &p) {
    const std::string &v = p.axes[size_t(p.vector_axis)].var;
    auto it = std::find(p.outer_order.begin(), p.outer_order.end(), v);
    if (it == p.outer_order.end()) return;
    p.outer_order.erase(it);
    p.outer_order.push_back(v);
}

}  // namespace

bool streams_operands(const ComputeDef &def, const BoundShape &shape) {
    const Statement &ms = main_statement(def);
    if (ms.reduce == ReduceKind::None || !main_is_fusable(def)) return false;
    double bytes = min_bytes_moved(def, shape);
    return bytes > 0 && flop_count(def, shape) / bytes < kStreamingIntensity;
}

std::vector<int64_t> streaming_blocks(int64_t extent) {
    std::vector<int64_t> blocks;
    for (int64_t b : kStreamingBlocks) {
        if (b < extent && extent % b == 0) blocks.push_back(b);
    }
    return blocks;
}

const ReduceVar *longest_reduction(const Statement &ms, const BoundShape &shape) {
    const ReduceVar *longest = nullptr;
    for (auto it = ms.reduce_vars.rbegin(); it != ms.reduce_vars.rend(); ++it) {
        if (!longest || shape.eval(it->extent) > shape.eval(longest->extent)) longest = &*it;
    }
    return longest;
}

void place_streaming(const ComputeDef &def, const BoundShape &shape, const Target &target, SchedulePoint &p) {
    if (!streams_operands(def, shape) || p.axes.empty()) return;
    const ReduceVar *r = longest_reduction(main_statement(def), shape);
    if (!r) return;
    std::vector<int64_t> blocks = streaming_blocks(shape.eval(r->extent));
    for (ReduceTiling &t : p.reduce) {
        if (t.var == r->name && !blocks.empty()) t.block = blocks.back();
    }
    AxisTiling &a = p.axes[size_t(p.vector_axis)];
    int64_t extent = shape.var_extent(*def.statement_for(def.output().name), a.var);
    int vw = std::max(p.vector_width, 1);
    if (vw > 1 && extent >= vw) a.reg = std::min<int64_t>(extent / vw, kMaxRegisterVectors) * vw;
    a.tile = tile_per_core(extent, a.reg, target.cores);
    for (AxisTiling &other : p.axes) whole_register_tiles(other);
    vector_axis_outermost(p);
    p.parallel_loops = 1;
}

}  // namespace opgen
