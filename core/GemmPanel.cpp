#include "core/GemmPanel.h"

#include "core/ConvWindow.h"
#include "core/StageGraph.h"
#include "core/Streaming.h"

#include <algorithm>

namespace opgen {

namespace {

// Register tile of the packed-panel GEMM: two vectors of the vector operand by 8 broadcast rows
// (16 accumulators: each broadcast serves two vectors, the FMA units' latency is covered).
constexpr int64_t kPanelVectors = 2;
constexpr int64_t kPanelRows = 8;
// The longest reduction block the tiling space offers short of the whole loop (core/TilingRules.cpp).
constexpr int64_t kLongestBlock = 1024;

// Steps of variable `var` in `ms` (an output variable's extent, a reduction's), 1 when unknown.
int64_t steps_of(const ComputeDef &def, const BoundShape &shape, const Statement &ms, const std::string &var) {
    for (const auto &r : ms.reduce_vars) {
        if (r.name == var) return shape.eval(r.extent);
    }
    const Statement &out = *def.statement_for(def.output().name);
    if (std::find(out.vars.begin(), out.vars.end(), var) != out.vars.end()) return shape.var_extent(out, var);
    return 1;
}

bool is_reduction(const Statement &ms, const std::string &var) {
    return std::any_of(ms.reduce_vars.begin(), ms.reduce_vars.end(), [&](const auto &r) { return r.name == var; });
}

// The capacity of the buffer a cache tile's panels live in (L2 on a CPU); 0 when unbounded.
int64_t cache_tile_capacity(const Target &target) {
    const BufferLevel *b = target.find_buffer(target.cache_tile_buffer(0));
    return b ? b->capacity : 0;
}

// Whether `access` reads along `vec` in its contiguous dimension and along a moving reduction
// loop in another.
bool loads_vectors(const ComputeDef &def, const BoundShape &shape, const Statement &ms, const ExprNode &access,
                   const std::string &vec) {
    if (access.args.empty()) return false;
    bool along_vec = false, along_reduction = false;
    for (size_t d = 0; d < access.args.size(); d++) {
        const bool contiguous = d + 1 == access.args.size();
        for (const auto &[var, coef] : affine_coefficients(access.args[d], shape)) {
            if (var.empty() || steps_of(def, shape, ms, var) <= 1) continue;
            if (contiguous && var == vec && coef == 1) {
                along_vec = true;
            } else if (contiguous || var == vec) {
                return false;
            } else if (is_reduction(ms, var)) {
                along_reduction = true;
            }
        }
    }
    return along_vec && along_reduction;
}

// Where the cache tiles (one per panel) are fewer than the cores, the rows axis' tile is cut in
// powers of two times its register tile (as the space offers them) until every core has one.
void give_every_core_rows(const ComputeDef &def, const BoundShape &shape, const Target &target, SchedulePoint &p,
                          size_t rows) {
    const Statement &out = *def.statement_for(def.output().name);
    int64_t tiles = 1;
    for (const AxisTiling &a : p.axes) tiles *= (shape.var_extent(out, a.var) + a.tile - 1) / a.tile;
    AxisTiling &r = p.axes[rows];
    const int64_t extent = shape.var_extent(out, r.var);
    if (tiles >= target.cores || extent <= r.reg) return;
    const int64_t per_core = (extent + target.cores - 1) / target.cores;
    int64_t tile = r.reg;
    while (tile * 2 <= per_core) tile *= 2;
    r.tile = tile;
}

}  // namespace

std::vector<std::string> vector_operands(const ComputeDef &def, const BoundShape &shape, const SchedulePoint &p) {
    std::vector<std::string> out;
    if (p.vector_width <= 1 || p.axes.empty() || !main_is_fusable(def)) return out;
    const Statement &ms = main_statement(def);
    const std::string &vec = p.axes[size_t(p.vector_axis)].var;
    for (const TensorDecl *t : def.inputs()) {
        const ExprNode *access = first_access(ms.body, t->name);
        if (access && loads_vectors(def, shape, ms, *access, vec)) out.push_back(t->name);
    }
    return out;
}

void stream_vector_panels(const ComputeDef &def, const BoundShape &shape, const Target &target, SchedulePoint &p,
                          size_t rows, const std::vector<std::string> &operands) {
    const Statement &out = *def.statement_for(def.output().name);
    const Statement &ms = main_statement(def);
    for (size_t i = 0; i < p.axes.size(); i++) {
        AxisTiling &a = p.axes[i];
        const int64_t extent = shape.var_extent(out, a.var);
        if (i == size_t(p.vector_axis)) {
            a.reg = a.tile = std::min(extent, kPanelVectors * p.vector_width);
        } else if (i == rows) {
            a.reg = std::min(extent, kPanelRows);
            a.tile = extent;
        } else {
            a.reg = a.tile = 1;
        }
    }
    give_every_core_rows(def, shape, target, p, rows);
    const int64_t panel_width = p.axes[size_t(p.vector_axis)].reg * dtype_bytes(def.output().dtype);
    const int64_t capacity = cache_tile_capacity(target);
    // A blocked reduction accumulates per cache tile, which must then hold whole register tiles.
    const bool may_block =
        std::all_of(p.axes.begin(), p.axes.end(), [](const AxisTiling &a) { return a.tile % a.reg == 0; });
    for (ReduceTiling &r : p.reduce) {
        r.block = steps_of(def, shape, ms, r.var);
        if (capacity <= 0 || !may_block || r.var != ms.reduce_vars.front().name) continue;
        // Halve the block (keeping it a divisor) while its panel takes more than a quarter; once
        // blocked, to at most kLongestBlock steps, the longest block the space offers.
        if (4 * panel_width * r.block <= capacity) continue;
        while (r.block % 2 == 0 && (4 * panel_width * r.block > capacity || r.block > kLongestBlock)) r.block /= 2;
    }
    p.channels_innermost = false;
    p.packed = operands;
}

bool panel_gemm_point(const ComputeDef &def, const BoundShape &shape, const Target &target, SchedulePoint &p) {
    const int lanes = op_vector_lanes(def, target);
    if (lanes <= 1 || p.vector_width != lanes || p.vector_axis != 0 || p.axes.size() < 2 || !p.stages.empty() ||
        !main_is_fusable(def) || streams_operands(def, shape)) {
        return false;
    }
    const Statement &ms = main_statement(def);
    if (ms.reduce != ReduceKind::Sum) return false;
    for (const auto &r : ms.reduce_vars) {
        if (slides_window(ms, r.name)) return false;
    }
    const Statement &out = *def.statement_for(def.output().name);
    if (shape.var_extent(out, p.axes[0].var) < kPanelVectors * lanes || shape.var_extent(out, p.axes[1].var) < 2) {
        return false;
    }
    std::vector<std::string> operands = vector_operands(def, shape, p);
    if (operands.empty()) return false;
    // An operand read across its rows (B of A B^T) is packed and tiled its own way (Schedule.cpp).
    for (const TensorDecl *t : def.inputs()) {
        if (dimension_indexed_by(ms, t->name, p.axes[0].var) > 0) return false;
    }
    stream_vector_panels(def, shape, target, p, 1, operands);
    return true;
}

}  // namespace opgen
