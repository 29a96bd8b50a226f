#include "core/StageGraph.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>

namespace opgen {

const char *stage_kind_name(StageKind k) {
    switch (k) {
    case StageKind::Source: return "source";
    case StageKind::CopyIn: return "copy_in";
    case StageKind::Compute: return "compute";
    case StageKind::CopyOut: return "copy_out";
    }
    return "?";
}

namespace {

// The index variables a statement uses to read `tensor`, in order of first appearance.
std::vector<std::string> vars_reading(const Statement &s, const std::string &tensor) {
    std::vector<std::string> out;
    std::vector<const ExprNode *> stack{s.body.get()};
    std::vector<const ExprNode *> accesses;
    while (!stack.empty()) {
        const ExprNode *e = stack.back();
        stack.pop_back();
        if (e->kind == ExprKind::Access && e->name == tensor) accesses.push_back(e);
        for (const auto &a : e->args) stack.push_back(a.get());
    }
    std::function<void(const ExprNode *)> collect = [&](const ExprNode *e) {
        if (e->kind == ExprKind::IndexVar && std::find(out.begin(), out.end(), e->name) == out.end()) {
            out.push_back(e->name);
        }
        for (const auto &a : e->args) collect(a.get());
    };
    for (const ExprNode *a : accesses) {
        for (const auto &i : a->args) collect(i.get());
    }
    return out;
}

bool reads_tensor(const Expr &e, const std::string &tensor) {
    if (e->kind == ExprKind::Access && e->name == tensor) return true;
    return std::any_of(e->args.begin(), e->args.end(), [&](const Expr &a) { return reads_tensor(a, tensor); });
}

std::vector<std::string> inputs_read(const ComputeDef &def, const Statement &s) {
    std::vector<std::string> out;
    for (const TensorDecl *t : def.inputs()) {
        if (reads_tensor(s.body, t->name)) out.push_back(t->name);
    }
    return out;
}

}  // namespace

StageGraph build_stages(const ComputeDef &def, const Target &target) {
    StageGraph g;
    const Statement &ms = main_statement(def);
    std::vector<std::string> all_vars = ms.vars;
    for (const auto &r : ms.reduce_vars) all_vars.push_back(r.name);
    auto out_path = target.output_path();
    std::vector<int> last_of_input;
    std::vector<std::string> ins = inputs_read(def, ms);
    for (size_t i = 0; i < ins.size(); i++) {
        const std::string &in = ins[i];
        auto in_path = target.input_path(i);
        std::vector<std::string> loops = vars_reading(ms, in);
        int prev = int(g.stages.size());
        g.stages.push_back({in, in, in_path.front(), StageKind::Source, "", loops, -1});
        for (size_t b = 1; b < in_path.size(); b++) {
            g.stages.push_back({in + "_" + in_path[b], in, in_path[b], StageKind::CopyIn, "cache_read", loops, prev});
            prev = int(g.stages.size()) - 1;
        }
        last_of_input.push_back(prev);
    }
    // The compute stage writes into the first buffer of the output path (cache_write).
    const std::string out_name = def.output().name;
    int compute = int(g.stages.size());
    g.stages.push_back({ms.tensor + "_acc", out_name, out_path.front(), StageKind::Compute, "cache_write", all_vars,
                        last_of_input.empty() ? -1 : last_of_input.front()});
    int prev = compute;
    // A pointwise epilogue works on the same data in the same buffer: it joins the compute group.
    if (ms.tensor != out_name) {
        const Statement &es = *def.statement_for(out_name);
        Stage epilogue{out_name + "_epilogue", out_name, out_path.front(), StageKind::Compute, "compute", es.vars, prev};
        for (const TensorDecl *t : def.inputs()) {
            if (reads_tensor(es.body, t->name) && vars_reading(es, t->name).size() < es.vars.size()) epilogue.broadcast_inputs++;
        }
        g.stages.push_back(epilogue);
        prev = int(g.stages.size()) - 1;
    }
    for (size_t b = 1; b < out_path.size(); b++) {
        g.stages.push_back({out_name + "_" + out_path[b], out_name, out_path[b], StageKind::CopyOut, "set_scope", ms.vars, prev});
        prev = int(g.stages.size()) - 1;
    }
    return g;
}

std::vector<StageGroup> group_stages(const StageGraph &graph) {
    std::vector<StageGroup> groups;
    for (int i = 0; i < int(graph.stages.size()); i++) {
        const Stage &s = graph.stages[size_t(i)];
        auto it = std::find_if(groups.begin(), groups.end(),
                               [&](const StageGroup &g) { return g.tensor == s.tensor && g.buffer == s.buffer; });
        if (it == groups.end()) {
            groups.push_back({s.tensor, s.buffer, {i}, s.loop_vars});
            it = groups.end() - 1;
        } else {
            it->stages.push_back(i);
        }
        if (s.kind == StageKind::Compute && s.primitive == "compute") {
            it->has_epilogue = true;
            it->broadcast_inputs += s.broadcast_inputs;
        }
    }
    return groups;
}

std::map<std::string, int64_t> affine_coefficients(const Expr &e, const BoundShape &shape) {
    std::map<std::string, int64_t> c;
    switch (e->kind) {
    case ExprKind::IndexVar: c[e->name] = 1; return c;
    case ExprKind::IntConst:
    case ExprKind::Param: c[""] = shape.eval(e); return c;
    case ExprKind::Unary: {
        for (auto &[k, v] : affine_coefficients(e->args[0], shape)) c[k] = -v;
        return c;
    }
    case ExprKind::Binary: {
        auto a = affine_coefficients(e->args[0], shape), b = affine_coefficients(e->args[1], shape);
        if (e->name == "+" || e->name == "-") {
            c = a;
            for (auto &[k, v] : b) c[k] += e->name == "+" ? v : -v;
            return c;
        }
        if (e->name == "*") {
            bool a_const = a.size() == 1 && a.count("");
            const auto &scale = a_const ? a : b;
            const auto &other = a_const ? b : a;
            for (auto &[k, v] : other) c[k] = v * scale.at("");
            return c;
        }
        if (e->name == "/") {
            c[""] = shape.eval(e);
            return c;
        }
        break;
    }
    default: break;
    }
    c[""] = 0;
    return c;
}

const ExprNode *first_access(const Expr &body, const std::string &tensor) {
    std::vector<const ExprNode *> stack{body.get()};
    while (!stack.empty()) {
        const ExprNode *e = stack.back();
        stack.pop_back();
        if (e->kind == ExprKind::Access && e->name == tensor) return e;
        for (const auto &a : e->args) stack.push_back(a.get());
    }
    return nullptr;
}

namespace {

// The buffer's position among the target's, or -1.
int buffer_index(const Target &target, const std::string &name) {
    for (size_t b = 0; b < target.buffers.size(); b++) {
        if (target.buffers[b].name == name) return int(b);
    }
    return -1;
}

// Numbers the (buffer, tensor) pairs that subgroups share, in order of first appearance.
class SlotTable {
public:
    int slot_of(int buffer, const std::string &tensor) {
        auto key = std::make_pair(buffer, tensor);
        auto it = std::find(names_.begin(), names_.end(), key);
        if (it != names_.end()) return int(it - names_.begin());
        names_.push_back(key);
        return int(names_.size()) - 1;
    }
    int size() const { return int(names_.size()); }

private:
    std::vector<std::pair<int, std::string>> names_;
};

}  // namespace

// FootprintPlan's groups, one step per kind: the op, shape, target and tiled variables resolved
// once, then a group per stage group in a bounded buffer and the blocked reduction's cache tile.
struct FootprintPlanBuilder {
    using Group = FootprintPlan::Group;
    using Term = FootprintPlan::Term;
    using Factor = FootprintPlan::Factor;

