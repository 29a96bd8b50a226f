#include "codegen/GenericWeights.h"

#include "codegen/GenericCode.h"

#include <algorithm>

namespace opgen {

namespace {

bool is_reduce_var(const Statement &ms, const Expr &e) {
    return e->kind == ExprKind::IndexVar &&
           std::any_of(ms.reduce_vars.begin(), ms.reduce_vars.end(), [&](const ReduceVar &r) { return r.name == e->name; });
}

// Dimensions of `access` inside Halide dimension `d` (the contiguous ones) indexed by a reduction
// variable.
int reduce_dims_inside(const Statement &ms, const ExprNode &access, int d) {
    int n = 0, rank = int(access.args.size());
    for (int inner = 0; inner < d; inner++) n += is_reduce_var(ms, access.args[size_t(rank - 1 - inner)]);
    return n;
}

// Position of the loop `loop` among the output's loops (innermost first), or -1.
int loop_position(const LoweredOp &op, const std::string &loop) {
    if (loop.empty()) return -1;
    const std::vector<Halide::Internal::Dim> &dims = op.output.function().definition().schedule().dims();
    for (size_t i = 0; i < dims.size(); i++) {
        if (names_loop(dims[i].var, loop)) return int(i);
    }
    return -1;
}

// The output loop the main statement's accumulator is computed at, or "" (at root, inlined, or
// at another Func's loop).
std::string accumulator_loop(const LoweredOp &op, const LoweredStage &st) {
    Halide::LoopLevel at = st.acc.function().schedule().compute_level();
    at.lock();
    if (at.is_root() || at.is_inlined() || at.func() != op.output.name()) return "";
    return at.var().name();
}

// Register tiles that must reuse a panel for its copy (a scalar loop over the block's weights) to
// cost little beside the tiles' multiply-adds: at 4 (a 56x56 winner, rows in tiles of 4) the
// panelled kernel ran 1.30x a full tune at its own shape against 1.06x without; at 28 (the 28x28
// winner) 1.19x against 1.21x, and 1.06x against 1.13x at 56x56 (measured on an AMD EPYC host).
constexpr int64_t kPanelReuse = 8;

// Whether a panel computed at `axis`'s register loop is reused enough: that loop is outside the
// accumulator's, and the register loops of the other axes inside it run at least kPanelReuse
// register tiles per panel at the tuned shape.
bool panel_is_reused(const LoweredOp &op, const SchedulePoint &point, const AxisTiling &axis, int acc_at) {
    int at = loop_position(op, axis.var + "__r");
    if (at < 0 || acc_at < 0 || acc_at >= at) return false;
    int64_t tiles = 1;
    for (const AxisTiling &other : point.axes) {
        int inner = loop_position(op, other.var + "__r");
        if (other.var != axis.var && inner >= 0 && inner < at) tiles *= (other.tile + other.reg - 1) / other.reg;
    }
    return tiles >= kPanelReuse;
}

// The register-tiled axis whose panel of `input` pack_generic_weights would compute, or nullptr.
const AxisTiling *weight_axis(const LoweredOp &op, const SchedulePoint &point, const std::string &input, int acc_at) {
    const Statement &ms = main_statement(*op.def);
    const ExprNode *access = find_access(ms.body, input);
    const std::string &vector_var = point.axes[size_t(point.vector_axis)].var;
    if (!access || std::find(point.packed.begin(), point.packed.end(), input) != point.packed.end()) return nullptr;
    for (const Expr &index : access->args) {
        if (mentions_var(index, vector_var)) return nullptr;
    }
    for (const AxisTiling &a : point.axes) {
        if (a.reg <= 1 || a.var == vector_var) continue;
        int d = dimension_indexed_by(ms, input, a.var);
        if (d >= 0 && reduce_dims_inside(ms, *access, d) >= 2 && panel_is_reused(op, point, a, acc_at)) return &a;
    }
    return nullptr;
}

// The reduction no longer reads `param` itself: its prefetches would fetch what nothing loads.
void drop_prefetches(LoweredStage &st, const Halide::ImageParam &param) {
    Halide::Internal::Function f = st.acc.function();
    for (size_t u = 0; u < f.updates().size(); u++) {
        std::vector<Halide::Internal::PrefetchDirective> &p = f.update(int(u)).schedule().prefetches();
        p.erase(std::remove_if(p.begin(), p.end(),
                               [&](const Halide::Internal::PrefetchDirective &d) { return d.name == param.name(); }),
                p.end());
    }
}

// The panel of `input` at `axis`'s register loop, laid out with that axis's dimension innermost
// and bounded to its register tile.
void pack_weight(LoweredOp &op, LoweredStage &st, const std::string &input, const AxisTiling &axis) {
    const Statement &ms = main_statement(*op.def);
    int d = dimension_indexed_by(ms, input, axis.var);
    Halide::Func panel = op.input_funcs.at(input).in(st.acc);
    panel.compute_at(op.output, Halide::Var(axis.var + "__r"));
    std::vector<Halide::Var> args = panel.args();
    std::vector<Halide::Var> order{args[size_t(d)]};
    for (size_t i = 0; i < args.size(); i++) {
        if (int(i) != d) order.push_back(args[i]);
    }
    panel.reorder_storage(order);
    panel.bound_extent(args[size_t(d)], int(axis.reg));
    // Its size follows the symbolic channel count: on the pseudostack (GenericCode.cpp,
    // reuse_stage_buffers), allocated once, not at every block.
    panel.store_in(Halide::MemoryType::Stack);
    for (size_t i = 0; i < op.params.size(); i++) {
        if (op.param_names[i] == input) drop_prefetches(st, op.params[i]);
    }
}

}  // namespace

std::vector<std::string> generic_weight_panels(const LoweredOp &op, const SchedulePoint &point) {
    const LoweredStage *st = op.find_stage(main_statement(*op.def).tensor);
    if (!st || !st->is_reduction()) return {};
    int acc_at = loop_position(op, accumulator_loop(op, *st));
    std::vector<std::string> names;
    for (const std::string &input : op.param_names) {
        if (weight_axis(op, point, input, acc_at)) names.push_back(input);
    }
    return names;
}

void pack_generic_weights(LoweredOp &op, const SchedulePoint &point) {
    const std::vector<std::string> names = generic_weight_panels(op, point);
    if (names.empty()) return;
    LoweredStage &st = op.stage(main_statement(*op.def).tensor);
    int acc_at = loop_position(op, accumulator_loop(op, st));
    for (const std::string &input : names) pack_weight(op, st, input, *weight_axis(op, point, input, acc_at));
}

void bound_vector_panels(LoweredOp &op, const SchedulePoint &point, const std::set<std::string> &followed) {
    const AxisTiling &v = point.axes[size_t(point.vector_axis)];
    if (!followed.count(v.var) || v.reg <= 1) return;
    const Statement &ms = main_statement(*op.def);
    const LoweredStage *found = op.find_stage(ms.tensor);
    if (!found || !found->is_reduction()) return;
    LoweredStage &st = op.stage(ms.tensor);
    if (!panel_is_reused(op, point, v, loop_position(op, accumulator_loop(op, st)))) return;
    for (const std::string &name : point.packed) {
        int d = dimension_indexed_by(ms, name, v.var);
        if (d < 0) continue;
        Halide::Func panel = op.input_funcs.at(name).in(st.acc);
        panel.compute_at(op.output, Halide::Var(v.var + "__r"));
        panel.bound_extent(panel.args()[size_t(d)], int(v.reg));
        panel.store_in(Halide::MemoryType::Stack);  // as pack_weight's: allocated once
    }
}

}  // namespace opgen
