#include "opgen/StageGraph.h"

#include <algorithm>
#include <functional>
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

std::vector<Footprint> footprints(const ComputeDef &def, const BoundShape &shape, const Target &target,
                                  const std::vector<StageGroup> &groups, const SchedulePoint &p) {
    const Statement &ms = main_statement(def);
    const Statement &out = *def.statement_for(def.output().name);
    // Each input's path, looked up once: footprints runs for every tiling the space enumerates.
    std::vector<std::string> ins = inputs_read(def, ms);
    std::vector<std::vector<std::string>> paths;
    for (size_t i = 0; i < std::max<size_t>(ins.size(), 1); i++) paths.push_back(target.input_path(i));
    const std::vector<std::string> &in_path = paths.front();
    // Extent of each loop variable inside one tile of a buffer level. Levels count from the
    // innermost buffer of the tensor's input path: 0 registers (one reduction step), 1 the register
    // tile over a reduction block, 2 the cache tile over a reduction block, beyond that everything.
    auto level_of = [&](const std::string &tensor, const std::string &buffer) {
        auto in = std::find(ins.begin(), ins.end(), tensor);
        const auto &path = in == ins.end() ? in_path : paths[size_t(in - ins.begin())];
        auto it = std::find(path.begin(), path.end(), buffer);
        if (it == path.end()) return 0;
        return int(path.end() - it) - 1;
    };
    bool blocked = false;
    for (const auto &r : p.reduce) blocked |= r.block < shape.var_extent(ms, r.var);
    auto extent_at = [&](const std::string &var, int level) -> int64_t {
        for (size_t i = 0; i < p.axes.size(); i++) {
            // The output's variables name the main statement's by position.
            size_t pos = out.vars.size() - 1 - i;
            std::string mv = pos < ms.vars.size() ? ms.vars[pos] : p.axes[i].var;
            if (var == p.axes[i].var || var == mv) {
                if (level <= 1) return p.axes[i].reg;
                if (level == 2) return p.axes[i].tile;
                return shape.var_extent(out, p.axes[i].var);
            }
        }
        for (const auto &r : ms.reduce_vars) {
            if (r.name != var) continue;
            int64_t block = shape.eval(r.extent);
            for (const auto &pr : p.reduce) {
                if (pr.var == var) block = pr.block;
            }
            if (level == 0) return 1;
            if (level <= 2) return block;
            return shape.eval(r.extent);
        }
        return 1;
    };
    std::vector<Footprint> result;
    int64_t reg_bytes = target.vector_bits / 8;
    for (const auto &g : groups) {
        const BufferLevel *buf = target.find_buffer(g.buffer);
        if (!buf || buf->capacity == 0) continue;
        const TensorDecl *t = def.find_tensor(g.tensor);
        int level = level_of(g.tensor, g.buffer);
        int64_t elements = 1;
        if (t->role == TensorRole::Input) {
            // The region of the input read inside one tile: per dimension, the span of its affine index.
            std::vector<const ExprNode *> stack{ms.body.get()};
            const ExprNode *access = nullptr;
            while (!stack.empty() && !access) {
                const ExprNode *e = stack.back();
                stack.pop_back();
                if (e->kind == ExprKind::Access && e->name == g.tensor) access = e;
                for (const auto &a : e->args) stack.push_back(a.get());
            }
            const auto &dims = shape.dims.at(g.tensor);
            for (size_t d = 0; access && d < access->args.size(); d++) {
                int64_t span = 1;
                for (const auto &[var, coef] : affine_coefficients(access->args[d], shape)) {
                    if (!var.empty()) span += std::abs(coef) * (extent_at(var, level) - 1);
                }
                elements *= std::min(span, dims[d]);
            }
        } else {
            // The accumulator: a register tile, or with a blocked reduction a cache tile in memory.
            int acc_level = blocked && level >= 1 ? 2 : 0;
            for (const auto &v : ms.vars) elements *= extent_at(v, acc_level);
            // In a scratchpad, a pointwise epilogue writes its own tile and expands each broadcast
            // operand to that tile; in a cache it streams through registers.
            // (A subgroup that has the epilogue holds only the epilogue.)
            if (g.has_epilogue && target.explicit_buffers) {
                int64_t epilogue = elements * (1 + g.broadcast_inputs);
                elements = g.subgroup == 0 ? elements + epilogue : epilogue;
            }
        }
        int64_t bytes = elements * dtype_bytes(t->dtype);
        // In registers, every vector takes a whole register, however few lanes it uses.
        if (level == 0) {
            bytes = p.vector_width > 1 ? (elements + p.vector_width - 1) / p.vector_width * reg_bytes
                                       : (bytes + reg_bytes - 1) / reg_bytes * reg_bytes;
        }
        if (buf->double_buffered) bytes *= 2;
        result.push_back({g.tensor, g.buffer, bytes, g.subgroup});
    }
    // With a blocked reduction the accumulator's cache tile also lives in the cache-tile buffer.
    if (blocked && in_path.size() >= 3) {
        const std::string &l2 = in_path[in_path.size() - 3];
        int64_t elements = 1;
        for (const auto &v : ms.vars) elements *= extent_at(v, 2);
        const BufferLevel *buf = target.find_buffer(l2);
        if (buf && buf->capacity > 0) {
            result.push_back({def.output().name, l2, elements * dtype_bytes(def.output().dtype) * (buf->double_buffered ? 2 : 1)});
        }
    }
    return result;
}

bool fits_buffers(const Target &target, const std::vector<Footprint> &fp) {
    for (const auto &b : target.buffers) {
        if (b.capacity == 0) continue;
        int64_t sum = 0;
        std::map<std::string, int64_t> largest_subgroup;  // per tensor
        for (const auto &f : fp) {
            if (f.buffer != b.name) continue;
            if (f.subgroup == 0) {
                sum += f.bytes;
            } else {
                int64_t &m = largest_subgroup[f.tensor];
                m = std::max(m, f.bytes);
            }
        }
        for (const auto &[tensor, bytes] : largest_subgroup) sum += bytes;
        if (sum > b.capacity) return false;
    }
    return true;
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