    const ComputeDef &def;
    const BoundShape &shape;
    const Target &target;
    const std::vector<std::string> &axis_vars, &reduce_vars;
    const Statement &ms = main_statement(def);
    const Statement &out = *def.statement_for(def.output().name);
    std::vector<std::string> ins = inputs_read(def, ms);
    std::vector<std::vector<std::string>> paths = input_paths();  // per input read; at least one

    std::vector<std::vector<std::string>> input_paths() const {
        std::vector<std::vector<std::string>> p;
        for (size_t i = 0; i < std::max<size_t>(ins.size(), 1); i++) p.push_back(target.input_path(i));
        return p;
    }

    // Levels count from the innermost buffer of the tensor's input path: 0 registers (one
    // reduction step), 1 the register tile over a reduction block, 2 the cache tile over a
    // reduction block, beyond that everything.
    int level_of(const std::string &tensor, const std::string &buffer) const {
        auto in = std::find(ins.begin(), ins.end(), tensor);
        const auto &path = in == ins.end() ? paths.front() : paths[size_t(in - ins.begin())];
        auto it = std::find(path.begin(), path.end(), buffer);
        if (it == path.end()) return 0;
        return int(path.end() - it) - 1;
    }

    // The extent of a loop variable inside one tile of a buffer level, as a factor of the point.
    Term extent_at(const std::string &var, int level) const {
        for (size_t i = 0; i < axis_vars.size(); i++) {
            // The output's variables name the main statement's by position.
            size_t pos = out.vars.size() - 1 - i;
            std::string mv = pos < ms.vars.size() ? ms.vars[pos] : axis_vars[i];
            if (var == axis_vars[i] || var == mv) {
                if (level <= 1) return {Factor::Reg, int64_t(i)};
                if (level == 2) return {Factor::Tile, int64_t(i)};
                return {Factor::Const, shape.var_extent(out, axis_vars[i])};
            }
        }
        for (const auto &r : ms.reduce_vars) {
            if (r.name != var) continue;
            if (level == 0) return {Factor::Const, 1};
            auto j = std::find(reduce_vars.begin(), reduce_vars.end(), var);
            if (level <= 2 && j != reduce_vars.end()) return {Factor::Block, int64_t(j - reduce_vars.begin())};
            return {Factor::Const, shape.eval(r.extent)};
        }
        return {Factor::Const, 1};
    }

