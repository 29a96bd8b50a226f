#include "opgen/Schedule.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

namespace opgen {

nlohmann::json SchedulePoint::to_json() const {
    nlohmann::json j;
    j["axes"] = nlohmann::json::array();
    for (const auto &a : axes) j["axes"].push_back({{"var", a.var}, {"tile", a.tile}, {"reg", a.reg}});
    j["reduce"] = nlohmann::json::array();
    for (const auto &r : reduce) j["reduce"].push_back({{"var", r.var}, {"block", r.block}});
    j["outer_order"] = outer_order;
    j["parallel_loops"] = parallel_loops;
    j["packed"] = packed;
    j["vector_width"] = vector_width;
    j["unroll"] = unroll;
    if (!tile_order.empty()) j["tile_order"] = tile_order;
    if (prefetch) j["prefetch"] = prefetch;
    return j;
}

SchedulePoint SchedulePoint::from_json(const nlohmann::json &j) {
    SchedulePoint p;
    try {
        for (const auto &a : j.at("axes")) {
            p.axes.push_back({a.at("var").get<std::string>(), a.at("tile").get<int64_t>(), a.at("reg").get<int64_t>()});
        }
        for (const auto &r : j.at("reduce")) {
            p.reduce.push_back({r.at("var").get<std::string>(), r.at("block").get<int64_t>()});
        }
        p.outer_order = j.at("outer_order").get<std::vector<std::string>>();
        p.parallel_loops = j.at("parallel_loops").get<int>();
        p.packed = j.at("packed").get<std::vector<std::string>>();
        p.vector_width = j.at("vector_width").get<int>();
        p.unroll = j.value("unroll", true);
        p.tile_order = j.value("tile_order", std::vector<std::string>{});
        p.prefetch = j.value("prefetch", 0);
    } catch (const nlohmann::json::exception &e) {
        user_check(false) << "schedule point: " << e.what();
    }
    return p;
}

SchedulePoint SchedulePoint::read_file(const std::string &path) {
    std::ifstream in(path);
    user_check(in.good()) << "cannot read schedule point '" << path << "'";
    try {
        return from_json(nlohmann::json::parse(in));
    } catch (const nlohmann::json::exception &e) {
        user_check(false) << "schedule point '" << path << "': " << e.what();
    } catch (const UserError &e) {
        user_check(false) << "'" << path << "': " << e.what();
    }
    return {};
}

std::string SchedulePoint::summary() const {
    std::ostringstream s;
    for (auto it = axes.rbegin(); it != axes.rend(); ++it) s << it->var << ":" << it->tile << "/" << it->reg << " ";
    for (const auto &r : reduce) s << r.var << ":" << r.block << " ";
    s << "order=";
    for (auto it = outer_order.rbegin(); it != outer_order.rend(); ++it) s << (it == outer_order.rbegin() ? "" : ",") << *it;
    s << " par=" << parallel_loops << " pack=";
    for (size_t i = 0; i < packed.size(); i++) s << (i ? "," : "") << packed[i];
    if (packed.empty()) s << "-";
    s << " vw=" << vector_width;
    if (!tile_order.empty()) {
        s << " tiles=";
        for (auto it = tile_order.rbegin(); it != tile_order.rend(); ++it) s << (it == tile_order.rbegin() ? "" : ",") << *it;
    }
    if (!unroll) s << " nounroll";
    if (prefetch) s << " prefetch=" << prefetch;
    return s.str();
}

const Statement &main_statement(const ComputeDef &def) {
    const Statement &out = *def.statement_for(def.output().name);
    if (out.reduce != ReduceKind::None) return out;
    // The output may be a pointwise epilogue of one reduction (matmul + bias + relu).
    const Statement *found = nullptr;
    std::vector<const ExprNode *> stack{out.body.get()};
    while (!stack.empty()) {
        const ExprNode *e = stack.back();
        stack.pop_back();
        if (e->kind == ExprKind::Access) {
            const Statement *s = def.statement_for(e->name);
            if (s && s->reduce != ReduceKind::None) {
                if (found && found != s) return out;
                found = s;
            }
        }
        for (const auto &a : e->args) stack.push_back(a.get());
    }
    return found ? *found : out;
}

bool main_is_fusable(const ComputeDef &def) {
    const Statement &out = *def.statement_for(def.output().name);
    const Statement &m = main_statement(def);
    if (&m == &out) return true;
    if (m.vars.size() != out.vars.size()) return false;
    // Every read of the main tensor must be at exactly the output's own variables, in order.
    bool ok = true;
    std::vector<const ExprNode *> stack{out.body.get()};
    while (!stack.empty()) {
        const ExprNode *e = stack.back();
        stack.pop_back();
        if (e->kind == ExprKind::Access && e->name == m.tensor) {
            for (size_t i = 0; i < e->args.size(); i++) {
                ok &= e->args[i]->kind == ExprKind::IndexVar && e->args[i]->name == out.vars[i];
            }
        }
        for (const auto &a : e->args) stack.push_back(a.get());
    }
    return ok;
}

std::string AppliedSchedule::source() const {
    std::string s;
    for (const auto &l : lines) s += l + "\n";
    return s;
}

namespace {

// Applies Halide primitives and prints each as a line of C++. Loop variables a schedule adds are
// named <var>__o, <var>__r, ...: the op language refuses "__" in names, so they never collide with
// an op's own variables.
class Recorder {
public:
    std::vector<std::string> lines;
    std::vector<std::string> declared;

