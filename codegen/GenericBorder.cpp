#include "codegen/GenericBorder.h"

#include "codegen/GenericCode.h"

#include <algorithm>
#include <map>
#include <optional>

namespace opgen {

namespace {

// The output axis of `point` whose variable the index of `input`'s rows (its last, contiguous
// dimension: conv's x * stride + rx - pad) mentions, or nullptr.
const AxisTiling *row_axis(const Statement &ms, const SchedulePoint &point, const std::string &input) {
    const ExprNode *access = find_access(ms.body, input);
    if (!access || access->args.empty()) return nullptr;
    for (const AxisTiling &a : point.axes) {
        if (mentions_var(access->args.back(), a.var)) return &a;
    }
    return nullptr;
}

// Whether a Func computed at `at` holds whole extents of the output variable `var`: no loop of
// `var` is at or outside that level (computed at root: whole), but the loop over tiles of a
// variable whose tile follows its extent (`followed`): that loop runs once.
bool spans_whole(const LoweredOp &op, Halide::LoopLevel at, const std::string &var, const std::set<std::string> &followed) {
    at.lock();
    if (at.is_root()) return true;
    if (at.is_inlined() || at.func() != op.output.name()) return false;
    const Halide::Internal::Definition &d = op.output.function().definition();
    std::map<std::string, std::string> root;
    std::string once;  // the loop over whole-extent tiles of `var`
    auto root_of = [&](const std::string &v) { return root.count(v) ? root[v] : v; };
    for (const Halide::Internal::Split &s : d.schedule().splits()) {
        if (s.is_fuse()) {
            root[s.old_var] = root_of(s.outer) == root_of(s.inner) ? root_of(s.outer) : std::string("?");
        } else {
            root[s.inner] = root[s.outer] = root_of(s.old_var);
            if (s.is_split() && s.old_var == var && once.empty() && followed.count(var)) once = s.outer;
        }
    }
    bool outside = false;
    for (const Halide::Internal::Dim &dim : d.schedule().dims()) {
        outside = outside || names_loop(dim.var, at.var().name());
        const std::string r = root_of(dim.var);
        if (outside && dim.var != once && (r == var || r == "?")) return false;
    }
    return true;
}

// The schedule's panel of `t` in the reduction `acc`, when fill_padded_panels refills it: a
// zero-padded input the point packs, read along its rows (not re-laid out with another dimension
// contiguous, Schedule.cpp vectorize_panel), computed where it holds whole rows, not filled
// asynchronously a block ahead.
std::optional<Halide::Internal::Function> filled_panel(const LoweredOp &op, const SchedulePoint &point,
                                                       const std::set<std::string> &followed,
                                                       Halide::Internal::Function acc, const TensorDecl &t) {
    const Statement &ms = main_statement(*op.def);
    if (!t.zero_pad || std::find(point.packed.begin(), point.packed.end(), t.name) == point.packed.end()) return {};
    const AxisTiling *rows = row_axis(ms, point, t.name);
    const int across = dimension_indexed_by(ms, t.name, point.axes[size_t(point.vector_axis)].var);
    if (!rows || across > 0) return {};
    // Func::in keeps a wrapper in the wrapped Func's schedule, by the consumer's name.
    const std::map<std::string, Halide::Internal::FunctionPtr> &wrappers =
        op.input_funcs.at(t.name).function().schedule().wrappers();
    auto it = wrappers.find(acc.name());
    if (it == wrappers.end()) return {};
    Halide::Internal::Function wrapper(it->second);
    if (wrapper.schedule().async() || !spans_whole(op, wrapper.schedule().compute_level(), rows->var, followed)) return {};
    return wrapper;
}

// The panel of input `param` as zeros and its rows' interior, taking the place of `wrapper` (the
// schedule's panel of it in the reduction `acc`) where the schedule computed and stored that one.
void fill_panel(LoweredOp &op, Halide::Internal::Function acc, size_t param, Halide::Internal::Function wrapper,
                int lanes) {
    const Halide::ImageParam &p = op.params[param];
    const Halide::Expr zero = Halide::cast(p.type(), 0);
    std::vector<Halide::Var> v;
    for (int d = 0; d < p.dimensions(); d++) v.emplace_back(op.param_names[param] + "_filled_" + std::to_string(d));
    // In the wrapped Func's group, as Func::in makes a wrapper: the wrapped Func holds its
    // wrappers weakly, and the group keeps them alive.
    Halide::Internal::Function wrapped = op.input_funcs.at(op.param_names[param]).function();
    Halide::Func filled(wrapped.new_function_in_same_group(wrapper.name() + "_filled"));
    filled(v) = zero;
    Halide::RDom row(p.dim(0).min(), p.dim(0).extent(), op.param_names[param] + "_row");
    std::vector<Halide::Expr> lhs{row.x}, at{row.x};
    Halide::Expr inside = Halide::Internal::const_true();
    for (int d = 1; d < p.dimensions(); d++) {
        lhs.push_back(v[size_t(d)]);
        at.push_back(Halide::clamp(v[size_t(d)], p.dim(d).min(), p.dim(d).max()));
        inside = inside && v[size_t(d)] >= p.dim(d).min() && v[size_t(d)] <= p.dim(d).max();
    }
    filled(lhs) = Halide::select(inside, p(at), zero);
    filled.compute_at(wrapper.schedule().compute_level());
    filled.store_at(wrapper.schedule().store_level());
    filled.store_in(wrapper.schedule().memory_type());
    if (lanes > 1) {
        filled.vectorize(v[0], lanes, Halide::TailStrategy::GuardWithIf);
        filled.update(0).vectorize(row.x, lanes, Halide::TailStrategy::GuardWithIf);
    }
    Halide::Internal::Function f = filled.function();
    wrapped.schedule().wrappers().erase(acc.name());  // Halide refuses to redefine a wrapper
    wrapped.add_wrapper(acc.name(), f);
}

}  // namespace

void fill_padded_panels(LoweredOp &op, const SchedulePoint &point, const std::set<std::string> &followed) {
    const LoweredStage *st = op.find_stage(main_statement(*op.def).tensor);
    if (!st || !st->is_reduction()) return;
    Halide::Internal::Function acc = st->acc.function();
    for (size_t i = 0; i < op.params.size(); i++) {
        std::optional<Halide::Internal::Function> wrapper = filled_panel(op, point, followed, acc, *op.def->find_tensor(op.param_names[i]));
        if (wrapper) fill_panel(op, acc, i, *wrapper, point.vector_width);
    }
}

}  // namespace opgen