    // An input's group: the region read inside one tile, per dimension the span of its affine index.
    Group with_input_region(Group c, int level) const {
        c.input = true;
        // Only an operand without a sliding window (each dimension indexed by one variable) is read
        // a tile's slice at a time in the order of the reduction (kStreamedSteps).
        c.streams = (level == 1 || level == 2) && !target.explicit_buffers;
        const ExprNode *access = first_access(ms.body, c.tensor);
        const auto &dims = shape.dims.at(c.tensor);
        for (size_t d = 0; access && d < access->args.size(); d++) {
            std::vector<Term> terms;
            int moving = 0;  // variables of more than one step in this dimension's index
            for (const auto &[var, coef] : affine_coefficients(access->args[d], shape)) {
                if (var.empty()) continue;
                Term term = extent_at(var, level);
                term.coefficient = std::abs(coef);
                terms.push_back(term);
                if (extent_at(var, 3).value > 1) moving++;
            }
            if (moving > 1) c.streams = false;
            c.dims.push_back(std::move(terms));
            c.dim_extents.push_back(dims[d]);
        }
        // A cache tile reuses its slice across the register tiles along the axes it does not read.
        for (size_t i = 0; level == 2 && i < axis_vars.size(); i++) {
            const bool read = std::any_of(c.dims.begin(), c.dims.end(), [&](const std::vector<Term> &terms) {
                return std::any_of(terms.begin(), terms.end(),
                                   [&](const Term &t) { return t.factor == Factor::Tile && t.value == int64_t(i); });
            });
            if (!read) c.reused_along.push_back(int64_t(i));
        }
        return c;
    }

    // The accumulator's group: a register tile, or with a blocked reduction a cache tile in memory.
    Group with_accumulator(Group c, const StageGroup &g, int level) const {
        for (const auto &v : ms.vars) {
            c.accumulator[0].push_back(extent_at(v, 0));
            c.accumulator[1].push_back(extent_at(v, level >= 1 ? 2 : 0));
        }
        // In a scratchpad, a pointwise epilogue writes its own tile and expands each broadcast
        // operand to that tile; in a cache it streams through registers.
        // (A subgroup that has the epilogue holds only the epilogue.)
        if (g.has_epilogue && target.explicit_buffers) {
            c.multiplier = g.subgroup == 0 ? 2 + g.broadcast_inputs : 1 + g.broadcast_inputs;
        }
        return c;
    }

    // The plan's group for stage group `g` in its (bounded) buffer `buf`.
    Group group(const StageGroup &g, const BufferLevel &buf, SlotTable &slots) const {
        const TensorDecl *t = def.find_tensor(g.tensor);
        int level = level_of(g.tensor, g.buffer);
        Group c;
        c.tensor = g.tensor;
        c.buffer = g.buffer;
        c.subgroup = g.subgroup;
        c.buffer_index = buffer_index(target, g.buffer);
        c.slot = g.subgroup == 0 ? -1 : slots.slot_of(c.buffer_index, g.tensor);
        c.element_bytes = dtype_bytes(t->dtype);
        c.in_registers = level == 0;
        c.buffer_factor = buf.double_buffered ? 2 : 1;
        if (t->role == TensorRole::Input) return with_input_region(std::move(c), level);
        return with_accumulator(std::move(c), g, level);
    }