    void declare_var(const std::string &n) {
        if (std::find(declared.begin(), declared.end(), n) == declared.end()) declared.push_back(n);
    }
    std::vector<std::string> declared_r;
    void declare_rvar(const std::string &n) { declared_r.push_back(n); }
    void line(const std::string &l) { lines.push_back(l); }

    // The primitives, preceded by the declarations of the loop variables they introduce.
    AppliedSchedule finish() const {
        AppliedSchedule out;
        auto decl = [&](const char *type, const std::vector<std::string> &names) {
            if (names.empty()) return;
            std::string d = std::string(type) + " ";
            for (size_t i = 0; i < names.size(); i++) d += (i ? ", " : "") + names[i] + "(\"" + names[i] + "\")";
            out.lines.push_back(d + ";");
        };
        decl("Var", declared);
        decl("RVar", declared_r);
        out.lines.insert(out.lines.end(), lines.begin(), lines.end());
        return out;
    }
};

// Halide makes Func names unique within a process ("C$34"); printed source uses the op's names.
std::string clean_name(const std::string &n) { return n.substr(0, n.find('$')); }

const char *tail_name(Halide::TailStrategy t) {
    switch (t) {
    case Halide::TailStrategy::ShiftInwards: return "TailStrategy::ShiftInwards";
    case Halide::TailStrategy::GuardWithIf: return "TailStrategy::GuardWithIf";
    case Halide::TailStrategy::RoundUp: return "TailStrategy::RoundUp";
    default: return "TailStrategy::Auto";
    }
}

// Places `f` in the memory the target asks for `buffer` (Func::store_in); nothing for "auto".
void store_in(Recorder &rec, Halide::Func f, const std::string &fname, const Target &target,
              const std::string &buffer) {
    const BufferLevel *b = target.find_buffer(buffer);
    if (!b || b->memory == "auto") return;
    static const std::map<std::string, std::pair<Halide::MemoryType, const char *>> kinds = {
        {"heap", {Halide::MemoryType::Heap, "MemoryType::Heap"}},
        {"stack", {Halide::MemoryType::Stack, "MemoryType::Stack"}},
        {"register", {Halide::MemoryType::Register, "MemoryType::Register"}},
    };
    const auto &[type, text] = kinds.at(b->memory);
    f.store_in(type);
    rec.line(fname + ".store_in(" + text + ");  // " + buffer);
}

// The buffer a packed panel of `input` lives in: the cache-tile level of its path (L2 on a CPU).
std::string panel_buffer(const Target &target, size_t input) {
    auto path = target.input_path(input);
    return path.size() >= 3 ? path[path.size() - 3] : path.back();
}

bool reads_tensor(const Expr &e, const std::string &tensor) {
    if (e->kind == ExprKind::Access && e->name == tensor) return true;
    return std::any_of(e->args.begin(), e->args.end(), [&](const Expr &a) { return reads_tensor(a, tensor); });
}

struct Tiled {
    std::vector<Halide::Var> vo, vr, vi;  // innermost first, per axis
    Halide::VarOrRVar outer_compute_level = Halide::Var();  // innermost loop outside the register tiles
    std::string outer_compute_name;
};

// Tiles the output (or any pure Func) per the point: returns the loop variables.
Tiled tile_output(Recorder &rec, Halide::Func out, const LoweredStage &st, const SchedulePoint &p,
                  const BoundShape &shape, const Target &target) {
    const std::string f = clean_name(out.name());
    Tiled t;
    const Statement &s = *st.statement;
    std::vector<std::string> names;
    for (size_t i = 0; i < p.axes.size(); i++) {
        const AxisTiling &a = p.axes[i];
        auto pos = std::find(st.var_names.begin(), st.var_names.end(), a.var);
        user_check(pos != st.var_names.end()) << "schedule: '" << a.var << "' is not a variable of " << f;
        Halide::Var v = st.vars[size_t(pos - st.var_names.begin())];
        int64_t extent = shape.var_extent(s, a.var);
        user_check(a.reg >= 1 && a.reg <= a.tile && a.tile <= extent)
            << "schedule: axis " << a.var << " needs 1 <= reg (" << a.reg << ") <= tile (" << a.tile << ") <= extent ("
            << extent << ")";
        Halide::Var vo(a.var + "__o"), vt(a.var + "__t"), vr(a.var + "__r"), vi(a.var + "__i");
        for (const auto &n : {vo.name(), vt.name(), vr.name(), vi.name()}) rec.declare_var(n);
        out.split(v, vo, vt, int(a.tile), Halide::TailStrategy::ShiftInwards);
        out.split(vt, vr, vi, int(a.reg), Halide::TailStrategy::ShiftInwards);
        rec.line(f + ".split(" + a.var + ", " + vo.name() + ", " + vt.name() + ", " + std::to_string(a.tile) +
                 ", TailStrategy::ShiftInwards);");
        rec.line(f + ".split(" + vt.name() + ", " + vr.name() + ", " + vi.name() + ", " + std::to_string(a.reg) +
                 ", TailStrategy::ShiftInwards);");
        t.vo.push_back(vo);
        t.vr.push_back(vr);
        t.vi.push_back(vi);
    }
    user_check(p.axes.size() == st.vars.size()) << "schedule: " << p.axes.size() << " axes given for " << f << " of rank "
                                                << st.vars.size();
    // Loop order, innermost first: register tile, register-tile loops, cache-tile loops.
    std::vector<Halide::VarOrRVar> order;
    std::string order_text;
    auto add = [&](const Halide::Var &v) {
        order.emplace_back(v);
        order_text += (order_text.empty() ? "" : ", ") + v.name();
    };
    for (const auto &v : t.vi) add(v);
    if (p.tile_order.empty()) {
        for (const auto &v : t.vr) add(v);
    } else {
        user_check(p.tile_order.size() == p.axes.size()) << "schedule: tile_order must name every axis once";
        for (const auto &name : p.tile_order) {
            auto it = std::find_if(p.axes.begin(), p.axes.end(), [&](const AxisTiling &a) { return a.var == name; });
            user_check(it != p.axes.end()) << "schedule: tile_order names unknown axis '" << name << "'";
            add(t.vr[size_t(it - p.axes.begin())]);
        }
    }
    std::vector<Halide::Var> outer;
    user_check(p.outer_order.size() == p.axes.size()) << "schedule: outer_order must name every axis once";
    for (const auto &name : p.outer_order) {
        auto it = std::find_if(p.axes.begin(), p.axes.end(), [&](const AxisTiling &a) { return a.var == name; });
        user_check(it != p.axes.end()) << "schedule: outer_order names unknown axis '" << name << "'";
        outer.push_back(t.vo[size_t(it - p.axes.begin())]);
        add(outer.back());
    }
    out.reorder(order);
    rec.line(f + ".reorder(" + order_text + ");");
    // Vectorize the innermost axis, unroll the rest of the register tile.
    int vw = p.vector_width;
    if (vw > 1) {
        Halide::TailStrategy tail = p.axes[0].reg % vw == 0 ? Halide::TailStrategy::ShiftInwards : Halide::TailStrategy::GuardWithIf;
        out.vectorize(t.vi[0], vw, tail);
        rec.line(f + ".vectorize(" + t.vi[0].name() + ", " + std::to_string(vw) + ", " + tail_name(tail) + ");");
        if (p.unroll && p.axes[0].reg > vw && tail == Halide::TailStrategy::ShiftInwards) {
            out.unroll(t.vi[0]);
            rec.line(f + ".unroll(" + t.vi[0].name() + ");");
        }
    }
    if (p.unroll) {
        for (size_t i = 1; i < t.vi.size(); i++) {
            if (p.axes[i].reg > 1) {
                out.unroll(t.vi[i]);
                rec.line(f + ".unroll(" + t.vi[i].name() + ");");
            }
        }
    }
    // Fuse the outermost loops into one parallel loop.
    int par = std::min<int>(p.parallel_loops, int(outer.size()));
    t.outer_compute_level = outer.empty() ? Halide::VarOrRVar(t.vr.back()) : Halide::VarOrRVar(outer.front());
    t.outer_compute_name = outer.empty() ? t.vr.back().name() : outer.front().name();
    if (par > 0 && target.cores > 1) {
        Halide::Var fused = outer.back();
        std::string fused_name = fused.name();
        for (int k = 1; k < par; k++) {
            Halide::Var inner = outer[outer.size() - 1 - size_t(k)];
            Halide::Var f2(inner.name() + "_" + fused_name);
            rec.declare_var(f2.name());
            out.fuse(inner, fused, f2);
            rec.line(f + ".fuse(" + inner.name() + ", " + fused_name + ", " + f2.name() + ");");
            fused = f2;
            fused_name = f2.name();
        }
        out.parallel(fused);
        rec.line(f + ".parallel(" + fused_name + ");");
        if (size_t(par) == outer.size()) {
            t.outer_compute_level = Halide::VarOrRVar(fused);
            t.outer_compute_name = fused_name;
        }
    }
    return t;
}

// A reduction computed on its own, at root: parallel over its outermost variable, vectorized on its
// innermost when that is wide enough.
void schedule_root_reduction(Recorder &rec, LoweredStage &st, const BoundShape &shape, const Target &target) {
    Halide::Func acc = st.acc;
    const std::string f = clean_name(acc.name());
    acc.compute_root();
    rec.line(f + ".compute_root();");
    int vw = target.vector_lanes(4);
    int64_t e0 = shape.var_extent(*st.statement, st.var_names[0]);
    for (int stage = 0; stage < 2; stage++) {
        Halide::Stage s = stage == 0 ? Halide::Stage(acc) : Halide::Stage(acc.update());
        std::string sn = stage == 0 ? f : f + ".update()";
        if (target.cores > 1 && st.vars.size() > 1) {
            s.parallel(st.vars.back());
            rec.line(sn + ".parallel(" + st.var_names.back() + ");");
        }
        if (e0 >= vw) {
            s.vectorize(st.vars[0], vw, stage == 0 ? Halide::TailStrategy::ShiftInwards : Halide::TailStrategy::GuardWithIf);
            rec.line(sn + ".vectorize(" + st.var_names[0] + ", " + std::to_string(vw) + ");");
        }
    }
}

// Position of `input` among the inputs the main statement reads (its path is the target's
// "input<position>").
size_t input_position(const ComputeDef &def, const Statement &ms, const std::string &input) {
    size_t pos = 0;
    for (const TensorDecl *t : def.inputs()) {
        if (t->name == input) return pos;
        if (reads_tensor(ms.body, t->name)) pos++;
    }
    return 0;
}

// Reduction loops this short (a 3x3 window) are unrolled whole with the register tile; the
// outermost reduction loop (input channels, k) never is.
constexpr int64_t kUnrollWindow = 4;

// Prefetches every input the reduction reads directly (not through a packed panel) `distance`
// steps ahead along the reduction loop `r`.
void prefetch_inputs(Recorder &rec, LoweredOp &op, const Statement &ms, const SchedulePoint &p, Halide::Stage u,
                     const std::string &un, const Halide::VarOrRVar &r, const std::string &rn) {
    if (p.prefetch <= 0) return;
    for (size_t i = 0; i < op.params.size(); i++) {
        const std::string &name = op.param_names[i];
        if (!reads_tensor(ms.body, name) ||
            std::find(p.packed.begin(), p.packed.end(), name) != p.packed.end())
            continue;
        u.prefetch(op.params[i], r, r, p.prefetch, Halide::PrefetchBoundStrategy::NonFaulting);
        rec.line(un + ".prefetch(" + name + ", " + rn + ", " + rn + ", " + std::to_string(p.prefetch) +
                 ", PrefetchBoundStrategy::NonFaulting);");
    }
}

}  // namespace

AppliedSchedule apply_schedule(LoweredOp &op, const SchedulePoint &p, const Target &target) {
    Recorder rec;
    const ComputeDef &def = *op.def;
    LoweredStage &outst = op.stage(def.output().name);
    const Statement &ms = main_statement(def);
    LoweredStage &main = op.stage(ms.tensor);
    bool fused = main.is_reduction() && main_is_fusable(def);

    for (auto &st : op.stages) {
        if (st.is_reduction() && !(fused && &st == &main)) schedule_root_reduction(rec, st, op.shape, target);
    }
    Tiled t = tile_output(rec, op.output, outst, p, op.shape, target);
    if (!fused) {
        return rec.finish();
    }

    // The accumulator: per register tile (registers hold it) or per cache tile with the
    // reduction blocked.
    Halide::Func acc = main.acc;
    const std::string a = clean_name(acc.name());
    const std::string o = clean_name(op.output.name());
    bool blocked = false;
    for (const auto &r : p.reduce) {
        auto pos = std::find(main.rvar_names.begin(), main.rvar_names.end(), r.var);
        user_check(pos != main.rvar_names.end()) << "schedule: '" << r.var << "' is not a reduction variable of " << ms.tensor;
        int64_t extent = op.shape.var_extent(ms, r.var);
        user_check(r.block >= 1 && r.block <= extent)
            << "schedule: reduction block " << r.block << " of " << r.var << " must be in [1, " << extent << "]";
        blocked |= r.block < extent;
    }
    int vw = p.vector_width;
    std::vector<Halide::VarOrRVar> acc_vars(main.vars.begin(), main.vars.end());
    auto unroll_rest = [&](Halide::Stage s, const std::string &sn, const std::vector<Halide::Var> &vars,
                           const std::vector<std::string> &names) {
        if (!p.unroll) return;
        for (size_t i = 1; i < vars.size(); i++) {
            if (p.axes[i].reg > 1) {
                s.unroll(vars[i]);
                rec.line(sn + ".unroll(" + names[i] + ");");
            }
        }
    };
    auto vec = [&](Halide::Stage s, const std::string &sn, const Halide::Var &v, const std::string &vn, int64_t extent) {
        if (vw <= 1) return;
        bool exact = extent % vw == 0;
        // Update stages may not round up (it would recompute values); a guard that divides evenly
        // costs nothing, since Halide proves it away.
        bool round_up = exact && sn.find(".update()") == std::string::npos;
        Halide::TailStrategy tail = round_up ? Halide::TailStrategy::RoundUp : Halide::TailStrategy::GuardWithIf;
        s.vectorize(v, vw, tail);
        rec.line(sn + ".vectorize(" + vn + ", " + std::to_string(vw) + ", " + tail_name(tail) + ");");
        if (p.unroll && exact && extent > vw) {
            s.unroll(v);
            rec.line(sn + ".unroll(" + vn + ");");
        }
    };

    if (!blocked) {
        acc.compute_at(op.output, t.vr[0]);
        rec.line(a + ".compute_at(" + o + ", " + t.vr[0].name() + ");");
        store_in(rec, acc, a, target, target.output_path().front());
        vec(Halide::Stage(acc), a, main.vars[0], main.var_names[0], p.axes[0].reg);
        unroll_rest(Halide::Stage(acc), a, main.vars, main.var_names);
        Halide::Stage u = acc.update();
        std::vector<Halide::VarOrRVar> order(main.vars.begin(), main.vars.end());
        std::string order_text;
        for (const auto &n : main.var_names) order_text += (order_text.empty() ? "" : ", ") + n;
        for (int i = 0; i < main.rdom.dimensions(); i++) {
            order.emplace_back(main.rdom[i]);
            order_text += ", " + main.rvar_names[size_t(i)];
        }
        u.reorder(order);
        rec.line(a + ".update().reorder(" + order_text + ");");
        vec(u, a + ".update()", main.vars[0], main.var_names[0], p.axes[0].reg);
        unroll_rest(u, a + ".update()", main.vars, main.var_names);
        for (int i = 0; p.unroll && i + 1 < main.rdom.dimensions(); i++) {
            // Short reduction loops (a 3x3 window) unroll whole: no loop overhead between FMAs.
            if (op.shape.var_extent(ms, main.rvar_names[size_t(i)]) <= kUnrollWindow) {
                u.unroll(main.rdom[i]);
                rec.line(a + ".update().unroll(" + main.rvar_names[size_t(i)] + ");");
            }
        }
        if (main.rdom.dimensions() > 0) {
            int last = main.rdom.dimensions() - 1;
            prefetch_inputs(rec, op, ms, p, u, a + ".update()", main.rdom[last], main.rvar_names[size_t(last)]);
        }
        for (const auto &name : p.packed) {
            auto in = op.input_funcs.find(name);
            user_check(in != op.input_funcs.end()) << "schedule: packed '" << name << "' is not an input";
            user_check(reads_tensor(ms.body, name)) << "schedule: packed '" << name << "' is not read by the reduction of " << ms.tensor;
            Halide::Func pk = in->second.in(acc);
            pk.compute_at(Halide::LoopLevel(op.output, t.outer_compute_level));
            rec.line("Func " + name + "_panel = " + name + ".in(" + a + ");");
            rec.line(name + "_panel.compute_at(" + o + ", " + t.outer_compute_name + ");");
            store_in(rec, pk, name + "_panel", target, panel_buffer(target, input_position(def, ms, name)));
            if (vw > 1) {
                pk.vectorize(pk.args()[0], vw, Halide::TailStrategy::GuardWithIf);
                rec.line(name + "_panel.vectorize(" + clean_name(pk.args()[0].name()) + ", " + std::to_string(vw) + ", TailStrategy::GuardWithIf);");
            }
        }
        return rec.finish();
    }

    // Blocked reduction: the accumulator holds a cache tile; its update walks reduction blocks
    // outermost, then register tiles, then the block's reduction loop, then the register tile.
    for (size_t i = 0; i < p.axes.size(); i++) {
        user_check(p.axes[i].tile % p.axes[i].reg == 0)
            << "schedule: with a blocked reduction the tile of " << p.axes[i].var << " (" << p.axes[i].tile
            << ") must be a multiple of its register tile (" << p.axes[i].reg << ")";
    }
    acc.compute_at(Halide::LoopLevel(op.output, t.outer_compute_level));
    rec.line(a + ".compute_at(" + o + ", " + t.outer_compute_name + ");");
    store_in(rec, acc, a, target, panel_buffer(target, 0));
    vec(Halide::Stage(acc), a, main.vars[0], main.var_names[0], p.axes[0].tile);
    Halide::Stage u = acc.update();
    std::string un = a + ".update()";
    std::vector<Halide::Var> ur, ui;
    std::vector<std::string> uin;
    for (size_t i = 0; i < main.vars.size(); i++) {
        Halide::Var vr(main.var_names[i] + "__ur"), vi(main.var_names[i] + "__ui");
        rec.declare_var(vr.name());
        rec.declare_var(vi.name());
        u.split(main.vars[i], vr, vi, int(p.axes[i].reg), Halide::TailStrategy::GuardWithIf);
        rec.line(un + ".split(" + main.var_names[i] + ", " + vr.name() + ", " + vi.name() + ", " + std::to_string(p.axes[i].reg) + ");");
        ur.push_back(vr);
        ui.push_back(vi);
        uin.push_back(vi.name());
    }
    std::vector<Halide::RVar> ro, ri;
    std::vector<std::string> ron, rin;
    for (int i = 0; i < main.rdom.dimensions(); i++) {
        const std::string &rn = main.rvar_names[size_t(i)];
        int64_t block = op.shape.var_extent(ms, rn);
        for (const auto &r : p.reduce) {
            if (r.var == rn) block = r.block;
        }
        Halide::RVar rvo(rn + "__o"), rvi(rn + "__i");
        rec.declare_rvar(rvo.name());
        rec.declare_rvar(rvi.name());
        // A block that does not divide the extent leaves a guarded last block (a reduction may not
        // recompute, so no ShiftInwards).
        bool divides = op.shape.var_extent(ms, rn) % block == 0;
        u.split(main.rdom[i], rvo, rvi, int(block), divides ? Halide::TailStrategy::Auto : Halide::TailStrategy::GuardWithIf);
        rec.line(un + ".split(" + rn + ", " + rvo.name() + ", " + rvi.name() + ", " + std::to_string(block) +
                 (divides ? "" : ", TailStrategy::GuardWithIf") + ");");
        ro.push_back(rvo);
        ri.push_back(rvi);
        ron.push_back(rvo.name());
        rin.push_back(rvi.name());
    }
    std::vector<Halide::VarOrRVar> order;
    std::string order_text;
    auto add = [&](Halide::VarOrRVar v, const std::string &n) {
        order.push_back(v);
        order_text += (order_text.empty() ? "" : ", ") + n;
    };
    for (size_t i = 0; i < ui.size(); i++) add(ui[i], ui[i].name());
    for (size_t i = 0; i < ri.size(); i++) add(ri[i], rin[i]);
    for (size_t i = 0; i < ur.size(); i++) add(ur[i], ur[i].name());
    for (size_t i = 0; i < ro.size(); i++) add(ro[i], ron[i]);
    u.reorder(order);
    rec.line(un + ".reorder(" + order_text + ");");
    vec(u, un, ui[0], ui[0].name(), p.axes[0].reg);
    unroll_rest(u, un, ui, uin);
    for (size_t i = 0; p.unroll && i + 1 < ri.size(); i++) {
        int64_t block = op.shape.var_extent(ms, main.rvar_names[i]);
        for (const auto &r : p.reduce) {
            if (r.var == main.rvar_names[i]) block = r.block;
        }
        if (block <= kUnrollWindow) {
            u.unroll(ri[i]);
            rec.line(un + ".unroll(" + rin[i] + ");");
        }
    }
    prefetch_inputs(rec, op, ms, p, u, un, ri.back(), rin.back());
    for (const auto &name : p.packed) {
        auto in = op.input_funcs.find(name);
        user_check(in != op.input_funcs.end()) << "schedule: packed '" << name << "' is not an input";
        user_check(reads_tensor(ms.body, name)) << "schedule: packed '" << name << "' is not read by the reduction of " << ms.tensor;
        Halide::Func pk = in->second.in(acc);
        pk.compute_at(acc, ro.front());
        rec.line("Func " + name + "_panel = " + name + ".in(" + a + ");");
        rec.line(name + "_panel.compute_at(" + a + ", " + ron.front() + ");");
        std::string buffer = panel_buffer(target, input_position(def, ms, name));
        store_in(rec, pk, name + "_panel", target, buffer);
        const BufferLevel *b = target.find_buffer(buffer);
        if (b && b->double_buffered) {
            // Double buffering: the panel's storage spans the reduction-block loop, and an async
            // producer fills the next block while the current one is consumed.
            pk.store_at(acc, Halide::Var::outermost()).async();
            rec.line(name + "_panel.store_at(" + a + ", Var::outermost()).async();  // double-buffered " + buffer);
        }
        if (vw > 1) {
            pk.vectorize(pk.args()[0], vw, Halide::TailStrategy::GuardWithIf);
            rec.line(name + "_panel.vectorize(" + clean_name(pk.args()[0].name()) + ", " + std::to_string(vw) + ", TailStrategy::GuardWithIf);");
        }
    }
    return rec.finish();
}

AppliedSchedule apply_default_schedule(LoweredOp &, const Target &) {
    return {{"// Halide's default schedule: reductions at root, everything else inlined, serial, scalar"}};
}

SchedulePoint heuristic_point(const ComputeDef &def, const BoundShape &shape, const Target &target) {
    const Statement &out = *def.statement_for(def.output().name);
    const Statement &ms = main_statement(def);
    SchedulePoint p;
    int lanes = target.vector_lanes(dtype_bytes(def.output().dtype));
    size_t rank = out.vars.size();
    for (size_t i = 0; i < rank; i++) {
        const std::string &v = out.vars[rank - 1 - i];
        int64_t e = shape.var_extent(out, v);
        AxisTiling a{v, 1, 1};
        if (i == 0) {
            p.vector_width = e >= lanes ? lanes : 1;
            a.reg = e >= 2 * lanes ? 2 * lanes : std::min<int64_t>(e, lanes);
            a.tile = std::min<int64_t>(e, a.reg * 4);
        } else if (i == 1) {
            a.reg = std::min<int64_t>(e, 4);
            a.tile = std::min<int64_t>(e, 64);
        }
        p.axes.push_back(a);
        p.outer_order.push_back(v);
    }
    if (main_is_fusable(def)) {
        for (auto it = ms.reduce_vars.rbegin(); it != ms.reduce_vars.rend(); ++it) {
            p.reduce.push_back({it->name, shape.eval(it->extent)});
        }
    }
    p.parallel_loops = 1;
    return p;
}

}  // namespace opgen