    // With a blocked reduction the accumulator's cache tile also lives in the cache-tile buffer;
    // nothing when the target has no bounded one.
    std::optional<Group> blocked_tile() const {
        const std::string l2 = target.cache_tile_buffer(0);
        const BufferLevel *buf = target.find_buffer(l2);
        if (!buf || buf->capacity <= 0) return std::nullopt;
        Group c;
        c.tensor = def.output().name;
        c.buffer = l2;
        c.buffer_index = buffer_index(target, l2);
        c.element_bytes = dtype_bytes(def.output().dtype);
        c.buffer_factor = buf->double_buffered ? 2 : 1;
        for (const auto &v : ms.vars) {
            c.accumulator[0].push_back(extent_at(v, 2));
            c.accumulator[1].push_back(extent_at(v, 2));
        }
        return c;
    }
};

FootprintPlan::FootprintPlan(const ComputeDef &def, const BoundShape &shape, const Target &target,
                             const std::vector<StageGroup> &groups, const std::vector<std::string> &axis_vars,
                             const std::vector<std::string> &reduce_vars)
    : axis_vars_(axis_vars), reduce_vars_(reduce_vars) {
    const FootprintPlanBuilder b{def, shape, target, axis_vars_, reduce_vars_};
    for (const std::string &r : reduce_vars_) reduce_extents_.push_back(shape.var_extent(b.ms, r));
    for (const auto &buf : target.buffers) capacities_.push_back(buf.capacity);
    reg_bytes_ = target.vector_bits / 8;
    SlotTable slots;
    for (const auto &g : groups) {
        const BufferLevel *buf = target.find_buffer(g.buffer);
        if (!buf || buf->capacity == 0) continue;
        groups_.push_back(b.group(g, *buf, slots));
    }
    if (std::optional<Group> tile = b.blocked_tile()) {
        has_blocked_tile_ = true;
        blocked_tile_ = std::move(*tile);
    }
    slots_ = slots.size();
}

bool FootprintPlan::matches(const SchedulePoint &p) const {
    if (p.axes.size() != axis_vars_.size() || p.reduce.size() != reduce_vars_.size()) return false;
    for (size_t i = 0; i < axis_vars_.size(); i++) {
        if (p.axes[i].var != axis_vars_[i]) return false;
    }
    for (size_t j = 0; j < reduce_vars_.size(); j++) {
        if (p.reduce[j].var != reduce_vars_[j]) return false;
    }
    return true;
}

bool FootprintPlan::blocked(const SchedulePoint &p) const {
    for (size_t j = 0; j < p.reduce.size(); j++) {
        if (p.reduce[j].block < reduce_extents_[j]) return true;
    }
    return false;
}

bool FootprintPlan::streamed(const Group &g, const SchedulePoint &p) const {
    if (!g.streams) return false;
    return std::all_of(g.reused_along.begin(), g.reused_along.end(), [&](int64_t i) {
        const AxisTiling &a = p.axes[size_t(i)];
        return a.tile <= a.reg;
    });
}

int64_t FootprintPlan::bytes(const Group &g, const SchedulePoint &p, bool blocked) const {
    const bool streams = streamed(g, p);
    auto value = [&](const Term &t) -> int64_t {
        switch (t.factor) {
        case Factor::Const: return t.value;
        case Factor::Reg: return p.axes[size_t(t.value)].reg;
        case Factor::Tile: return p.axes[size_t(t.value)].tile;
        case Factor::Block: {
            int64_t block = p.reduce[size_t(t.value)].block;
            return streams ? std::min(block, kStreamedSteps) : block;
        }
        }
        return 1;
    };
    int64_t elements = 1;
    if (g.input) {
        for (size_t d = 0; d < g.dims.size(); d++) {
            int64_t span = 1;
            for (const Term &t : g.dims[d]) span += t.coefficient * (value(t) - 1);
            elements *= std::min(span, g.dim_extents[d]);
        }
    } else {
        for (const Term &t : g.accumulator[blocked ? 1 : 0]) elements *= value(t);
        elements *= g.multiplier;
    }
    int64_t bytes = elements * g.element_bytes;
    // In registers, every vector takes a whole register, however few lanes it uses.
    if (g.in_registers) {
        bytes = p.vector_width > 1 ? (elements + p.vector_width - 1) / p.vector_width * reg_bytes_
                                   : (bytes + reg_bytes_ - 1) / reg_bytes_ * reg_bytes_;
    }
    return bytes * g.buffer_factor;
}

std::vector<Footprint> FootprintPlan::footprints(const SchedulePoint &p) const {
    bool is_blocked = blocked(p);
    std::vector<Footprint> result;
    for (const Group &g : groups_) result.push_back({g.tensor, g.buffer, bytes(g, p, is_blocked), g.subgroup});
    if (is_blocked && has_blocked_tile_) {
        result.push_back({blocked_tile_.tensor, blocked_tile_.buffer, bytes(blocked_tile_, p, true)});
    }
    return result;
}

namespace {

// One footprint's claim on a buffer: whole-group bytes add up; subgroups of one tensor in one
// buffer (one slot) are resident one after another, so only their largest counts.
struct Claim {
    int buffer;
    int slot;  // -1: a whole group
    int64_t bytes;
};

bool within_capacities(const std::vector<int64_t> &capacities, const std::vector<Claim> &claims, int slots) {
    std::vector<int64_t> used(capacities.size(), 0), largest(size_t(slots), 0);
    std::vector<int> slot_buffer(size_t(slots), -1);
    for (const Claim &c : claims) {
        if (c.buffer < 0) continue;
        if (c.slot < 0) {
            used[size_t(c.buffer)] += c.bytes;
        } else {
            largest[size_t(c.slot)] = std::max(largest[size_t(c.slot)], c.bytes);
            slot_buffer[size_t(c.slot)] = c.buffer;
        }
    }
    for (int s = 0; s < slots; s++) {
        if (slot_buffer[size_t(s)] >= 0) used[size_t(slot_buffer[size_t(s)])] += largest[size_t(s)];
    }
    for (size_t b = 0; b < capacities.size(); b++) {
        if (capacities[b] != 0 && used[b] > capacities[b]) return false;
    }
    return true;
}

}  // namespace

bool FootprintPlan::fits(const SchedulePoint &p) const {
    bool is_blocked = blocked(p);
    std::vector<Claim> claims;
    claims.reserve(groups_.size() + 1);
    for (const Group &g : groups_) claims.push_back({g.buffer_index, g.slot, bytes(g, p, is_blocked)});
    if (is_blocked && has_blocked_tile_) {
        claims.push_back({blocked_tile_.buffer_index, -1, bytes(blocked_tile_, p, true)});
    }
    return within_capacities(capacities_, claims, slots_);
}

std::vector<Footprint> footprints(const ComputeDef &def, const BoundShape &shape, const Target &target,
                                  const std::vector<StageGroup> &groups, const SchedulePoint &p) {
    std::vector<std::string> axis_vars, reduce_vars;
    for (const auto &a : p.axes) axis_vars.push_back(a.var);
    for (const auto &r : p.reduce) reduce_vars.push_back(r.var);
    return FootprintPlan(def, shape, target, groups, axis_vars, reduce_vars).footprints(p);
}

bool fits_buffers(const Target &target, const std::vector<Footprint> &fp) {
    std::vector<int64_t> capacities;
    for (const auto &b : target.buffers) capacities.push_back(b.capacity);
    std::vector<std::pair<int, std::string>> slot_names;
    std::vector<Claim> claims;
    for (const auto &f : fp) {
        int buffer = -1;
        for (size_t b = 0; b < target.buffers.size(); b++) {
            if (target.buffers[b].name == f.buffer) buffer = int(b);
        }
        int slot = -1;
        if (f.subgroup != 0) {
            auto key = std::make_pair(buffer, f.tensor);
            auto it = std::find(slot_names.begin(), slot_names.end(), key);
            slot = int(it - slot_names.begin());
            if (it == slot_names.end()) slot_names.push_back(key);
        }
        claims.push_back({buffer, slot, f.bytes});
    }
    return within_capacities(capacities, claims, int(slot_names.size()));
}

std::vector<StageGroup> split_oversized_groups(const ComputeDef &def, const BoundShape &shape, const Target &target,
                                               const StageGraph &graph, std::vector<StageGroup> groups,
                                               const SchedulePoint &smallest) {
    std::vector<StageGroup> out;
    for (size_t i = 0; i < groups.size(); i++) {
        const StageGroup &g = groups[i];
        const BufferLevel *b = target.find_buffer(g.buffer);
        if (g.stages.size() < 2 || !b || b->capacity == 0) {
            out.push_back(g);
            continue;
        }
        // Does the buffer hold everything it must under the smallest tiling, with this group whole?
        if (fits_buffers(target, footprints(def, shape, target, groups, smallest))) {
            out.push_back(g);
            continue;
        }
        for (size_t k = 0; k < g.stages.size(); k++) {
            const Stage &st = graph.stages[size_t(g.stages[k])];
            StageGroup sub{g.tensor, g.buffer, {g.stages[k]}, st.loop_vars, int(k) + 1, false, 0};
            if (st.kind == StageKind::Compute && st.primitive == "compute") {
                sub.has_epilogue = true;
                sub.broadcast_inputs = st.broadcast_inputs;
            }
            out.push_back(sub);
        }
    }
    return out;
}

}  // namespace opgen
