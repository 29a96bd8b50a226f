#include "core/Schedule.h"

#include "core/AmxTile.h"
#include "core/ConvWindow.h"
#include "core/DotProduct.h"
#include "core/Gather.h"
#include "core/GemmPanel.h"
#include "core/ParallelLoops.h"
#include "core/StagePlacement.h"
#include "core/Streaming.h"

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
    if (!stages.empty()) {
        j["stages"] = nlohmann::json::array();
        for (const auto &c : stages) j["stages"].push_back({{"tensor", c.tensor}, {"at", c.at}, {"lanes", c.lanes}});
    }
    if (fast_math) j["fast_math"] = true;
    // Written only when it differs from the innermost axis, so older points read and print as before.
    if (vector_axis) j["vector_axis"] = vector_axis;
    if (channels_innermost) j["channels_innermost"] = true;
    if (dot_product) j["dot_product"] = dot_product;
    if (amx_tile) j["amx_tile"] = true;
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
        for (const auto &c : j.value("stages", nlohmann::json::array())) {
            p.stages.push_back({c.at("tensor").get<std::string>(), c.value("at", std::string("root")), c.value("lanes", 1)});
        }
        p.fast_math = j.value("fast_math", false);
        p.vector_axis = j.value("vector_axis", 0);
        p.channels_innermost = j.value("channels_innermost", false);
        p.dot_product = j.value("dot_product", 0);
        p.amx_tile = j.value("amx_tile", false);
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
    if (vector_axis > 0 && size_t(vector_axis) < axes.size()) s << " vec=" << axes[size_t(vector_axis)].var;
    if (!tile_order.empty()) {
        s << " tiles=";
        for (auto it = tile_order.rbegin(); it != tile_order.rend(); ++it) s << (it == tile_order.rbegin() ? "" : ",") << *it;
    }
    if (!unroll) s << " nounroll";
    if (prefetch) s << " prefetch=" << prefetch;
    if (!stages.empty()) {
        s << " stages=";
        for (size_t i = 0; i < stages.size(); i++) {
            s << (i ? "," : "") << stages[i].tensor << "@" << stages[i].at;
            if (stages[i].lanes > 1) s << "/" << stages[i].lanes;
        }
    }
    if (fast_math) s << " fastmath";
    if (channels_innermost) s << " cin";
    if (dot_product) s << " dot=" << dot_product;
    if (amx_tile) s << " amx";
    return s.str();
}

namespace {

// The pure locals the output reads, directly or through one another.
std::vector<const Statement *> pure_locals_read(const ComputeDef &def) {
    std::vector<const Statement *> chain;
    std::vector<const Statement *> todo{def.statement_for(def.output().name)};
    while (!todo.empty()) {
        const Statement *s = todo.back();
        todo.pop_back();
        for (const ExprNode *e : accesses(*s)) {
            const Statement *p = def.statement_for(e->name);
            if (!p || p->reduce != ReduceKind::None ||
                std::find(chain.begin(), chain.end(), p) != chain.end())
                continue;
            chain.push_back(p);
            todo.push_back(p);
        }
    }
    return chain;
}

// Whether every read in `s` of a tensor in `tensors` is at `s`'s own index variables, in order.
bool reads_pointwise(const Statement &s, const std::vector<std::string> &tensors) {
    for (const ExprNode *e : accesses(s)) {
        if (std::find(tensors.begin(), tensors.end(), e->name) == tensors.end())
            continue;
        if (e->args.size() != s.vars.size())
            return false;
        for (size_t i = 0; i < e->args.size(); i++) {
            if (e->args[i]->kind != ExprKind::IndexVar || e->args[i]->name != s.vars[i])
                return false;
        }
    }
    return true;
}

// The one reduction the output reads only through pure locals (int8 requantization: i32 sums ->
// f32 scaling -> u8 output), where the output, the locals and the reduction are all read
// pointwise, each at its reader's own variables; nullptr otherwise.
const Statement *reduction_behind_epilogue(const ComputeDef &def) {
    const Statement &out = *def.statement_for(def.output().name);
    std::vector<const Statement *> readers = pure_locals_read(def);
    const Statement *found = nullptr;
    for (const Statement *r : readers) {
        for (const ExprNode *e : accesses(*r)) {
            const Statement *s = def.statement_for(e->name);
            if (!s || s->reduce == ReduceKind::None)
                continue;
            if (found && found != s)
                return nullptr;
            found = s;
        }
    }
    if (!found || found->vars.size() != out.vars.size())
        return nullptr;
    std::vector<std::string> tensors{found->tensor};
    for (const Statement *r : readers)
        tensors.push_back(r->tensor);
    readers.push_back(&out);
    for (const Statement *r : readers) {
        if (r->vars.size() != out.vars.size() || !reads_pointwise(*r, tensors))
            return nullptr;
    }
    return found;
}

} // namespace

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
    if (!found)
        found = reduction_behind_epilogue(def); // an epilogue over several statements
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

std::vector<const Statement *> fused_epilogue(const ComputeDef &def) {
    const Statement &out = *def.statement_for(def.output().name);
    const Statement &m = main_statement(def);
    if (m.reduce == ReduceKind::None || &m == &out || find_access(out.body, m.tensor))
        return {};
    return pure_locals_read(def);
}

int op_vector_lanes(const ComputeDef &def, const Target &target) {
    int bytes = dtype_bytes(def.output().dtype);
    const Statement &m = main_statement(def);
    if (m.reduce != ReduceKind::None)
        bytes = std::max(bytes, dtype_bytes(def.find_tensor(m.tensor)->dtype));
    return target.vector_lanes(bytes);
}

int dimension_indexed_by(const Statement &ms, const std::string &input, const std::string &var) {
    std::vector<const ExprNode *> stack{ms.body.get()};
    while (!stack.empty()) {
        const ExprNode *e = stack.back();
        stack.pop_back();
        if (e->kind == ExprKind::Access && e->name == input) {
            for (size_t i = 0; i < e->args.size(); i++) {
                if (e->args[i]->kind == ExprKind::IndexVar && e->args[i]->name == var) return int(e->args.size() - 1 - i);
            }
        }
        for (const auto &a : e->args) stack.push_back(a.get());
    }
    return -1;
}

LoweredOp lower_for_point(const ComputeDef &def, const BoundShape &shape, const SchedulePoint *point) {
    return lower_to_halide(def, shape, point && point->fast_math);
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
    std::string buffer = target.cache_tile_buffer(input);
    return buffer.empty() ? target.input_path(input).back() : buffer;
}

bool reads_tensor(const Expr &e, const std::string &tensor) {
    if (e->kind == ExprKind::Access && e->name == tensor) return true;
    return std::any_of(e->args.begin(), e->args.end(), [&](const Expr &a) { return reads_tensor(a, tensor); });
}

// The output loop a cache tile's data (a blocked accumulator, packed panels) is computed at: the
// innermost loop outside the register tiles.
struct CacheLevel {
    Halide::VarOrRVar var = Halide::Var();
    std::string name;
};

// The output's loops, innermost first per axis, and its cache level.
struct OutputTiles {
    std::vector<Halide::Var> vo, vr, vi;  // cache tile, register tile, inside the register tile
    std::vector<Halide::Var> outer;       // the cache-tile loops in loop order, innermost first
    CacheLevel cache;
};

// Position in p.axes of the axis called `name`; UserError naming `field` when there is none.
size_t axis_index(const SchedulePoint &p, const std::string &name, const char *field) {
    auto it = std::find_if(p.axes.begin(), p.axes.end(), [&](const AxisTiling &a) { return a.var == name; });
    user_check(it != p.axes.end()) << "schedule: " << field << " names unknown axis '" << name << "'";
    return size_t(it - p.axes.begin());
}

// Splits each output axis into cache tile, register tile and inside (vo, vr, vi). UserError for an
// unknown axis, factors out of order, or a rank other than the output's.
OutputTiles split_output_axes(Recorder &rec, Halide::Func out, const std::string &f, const LoweredStage &st,
                              const SchedulePoint &p, const BoundShape &shape) {
    OutputTiles t;
    for (const AxisTiling &a : p.axes) {
        auto pos = std::find(st.var_names.begin(), st.var_names.end(), a.var);
        user_check(pos != st.var_names.end()) << "schedule: '" << a.var << "' is not a variable of " << f;
        Halide::Var v = st.vars[size_t(pos - st.var_names.begin())];
        int64_t extent = shape.var_extent(*st.statement, a.var);
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
    user_check(p.vector_axis >= 0 && size_t(p.vector_axis) < p.axes.size())
        << "schedule: vector_axis " << p.vector_axis << " must index one of the " << p.axes.size() << " axes";
    return t;
}

// The register tile's loops, innermost first: the vectorized axis's, then the others in the axes'
// order. `tile` holds one loop per axis, in the axes' order.
template <typename V>
std::vector<size_t> vector_axis_first(const SchedulePoint &p, const std::vector<V> &tile) {
    std::vector<size_t> order{size_t(p.vector_axis)};
    for (size_t i = 0; i < tile.size(); i++) {
        if (int(i) != p.vector_axis) order.push_back(i);
    }
    return order;
}

// Orders the output's loops, innermost first: inside the register tile, the register-tile loops
// (p.tile_order or the axes' order), the cache-tile loops (p.outer_order). Returns the cache-tile
// loops in that order. UserError when an order does not name every axis once.
std::vector<Halide::Var> order_output_loops(Recorder &rec, Halide::Func out, const std::string &f,
                                            const SchedulePoint &p, const OutputTiles &t) {
    std::vector<Halide::Var> outer;
    std::vector<Halide::VarOrRVar> order;
    std::string order_text;
    auto add = [&](const Halide::Var &v) {
        order.emplace_back(v);
        order_text += (order_text.empty() ? "" : ", ") + v.name();
    };
    for (size_t i : vector_axis_first(p, t.vi)) add(t.vi[i]);
    if (p.tile_order.empty()) {
        for (const auto &v : t.vr) add(v);
    } else {
        user_check(p.tile_order.size() == p.axes.size()) << "schedule: tile_order must name every axis once";
        for (const auto &name : p.tile_order) add(t.vr[axis_index(p, name, "tile_order")]);
    }
    user_check(p.outer_order.size() == p.axes.size()) << "schedule: outer_order must name every axis once";
    for (const auto &name : p.outer_order) {
        outer.push_back(t.vo[axis_index(p, name, "outer_order")]);
        add(outer.back());
    }
    out.reorder(order);
    rec.line(f + ".reorder(" + order_text + ");");
    return outer;
}

// Vectorizes the output's vectorized axis (the innermost unless the point names another: then its
// vectors are stored into the output's layout lane by lane) and unrolls the rest of its register
// tile.
void vectorize_output(Recorder &rec, Halide::Func out, const std::string &f, const SchedulePoint &p,
                      const OutputTiles &t) {
    int vw = p.vector_width;
    const size_t k = size_t(p.vector_axis);
    if (vw > 1) {
        Halide::TailStrategy tail = p.axes[k].reg % vw == 0 ? Halide::TailStrategy::ShiftInwards : Halide::TailStrategy::GuardWithIf;
        out.vectorize(t.vi[k], vw, tail);
        rec.line(f + ".vectorize(" + t.vi[k].name() + ", " + std::to_string(vw) + ", " + tail_name(tail) + ");");
        if (p.unroll && p.axes[k].reg > vw && tail == Halide::TailStrategy::ShiftInwards) {
            out.unroll(t.vi[k]);
            rec.line(f + ".unroll(" + t.vi[k].name() + ");");
        }
    }
    if (!p.unroll) return;
    for (size_t i = 0; i < t.vi.size(); i++) {
        if (i != k && p.axes[i].reg > 1) {
            out.unroll(t.vi[i]);
            rec.line(f + ".unroll(" + t.vi[i].name() + ");");
        }
    }
}

// Fuses the p.parallel_loops outermost cache-tile loops into one parallel loop (on a target with
// more than one core). Returns the cache level: the innermost cache-tile loop, or the fused loop
// when every cache-tile loop went into it.
CacheLevel parallelize_output(Recorder &rec, Halide::Func out, const std::string &f, const SchedulePoint &p,
                              const Target &target, const OutputTiles &t) {
    const std::vector<Halide::Var> &outer = t.outer;
    int par = std::min<int>(p.parallel_loops, int(outer.size()));
    CacheLevel cache{outer.empty() ? Halide::VarOrRVar(t.vr.back()) : Halide::VarOrRVar(outer.front()),
                     outer.empty() ? t.vr.back().name() : outer.front().name()};
    if (par <= 0 || target.cores <= 1) return cache;
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
    if (size_t(par) == outer.size()) return {Halide::VarOrRVar(fused), fused_name};
    return cache;
}

// Tiles the output (or any pure Func) per the point: returns the loop variables.
OutputTiles tile_output(Recorder &rec, Halide::Func out, const LoweredStage &st, const SchedulePoint &p,
                        const BoundShape &shape, const Target &target) {
    const std::string f = clean_name(out.name());
    OutputTiles t = split_output_axes(rec, out, f, st, p, shape);
    t.outer = order_output_loops(rec, out, f, p, t);
    vectorize_output(rec, out, f, p, t);
    t.cache = parallelize_output(rec, out, f, p, target, t);
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

// The stages a point tiles together: the output, and the main statement's stage, computed inside
// the output's tiles when it is a fusable reduction (a stage group of StageGraph.h, lowered).
struct TiledGroup {
    LoweredOp &op;
    const Statement &ms;  // the main statement
    LoweredStage &main;   // its stage
    bool fused = false;   // main is a reduction computed inside the output's tiles
};

// Whether the point places `tensor` with a StageChoice.
bool placed_by_point(const SchedulePoint &p, const std::string &tensor) {
    return std::any_of(p.stages.begin(), p.stages.end(), [&](const StageChoice &c) { return c.tensor == tensor; });
}

// Computes every reduction outside the group's tiles that the point does not place at root.
void schedule_root_reductions(Recorder &rec, const TiledGroup &g, const SchedulePoint &p, const Target &target) {
    for (auto &st : g.op.stages) {
        if (st.is_reduction() && !(g.fused && &st == &g.main) && !placed_by_point(p, st.statement->tensor)) {
            schedule_root_reduction(rec, st, g.op.shape, target);
        }
    }
}

// True when the point splits a reduction loop of the main statement into blocks. UserError for a
// variable that is not one of its reduction loops or a block outside [1, extent].
bool reduction_is_blocked(const TiledGroup &g, const SchedulePoint &p) {
    bool blocked = false;
    for (const auto &r : p.reduce) {
        auto pos = std::find(g.main.rvar_names.begin(), g.main.rvar_names.end(), r.var);
        user_check(pos != g.main.rvar_names.end()) << "schedule: '" << r.var << "' is not a reduction variable of " << g.ms.tensor;
        int64_t extent = g.op.shape.var_extent(g.ms, r.var);
        user_check(r.block >= 1 && r.block <= extent)
            << "schedule: reduction block " << r.block << " of " << r.var << " must be in [1, " << extent << "]";
        blocked |= r.block < extent;
    }
    return blocked;
}

// The block of reduction loop `rn`: the point's, or its whole extent when the point has none.
int64_t reduction_block(const TiledGroup &g, const SchedulePoint &p, const std::string &rn) {
    int64_t block = g.op.shape.var_extent(g.ms, rn);
    for (const auto &r : p.reduce) {
        if (r.var == rn) block = r.block;
    }
    return block;
}

// Where the main reduction's accumulator is computed and stored.
struct Accumulator {
    Halide::Func func;
    std::string name;
    bool blocked = false;       // holds a cache tile, its reduction split into blocks
    Halide::LoopLevel at;       // compute_at level in the output's loops
    std::string at_text;        // ... as printed: "<output>, <loop>"
    std::string buffer;         // the target buffer it is stored in
    int64_t init_extent = 1;    // extent of the init's innermost loop (register or cache tile)
};

// An accumulator per register tile: its registers are the cache_write buffer.
Accumulator accumulate_per_register_tile(const TiledGroup &g, const SchedulePoint &p, const Target &target,
                                         const OutputTiles &t) {
    Halide::Func out = g.op.output;
    return {g.main.acc, clean_name(g.main.acc.name()), false, Halide::LoopLevel(out, t.vr[0]),
            clean_name(out.name()) + ", " + t.vr[0].name(), target.output_path().front(),
            p.axes[size_t(p.vector_axis)].reg};
}

// An accumulator per cache tile, for a blocked reduction (Goto's kc blocking). UserError when a
// cache tile is not a whole number of register tiles.
Accumulator accumulate_per_cache_tile(const TiledGroup &g, const SchedulePoint &p, const Target &target,
                                      const OutputTiles &t) {
    for (const AxisTiling &a : p.axes) {
        user_check(a.tile % a.reg == 0) << "schedule: with a blocked reduction the tile of " << a.var << " (" << a.tile
                                        << ") must be a multiple of its register tile (" << a.reg << ")";
    }
    Halide::Func out = g.op.output;
    return {g.main.acc, clean_name(g.main.acc.name()), true, Halide::LoopLevel(out, t.cache.var),
            clean_name(out.name()) + ", " + t.cache.name, panel_buffer(target, 0),
            p.axes[size_t(p.vector_axis)].tile};
}

// Storage: computes the accumulator at its level and places it in its buffer, laid out with the
// vectorized axis innermost so that its vectors are contiguous.
void place_accumulator(Recorder &rec, const TiledGroup &g, const SchedulePoint &p, const Accumulator &acc,
                       const Target &target) {
    Halide::Func f = acc.func;
    f.compute_at(acc.at);
    rec.line(acc.name + ".compute_at(" + acc.at_text + ");");
    store_in(rec, f, acc.name, target, acc.buffer);
    if (p.vector_axis == 0) return;
    std::vector<Halide::Var> dims;
    std::string text;
    for (size_t i : vector_axis_first(p, g.main.vars)) {
        dims.push_back(g.main.vars[i]);
        text += (text.empty() ? "" : ", ") + g.main.var_names[i];
    }
    f.reorder_storage(dims);
    rec.line(acc.name + ".reorder_storage(" + text + ");");
}

// Whether the accumulator's vector loop may round a ragged register tile up to whole vectors (a row
// of 28 as two vectors of 16): the extra lanes land in the accumulator's own padded storage and are
// never stored, and what they read stays defined because every input the update reads along the
// vectorized axis is zero-padded (reads outside give zero). Otherwise the tile's tail is guarded,
// and a guarded tail inside the update keeps the accumulators out of registers: a stride-2 1x1
// convolution with rows of 28 as its register tile ran at 6.9 GFLOP/s guarded and 127 rounded up
// (measured on an Intel Xeon host).
bool may_round_up_accumulator(const TiledGroup &g, const SchedulePoint &p) {
    const std::string &v = p.axes[size_t(p.vector_axis)].var;
    for (const ExprNode *e : accesses(g.ms)) {
        const TensorDecl *t = g.op.def->find_tensor(e->name);
        if (mentions_var(*e, v) && (!t || t->role != TensorRole::Input || !t->zero_pad)) return false;
    }
    return true;
}

// Vectorizes loop `v` (`vn`) of stage `s` (`sn`) by the point's vector width, and unrolls it when
// whole vectors cover its extent more than once. `round_up_tail`: a ragged extent is rounded up to
// whole vectors (may_round_up_accumulator) instead of guarded.
void vectorize_loop(Recorder &rec, const SchedulePoint &p, Halide::Stage s, const std::string &sn, const Halide::Var &v,
                    const std::string &vn, int64_t extent, bool round_up_tail) {
    int vw = p.vector_width;
    if (vw <= 1) return;
    bool exact = extent % vw == 0;
    // Update stages may not shift inwards (it would add overlapping lanes twice); a guard that
    // divides evenly costs nothing, since Halide proves it away.
    bool round_up = exact ? sn.find(".update()") == std::string::npos : round_up_tail;
    Halide::TailStrategy tail = round_up ? Halide::TailStrategy::RoundUp : Halide::TailStrategy::GuardWithIf;
    s.vectorize(v, vw, tail);
    rec.line(sn + ".vectorize(" + vn + ", " + std::to_string(vw) + ", " + tail_name(tail) + ");");
    if (p.unroll && (exact || round_up) && extent > vw) {
        s.unroll(v);
        rec.line(sn + ".unroll(" + vn + ");");
    }
}

// Unrolls the register tile's loops other than the innermost (`vars`, innermost first), where the
// tile spans more than one point.
void unroll_register_tile(Recorder &rec, const SchedulePoint &p, Halide::Stage s, const std::string &sn,
                          const std::vector<Halide::Var> &vars, const std::vector<std::string> &names) {
    if (!p.unroll) return;
    for (size_t i = 0; i < vars.size(); i++) {
        if (int(i) != p.vector_axis && p.axes[i].reg > 1) {
            s.unroll(vars[i]);
            rec.line(sn + ".unroll(" + names[i] + ");");
        }
    }
}

// The accumulator's init: vectorized across its innermost loop; a register tile's other loops
// unrolled (a cache tile's are not: that would unroll the whole tile).
void vectorize_accumulator_init(Recorder &rec, const TiledGroup &g, const SchedulePoint &p, const Accumulator &acc) {
    const size_t k = size_t(p.vector_axis);
    vectorize_loop(rec, p, Halide::Stage(acc.func), acc.name, g.main.vars[k], g.main.var_names[k], acc.init_extent,
                   may_round_up_accumulator(g, p));
    if (!acc.blocked) unroll_register_tile(rec, p, Halide::Stage(acc.func), acc.name, g.main.vars, g.main.var_names);
}

// The accumulator's update loops once ordered, innermost first in each list.
struct UpdateLoops {
    Halide::Stage stage;
    std::string name;                          // as printed: "<acc>.update()"
    std::vector<Halide::Var> tile;             // the register tile
    std::vector<std::string> tile_names;
    std::vector<Halide::RVar> reduce;          // the reduction loops inside a block
    std::vector<std::string> reduce_names;
    std::vector<int64_t> reduce_extents;
    std::vector<Halide::RVar> blocks;          // the reduction-block loops (blocked only)
    std::vector<std::string> block_names;
};

// The order of the update's reduction loops inside a block, innermost first, as indices of the
// `n` loops (innermost first): as the op names them, or with channels_innermost the outermost one
// (input channels) innermost and the window loops around it.
std::vector<size_t> reduction_loop_order(const SchedulePoint &p, size_t n) {
    std::vector<size_t> order;
    if (p.channels_innermost && n >= 2) order.push_back(n - 1);
    for (size_t i = 0; i < n; i++) {
        if (order.empty() || i != order.front()) order.push_back(i);
    }
    return order;
}

// Unblocked update: the register tile inside the whole reduction.
UpdateLoops order_update(Recorder &rec, const TiledGroup &g, const SchedulePoint &p, const Accumulator &acc) {
    const LoweredStage &main = g.main;
    UpdateLoops u{Halide::Func(acc.func).update(), acc.name + ".update()", main.vars, main.var_names, {}, {}, {}, {}, {}};
    std::vector<Halide::VarOrRVar> order;
    std::string order_text;
    for (int i = 0; i < main.rdom.dimensions(); i++) {
        const std::string &rn = main.rvar_names[size_t(i)], &printed = main.rvar_idents[size_t(i)];
        u.reduce.push_back(main.rdom[i]);
        u.reduce_names.push_back(printed);
        u.reduce_extents.push_back(reduction_block(g, p, rn));
    }
    auto add = [&](Halide::VarOrRVar v, const std::string &n) {
        order.push_back(v);
        order_text += (order_text.empty() ? "" : ", ") + n;
    };
    if (p.dot_product) add(u.reduce[0], u.reduce_names[0]);
    for (size_t i : vector_axis_first(p, main.vars)) add(main.vars[i], main.var_names[i]);
    for (size_t i : reduction_loop_order(p, u.reduce.size())) {
        if (!(p.dot_product && i == 0)) add(u.reduce[i], u.reduce_names[i]);
    }
    u.stage.reorder(order);
    rec.line(u.name + ".reorder(" + order_text + ");");
    return u;
}

// Reduction blocking: splits the update's register tile out of the cache tile (__ur, __ui) and
// each reduction loop into blocks (__o, __i), then walks reduction blocks outermost, then register
// tiles, then the block's reduction loop, then the register tile.
UpdateLoops block_update(Recorder &rec, const TiledGroup &g, const SchedulePoint &p, const Accumulator &acc) {
    const LoweredStage &main = g.main;
    UpdateLoops u{Halide::Func(acc.func).update(), acc.name + ".update()", {}, {}, {}, {}, {}, {}, {}};
    std::vector<Halide::Var> ur;
    for (size_t i = 0; i < main.vars.size(); i++) {
        Halide::Var vr(main.var_names[i] + "__ur"), vi(main.var_names[i] + "__ui");
        rec.declare_var(vr.name());
        rec.declare_var(vi.name());
        u.stage.split(main.vars[i], vr, vi, int(p.axes[i].reg), Halide::TailStrategy::GuardWithIf);
        rec.line(u.name + ".split(" + main.var_names[i] + ", " + vr.name() + ", " + vi.name() + ", " +
                 std::to_string(p.axes[i].reg) + ");");
        ur.push_back(vr);
        u.tile.push_back(vi);
        u.tile_names.push_back(vi.name());
    }
    for (int i = 0; i < main.rdom.dimensions(); i++) {
        const std::string &rn = main.rvar_names[size_t(i)], &printed = main.rvar_idents[size_t(i)];
        int64_t block = reduction_block(g, p, rn);
        Halide::RVar rvo(printed + "__o"), rvi(printed + "__i");
        rec.declare_rvar(rvo.name());
        rec.declare_rvar(rvi.name());
        // A block that does not divide the extent leaves a guarded last block (a reduction may not
        // recompute, so no ShiftInwards).
        bool divides = g.op.shape.var_extent(g.ms, rn) % block == 0;
        u.stage.split(main.rdom[i], rvo, rvi, int(block), divides ? Halide::TailStrategy::Auto : Halide::TailStrategy::GuardWithIf);
        rec.line(u.name + ".split(" + printed + ", " + rvo.name() + ", " + rvi.name() + ", " + std::to_string(block) +
                 (divides ? "" : ", TailStrategy::GuardWithIf") + ");");
        u.blocks.push_back(rvo);
        u.block_names.push_back(rvo.name());
        u.reduce.push_back(rvi);
        u.reduce_names.push_back(rvi.name());
        u.reduce_extents.push_back(block);
    }
    std::vector<Halide::VarOrRVar> order;
    std::string order_text;
    auto add = [&](Halide::VarOrRVar v, const std::string &n) {
        order.push_back(v);
        order_text += (order_text.empty() ? "" : ", ") + n;
    };
    if (p.dot_product) add(u.reduce[0], u.reduce_names[0]);
    for (size_t i : vector_axis_first(p, u.tile)) add(u.tile[i], u.tile_names[i]);
    for (size_t i : reduction_loop_order(p, u.reduce.size())) {
        if (!(p.dot_product && i == 0)) add(u.reduce[i], u.reduce_names[i]);
    }
    for (const auto &v : ur) add(v, v.name());
    for (size_t i = 0; i < u.blocks.size(); i++) add(u.blocks[i], u.block_names[i]);
    u.stage.reorder(order);
    rec.line(u.name + ".reorder(" + order_text + ");");
    return u;
}

// Dot-product blocking (core/DotProduct.h): the innermost reduction loop, of the group's extent and
// ordered innermost, is vectorized inside an atomic update, so each group of products is one
// VectorReduce that Halide's x86 code generator turns into the dot-product instruction (with the
// accumulator's vector as its addend). Nothing without p.dot_product.
void reduce_in_lanes(Recorder &rec, const SchedulePoint &p, const UpdateLoops &u) {
    if (!p.dot_product) return;
    user_check(!u.reduce.empty() && u.reduce_extents[0] == p.dot_product)
        << "schedule: dot product of " << p.dot_product << " needs an innermost reduction loop of that extent";
    Halide::Stage(u.stage).atomic().vectorize(u.reduce[0]);
    rec.line(u.name + ".atomic().vectorize(" + u.reduce_names[0] + ");");
}

// Vectorizes the update's register tile and unrolls the rest of it, and short reduction loops
// (all but the outermost; none with channels_innermost) whole: no loop overhead between FMAs.
void vectorize_update(Recorder &rec, const TiledGroup &g, const SchedulePoint &p, const UpdateLoops &u) {
    const size_t k = size_t(p.vector_axis);
    reduce_in_lanes(rec, p, u);
    vectorize_loop(rec, p, u.stage, u.name, u.tile[k], u.tile_names[k], p.axes[k].reg, may_round_up_accumulator(g, p));
    unroll_register_tile(rec, p, u.stage, u.name, u.tile, u.tile_names);
    for (size_t i = p.dot_product ? 1 : 0; p.unroll && !p.channels_innermost && i + 1 < u.reduce.size(); i++) {
        if (u.reduce_extents[i] <= kUnrollWindow) {
            Halide::Stage(u.stage).unroll(u.reduce[i]);
            rec.line(u.name + ".unroll(" + u.reduce_names[i] + ");");
        }
    }
}

// Prefetches every input the reduction reads directly (not through a packed panel) p.prefetch
// steps ahead along the update's outermost reduction loop inside a block.
void prefetch_inputs(Recorder &rec, const TiledGroup &g, const SchedulePoint &p, const UpdateLoops &u) {
    if (p.prefetch <= 0 || u.reduce.empty()) return;
    const Halide::RVar &r = u.reduce.back();
    const std::string &rn = u.reduce_names.back();
    for (size_t i = 0; i < g.op.params.size(); i++) {
        const std::string &name = g.op.param_names[i];
        if (!reads_tensor(g.ms.body, name) || std::find(p.packed.begin(), p.packed.end(), name) != p.packed.end())
            continue;
        Halide::Stage(u.stage).prefetch(g.op.params[i], r, r, p.prefetch, Halide::PrefetchBoundStrategy::NonFaulting);
        rec.line(u.name + ".prefetch(" + name + ", " + rn + ", " + rn + ", " + std::to_string(p.prefetch) +
                 ", PrefetchBoundStrategy::NonFaulting);");
    }
}

// Where packed panels are computed: per cache tile of the output, or per reduction block of a
// blocked accumulator (where a double-buffered buffer fills the next block asynchronously).
struct PanelLevel {
    Halide::LoopLevel at;
    std::string at_text;  // as printed: "<func>, <loop>"
    bool blocked = false;
};

// Per cache tile of the output.
PanelLevel cache_panel_level(const TiledGroup &g, const OutputTiles &t) {
    return {Halide::LoopLevel(g.op.output, t.cache.var), clean_name(g.op.output.name()) + ", " + t.cache.name, false};
}

// Panels go with the loop they feed: per reduction block when the reduction is blocked, else per
// cache tile of the output.
PanelLevel panel_level(const TiledGroup &g, const OutputTiles &t, const Accumulator &acc, const UpdateLoops &u) {
    if (acc.blocked) return {Halide::LoopLevel(acc.func, u.blocks.front()), acc.name + ", " + u.block_names.front(), true};
    return cache_panel_level(g, t);
}

// Whether `ms` reads `input`'s Halide dimension `d` (0 the contiguous one) at an index that moves
// with variable `var`.
bool reads_dimension_along(const Statement &ms, const std::string &input, int d, const std::string &var) {
    const std::vector<const ExprNode *> all = accesses(ms);
    return std::any_of(all.begin(), all.end(), [&](const ExprNode *e) {
        return e->name == input && d < int(e->args.size()) && mentions_var(e->args[e->args.size() - 1 - size_t(d)], var);
    });
}

// Re-lays panel `pk` (printed `pn`) out with its dimension `d` contiguous, and orders the copy to
// fill one vector of that dimension (16 rows of the input) across the whole panel before the next:
// walked with all of them innermost, the copy kept one stream per row of the panel in flight (512
// filters of a 3x3's weights: 32 KiB of lines, evicted before their next element was read).
// Measured on an AMD Zen 5 host, conv 7x7x512->512 3x3, 1 thread, at a tile of 512 filters: the
// weights' pack took 3.1 of 4.2 ms and the kernel ran at 56 GFLOP/s; filled a vector at a time,
// 150.
void relayout_panel_across(Recorder &rec, const SchedulePoint &p, Halide::Func pk, const std::string &pn, int d,
                           Halide::TailStrategy tail) {
    const std::vector<Halide::Var> args = pk.args();
    const Halide::Var across = args[size_t(d)];
    std::vector<Halide::Var> rest;  // the other dimensions, in order
    std::string rest_text;          // as printed: ", _0, _1, ..."
    for (size_t i = 0; i < args.size(); i++) {
        if (int(i) == d) continue;
        rest.push_back(args[i]);
        rest_text += ", " + clean_name(args[i].name());
    }
    std::vector<Halide::Var> storage{across};
    storage.insert(storage.end(), rest.begin(), rest.end());
    pk.reorder_storage(storage);
    rec.line(pn + ".reorder_storage(" + clean_name(across.name()) + rest_text + ");");
    const Halide::Var vo(pn + "_lanes__o"), vi(pn + "_lanes__i");
    rec.declare_var(vo.name());
    rec.declare_var(vi.name());
    pk.split(across, vo, vi, p.vector_width, tail);
    rec.line(pn + ".split(" + clean_name(across.name()) + ", " + vo.name() + ", " + vi.name() + ", " +
             std::to_string(p.vector_width) + ", " + tail_name(tail) + ");");
    std::vector<Halide::VarOrRVar> order{vi};
    order.insert(order.end(), rest.begin(), rest.end());
    order.push_back(vo);
    pk.reorder(order);
    rec.line(pn + ".reorder(" + vi.name() + rest_text + ", " + vo.name() + ");");
    pk.vectorize(vi);
    rec.line(pn + ".vectorize(" + vi.name() + ");");
}

// A dot product's grouped operand (core/DotProduct.h: B[kb, n, kk]) keeps its layout in its panel,
// the group innermost as the instruction reads it; the copy moves the group and a vector of the
// next dimension at a time (64 bytes of int8 B). Packed so, an int8 matmul's B is read from a
// dense panel instead of rows N * 4 bytes apart (4 KiB at N = 1024: one L1 set).
void vectorize_grouped_panel(Recorder &rec, const SchedulePoint &p, Halide::Func pk, const std::string &pn,
                             Halide::TailStrategy tail) {
    const std::vector<Halide::Var> args = pk.args();
    pk.vectorize(args[0], p.dot_product).vectorize(args[1], p.vector_width, tail);
    rec.line(pn + ".vectorize(" + clean_name(args[0].name()) + ", " + std::to_string(p.dot_product) + ").vectorize(" +
             clean_name(args[1].name()) + ", " + std::to_string(p.vector_width) + ", " + tail_name(tail) + ");");
}

// Vectorizes a panel's copy along its contiguous dimension; or, when the vectorized axis indexes
// another dimension of the input (output channels of a convolution's weights, n of B in A B^T,
// which is read across its rows), re-lays the panel out with that dimension contiguous
// (relayout_panel_across), so the update loads whole vectors of it instead of gathering.
void vectorize_panel(Recorder &rec, const TiledGroup &g, const SchedulePoint &p, Halide::Func pk,
                     const std::string &name) {
    const std::string pn = name + "_panel";
    const int d = dimension_indexed_by(g.ms, name, p.axes[size_t(p.vector_axis)].var);
    // Where the accumulator rounds a ragged register tile up to whole vectors, the panel fills those
    // lanes too (with the zeros of the padded input): guarded, it left them unwritten, and whatever
    // the heap held there (denormals at times) went through every FMA of those lanes. Measured
    // 2026-11-27: the same stride-2 kernel ran at 2-100 GFLOP/s depending on the process.
    const std::string &var = p.axes[size_t(p.vector_axis)].var;
    const bool round_up = may_round_up_accumulator(g, p) && p.axes[size_t(p.vector_axis)].reg % p.vector_width != 0 &&
                          reads_dimension_along(g.ms, name, std::max(d, 0), var);
    const Halide::TailStrategy tail = round_up ? Halide::TailStrategy::RoundUp : Halide::TailStrategy::GuardWithIf;
    if (p.dot_product && d > 0 && reads_dimension_along(g.ms, name, 0, g.main.rvar_names.front())) {
        vectorize_grouped_panel(rec, p, pk, pn, tail);
        return;
    }
    if (d > 0) {
        relayout_panel_across(rec, p, pk, pn, d, tail);
        return;
    }
    const Halide::Var v = pk.args()[0];
    pk.vectorize(v, p.vector_width, tail);
    rec.line(pn + ".vectorize(" + clean_name(v.name()) + ", " + std::to_string(p.vector_width) + ", " + tail_name(tail) +
             ");");
}

// How generated source names the Func the reduction reads input `t` through: its gather
// (core/Gather.h), its zero-exterior wrapper, or the buffer.
std::string read_func_text(const TiledGroup &g, const TensorDecl &t) {
    return g.op.gathered_read(t.name) ? gathered_name(t.name) : read_func_name(t);
}

// Rows of a gathered panel this far apart (bytes) or more are staged (copy_rows_before_panel): rows
// 4 KiB apart (an L1 way: 64 sets of 64 B) fall into one set, and the 16 rows of a vector overflow
// its 12 ways. Measured on an AMD EPYC host, 1 thread, ResNet-50's 1x1 convolutions: staged, rows
// of 4 and 8 KiB 1.17-1.36x; rows of 1 and 2 KiB 0.91-0.98x, so those keep the direct gather.
constexpr int64_t kAliasingRowBytes = 4096;

// The Halide dimension of `t` (0 the contiguous one) that holds its innermost run of more than one
// element (a 1x1 convolution's weights Wt[f, c, 1, 1]: c, dimension 2), or -1 when that run is
// shorter than `lanes`.
int innermost_run_dimension(const TensorDecl &t, const BoundShape &shape, int lanes) {
    for (size_t i = 0; i < t.dims.size(); i++) {
        int64_t extent = shape.eval(t.dims[t.dims.size() - 1 - i]);
        if (extent == 1) continue;
        return extent >= lanes ? int(i) : -1;
    }
    return -1;
}

// The distance in bytes between consecutive entries of `t`'s Halide dimension `d`.
int64_t row_bytes(const TensorDecl &t, const BoundShape &shape, int d) {
    int64_t n = dtype_bytes(t.dtype);
    for (int i = 0; i < d; i++) n *= shape.eval(t.dims[t.dims.size() - 1 - size_t(i)]);
    return n;
}

// A panel re-laid out across its input's rows (vectorize_panel) gathers one lane from each of 16
// rows; rows kAliasingRowBytes apart or more (a 1x1 convolution's weights over 1024 channels or
// more) share an L1 set, so the gathers miss and refetch each line once per channel. Instead the
// panel is filled a vector of the rows' run at a time (16 channels): those pieces of its rows are
// first copied densely (one whole-vector load per row, each line read once) into a small buffer of
// rows a line apart, and the panel gathers from it. Only where the rows' innermost run fills a
// vector: a 3x3's weights (runs of 3) keep the direct gather.
void copy_rows_before_panel(Recorder &rec, const TiledGroup &g, const SchedulePoint &p, Halide::Func pk,
                            const std::string &name) {
    const int across = dimension_indexed_by(g.ms, name, p.axes[size_t(p.vector_axis)].var);
    const TensorDecl *t = g.op.def->find_tensor(name);
    if (across <= 0 || !t) return;
    const int run = innermost_run_dimension(*t, g.op.shape, p.vector_width);
    if (run < 0 || run >= across || row_bytes(*t, g.op.shape, across) < kAliasingRowBytes) return;
    const std::string pn = name + "_panel", rn = name + "_rows", lanes = std::to_string(p.vector_width);
    // Named after the input: the panel's own variables are implicit ones (_0, _1, ...).
    Halide::Var v = pk.args()[size_t(run)];
    const std::string vn = clean_name(v.name());
    Halide::Var vo(name + "_run__o"), vi(name + "_run__i");
    rec.declare_var(vo.name());
    rec.declare_var(vi.name());
    pk.split(v, vo, vi, p.vector_width, Halide::TailStrategy::GuardWithIf);
    rec.line(pn + ".split(" + vn + ", " + vo.name() + ", " + vi.name() + ", " + lanes + ", TailStrategy::GuardWithIf);");
    Halide::Func rows = g.op.read_func(name).in(pk);
    rows.compute_at(pk, vo);
    rec.line("Func " + rn + " = " + read_func_text(g, *t) + ".in(" + pn + ");");
    rec.line(rn + ".compute_at(" + pn + ", " + vo.name() + ");");
    Halide::Var r = rows.args()[size_t(run)];
    rows.vectorize(r, p.vector_width, Halide::TailStrategy::GuardWithIf);
    rec.line(rn + ".vectorize(" + clean_name(r.name()) + ", " + lanes + ", TailStrategy::GuardWithIf);");
}

// Panels/packing: copies each packed input into a contiguous panel (Func::in) computed at `level`,
// stored in its path's cache-tile buffer. UserError for a name that is not an input the reduction
// reads.
void pack_panels(Recorder &rec, const TiledGroup &g, const SchedulePoint &p, const Target &target,
                 const Accumulator &acc, const PanelLevel &level) {
    for (const auto &name : p.packed) {
        auto in = g.op.input_funcs.find(name);
        user_check(in != g.op.input_funcs.end()) << "schedule: packed '" << name << "' is not an input";
        user_check(reads_tensor(g.ms.body, name)) << "schedule: packed '" << name << "' is not read by the reduction of " << g.ms.tensor;
        Halide::Func pk = g.op.read_func(name).in(acc.func);
        pk.compute_at(level.at);
        rec.line("Func " + name + "_panel = " + read_func_text(g, *g.op.def->find_tensor(name)) + ".in(" + acc.name + ");");
        rec.line(name + "_panel.compute_at(" + level.at_text + ");");
        std::string buffer = panel_buffer(target, input_position(*g.op.def, g.ms, name));
        store_in(rec, pk, name + "_panel", target, buffer);
        const BufferLevel *b = target.find_buffer(buffer);
        if (level.blocked && b && b->double_buffered) {
            // Double buffering: the panel's storage spans the reduction-block loop, and an async
            // producer fills the next block while the current one is consumed.
            pk.store_at(acc.func, Halide::Var::outermost()).async();
            rec.line(name + "_panel.store_at(" + acc.name + ", Var::outermost()).async();  // double-buffered " + buffer);
        }
        if (p.vector_width > 1) {
            vectorize_panel(rec, g, p, pk, name);
            copy_rows_before_panel(rec, g, p, pk, name);
        }
    }
}

// Vectorizes the two pure loops of `s` (printed `sn`) by the AMX tile's columns and rows: its
// 16 x 16 at once. Split by the tile rather than vectorized whole: inside a shifted cache tile the
// loops' extents are 16 only once simplified, which vectorize() does not wait for; rounded up, the
// outer loops of the splits run once.
void vectorize_whole_tile(Recorder &rec, Halide::Stage s, const std::string &sn, const std::vector<Halide::Var> &vars,
                          const std::vector<std::string> &names) {
    for (size_t i = 0; i < vars.size(); i++) {
        const int lanes = i == 0 ? kAmxTileColumns : kAmxTileRows;
        s.vectorize(vars[i], lanes, Halide::TailStrategy::RoundUp);
        rec.line(sn + ".vectorize(" + names[i] + ", " + std::to_string(lanes) + ", TailStrategy::RoundUp);");
    }
}

// An AMX accumulator (core/AmxTile.h): one tile per register tile, computed at the innermost
// register-tile loop and stored in MemoryType::AMXTile; its init vectorized whole (tilezero), its
// update atomic with the group loop, then the tile's columns and rows, vectorized innermost (a
// VectorReduce of 4 over 16 x 16 lanes: tdpbusd); its reader a whole-tile copy (`<acc>.in()`,
// tilestored to the stack), which the output and any fused epilogue read as vectors: Halide
// refuses any other use of a tile. UserError for a point that is not an AMX point, or a target
// without amx_int8 (a winner tuned on an AMX host, compiled for one without).
Accumulator accumulate_in_amx_tile(Recorder &rec, const TiledGroup &g, const SchedulePoint &p, const Target &target,
                                   const OutputTiles &t) {
    user_check(target.has_feature("amx_int8"))
        << "schedule: amx_tile on target '" << target.name << "', which has no amx_int8";
    user_check(p.dot_product == 4 && amx_register_tile(p) && !reduction_is_blocked(g, p) && g.main.vars.size() == 2)
        << "schedule: amx_tile needs dot_product 4, a register tile of " << kAmxTileRows << " x " << kAmxTileColumns
        << " vectorized by " << kAmxTileColumns << " on its innermost axis, and an unblocked reduction";
    const size_t k = p.tile_order.empty() ? 0 : axis_index(p, p.tile_order.front(), "tile_order");
    const std::string out = clean_name(g.op.output.name()), an = clean_name(g.main.acc.name());
    Accumulator acc{g.main.acc, an, false, Halide::LoopLevel(g.op.output, t.vr[k]), out + ", " + t.vr[k].name(), "",
                    kAmxTileColumns};
    Halide::Func copy = acc.func.in();
    copy.compute_at(acc.at);
    rec.line("Func " + an + "_tile = " + an + ".in();");
    rec.line(an + "_tile.compute_at(" + acc.at_text + ");");
    std::vector<std::string> copy_names;
    for (const Halide::Var &v : copy.args()) copy_names.push_back(clean_name(v.name()));
    // Rows of the copy two tiles wide: a dense 16 x 16 copy's index simplifies to one ramp of 256,
    // which Halide's matcher does not take for a tile store.
    copy.align_storage(copy.args()[0], 2 * kAmxTileColumns);
    rec.line(an + "_tile.align_storage(" + copy_names[0] + ", " + std::to_string(2 * kAmxTileColumns) + ");");
    vectorize_whole_tile(rec, Halide::Stage(copy), an + "_tile", copy.args(), copy_names);
    acc.func.compute_at(acc.at).store_in(Halide::MemoryType::AMXTile);
    rec.line(an + ".compute_at(" + acc.at_text + ").store_in(MemoryType::AMXTile);");
    vectorize_whole_tile(rec, Halide::Stage(acc.func), an, g.main.vars, g.main.var_names);
    Halide::Stage u = acc.func.update();
    const std::string un = an + ".update()", group = g.main.rvar_idents[0];
    u.reorder(g.main.rdom[0], g.main.vars[0], g.main.vars[1], g.main.rdom[1]);
    rec.line(un + ".reorder(" + group + ", " + g.main.var_names[0] + ", " + g.main.var_names[1] + ", " +
             g.main.rvar_idents[1] + ");");
    u.atomic().vectorize(g.main.rdom[0]);
    rec.line(un + ".atomic().vectorize(" + group + ");");
    vectorize_whole_tile(rec, u, un, g.main.vars, g.main.var_names);
    rec.line("// and opgen's lowering pass widen_amx_reduction (core/AmxLowering.h): without it "
             "Halide 14 issues one tdpbusd per 4 bytes of K");
    g.op.amx_tile = true;
    return acc;
}

// Where a placed statement is computed: at root, or at a loop of the output (tile_level).
struct StagePlace {
    bool root = true;
    Halide::LoopLevel at;
    std::string at_text;  // as printed: "<output>, <loop>"
};

// Computes `f` (printed `fn`) at its place.
void compute_at_place(Recorder &rec, Halide::Func f, const std::string &fn, const StagePlace &place) {
    if (place.root) {
        f.compute_root();
        rec.line(fn + ".compute_root();");
        return;
    }
    f.compute_at(place.at);
    rec.line(fn + ".compute_at(" + place.at_text + ");");
}

// A root stage's parallel loop: its outermost pure loop, on a target with more than one core,
// when that loop has more than one iteration (`iterations`).
void parallel_outermost(Recorder &rec, Halide::Stage s, const std::string &sn, const LoweredStage &st,
                        const StagePlace &place, const Target &target, int64_t iterations) {
    if (!place.root || target.cores <= 1 || iterations <= 1) return;
    s.parallel(st.vars.back());
    rec.line(sn + ".parallel(" + st.var_names.back() + ");");
}

// Vectorizes stage `s`'s innermost pure loop (extent `e0`) by `vw` when it is that wide; returns
// the iterations left on its outermost pure loop (for parallel_outermost). `guard`: a guarded
// tail (update stages, which may not recompute, and stages in a tile, whose region may be
// narrower than a vector); else the last vector shifts inwards.
int64_t vectorize_pure_loop(Recorder &rec, Halide::Stage s, const std::string &sn, const LoweredStage &st,
                            const BoundShape &shape, int vw, bool guard) {
    int64_t e0 = shape.var_extent(*st.statement, st.var_names[0]);
    int64_t outer = shape.var_extent(*st.statement, st.var_names.back());
    if (vw <= 1 || e0 < vw) return outer;
    Halide::TailStrategy tail = guard ? Halide::TailStrategy::GuardWithIf : Halide::TailStrategy::ShiftInwards;
    s.vectorize(st.vars[0], vw, tail);
    rec.line(sn + ".vectorize(" + st.var_names[0] + ", " + std::to_string(vw) + ", " + tail_name(tail) + ");");
    return st.vars.size() == 1 ? (e0 + vw - 1) / vw : outer;
}

// A pointwise statement at root or tile: vectorized along its contiguous axis, parallel over its
// outermost at root.
void place_pointwise(Recorder &rec, LoweredStage &st, const StagePlace &place, const BoundShape &shape,
                     const Target &target, int vw) {
    const std::string f = clean_name(st.func.name());
    compute_at_place(rec, st.func, f, place);
    int64_t iterations = vectorize_pure_loop(rec, Halide::Stage(st.func), f, st, shape, vw, !place.root);
    parallel_outermost(rec, Halide::Stage(st.func), f, st, place, target, iterations);
}

// Partial results: splits the innermost reduction loop by `lanes` and rfactors the inner part into
// a Func of `lanes` partial results per point (computed per point of the accumulator, vectorized
// and unrolled across its lanes), which the accumulator's update then combines (lesson 18).
void rfactor_lanes(Recorder &rec, LoweredStage &st, const BoundShape &shape, int lanes, int vw) {
    const std::string acc = clean_name(st.acc.name());
    const std::string t = st.statement->tensor, rn = st.rvar_names[0];
    int64_t extent = shape.var_extent(*st.statement, rn);
    user_check(lanes % std::max(vw, 1) == 0 && extent % lanes == 0)
        << "schedule: " << t << " lanes " << lanes << " must be a multiple of " << vw << " dividing " << rn << "'s extent "
        << extent;
    Halide::RVar ro(t + "_" + rn + "__o"), ri(t + "_" + rn + "__i");
    Halide::Var u(t + "__u");
    rec.declare_rvar(ro.name());
    rec.declare_rvar(ri.name());
    rec.declare_var(u.name());
    Halide::Stage upd = st.acc.update();
    upd.split(st.rdom[0], ro, ri, lanes);
    rec.line(acc + ".update().split(" + st.rvar_idents[0] + ", " + ro.name() + ", " + ri.name() + ", " + std::to_string(lanes) + ");");
    Halide::Func intm = upd.rfactor(ri, u);
    const std::string in = t + "_lanes";
    rec.line("Func " + in + " = " + acc + ".update().rfactor(" + ri.name() + ", " + u.name() + ");");
    intm.compute_at(st.acc, st.vars[0]);
    rec.line(in + ".compute_at(" + acc + ", " + st.var_names[0] + ");");
    intm.vectorize(u, vw);
    rec.line(in + ".vectorize(" + u.name() + ", " + std::to_string(vw) + ");");
    Halide::Stage iu = intm.update();
    iu.vectorize(u, vw);
    rec.line(in + ".update().vectorize(" + u.name() + ", " + std::to_string(vw) + ");");
    if (lanes > vw) {
        iu.unroll(u);
        rec.line(in + ".update().unroll(" + u.name() + ");");
    }
    // The lanes combined as one vector reduction (a tree of vector adds, then a horizontal one)
    // instead of `lanes` dependent scalar adds, which cost as much as the partial sums themselves
    // on a 768-wide row.
    upd.atomic().vectorize(ri);
    rec.line(acc + ".update().atomic().vectorize(" + ri.name() + ");");
}

// A reduction at root or tile: partial results in `lanes` lanes (1: across its own innermost pure
// loop, vectorized when wide enough, as schedule_root_reduction), parallel over its outermost pure
// loop at root.
void place_reduction(Recorder &rec, LoweredStage &st, const StageChoice &c, const StagePlace &place,
                     const BoundShape &shape, const Target &target, int vw) {
    const std::string f = clean_name(st.acc.name());
    compute_at_place(rec, st.acc, f, place);
    int64_t outer = shape.var_extent(*st.statement, st.var_names.back());
    if (c.lanes > 1) {
        rfactor_lanes(rec, st, shape, c.lanes, vw);
        parallel_outermost(rec, st.acc.update(), f + ".update()", st, place, target, outer);
        return;
    }
    vectorize_pure_loop(rec, Halide::Stage(st.acc), f, st, shape, vw, !place.root);
    int64_t iterations = vectorize_pure_loop(rec, st.acc.update(), f + ".update()", st, shape, vw, true);
    parallel_outermost(rec, st.acc.update(), f + ".update()", st, place, target, iterations);
}

// Where the statements placed at tile are computed: the innermost of the output's cache-tile loops
// outside every loop over a variable that one of them, or one placed at row, lacks (softmax's
// rows, with the row kept whole: the m loop outside the n loop), so none is computed twice for
// one row; all at the same level, so a producer is never inside its consumer's. At root when
// there is no such loop (the outermost loop, or the parallel loop fused from the outermost ones,
// runs over another variable): inside it they would be recomputed once per tile of that
// variable. The statements at row count too, so that the row level (row_level) is at or inside
// this one and a row statement never runs outside the tile statements it reads. Also returns, in
// `inner`, the loops inside that level down to the register tile, outermost first, with their
// variable and trip count (for row_level).
struct InnerLoop {
    Halide::Var var;
    std::string axis;
    int64_t trips = 1;
};

StagePlace tile_level(const TiledGroup &g, const SchedulePoint &p, const Target &target, const OutputTiles &t,
                      std::vector<InnerLoop> *inner = nullptr) {
    const std::string out = clean_name(g.op.output.name());
    size_t n = t.outer.size(), shared = n;
    for (const StageChoice &c : p.stages) {
        if (c.at != "tile" && c.at != "row") continue;
        const auto &vars = g.op.def->statement_for(c.tensor)->vars;
        size_t k = 0;  // outermost loops over variables the statement has
        while (k < n && std::find(vars.begin(), vars.end(), p.outer_order[n - 1 - k]) != vars.end()) k++;
        shared = std::min(shared, k);
    }
    size_t par = target.cores > 1 ? size_t(std::clamp(p.parallel_loops, 0, int(n))) : 0;
    if (shared == 0 || (par >= 2 && shared < par)) return StagePlace{};
    if (inner) {
        const Statement &os = *g.op.def->statement_for(g.op.def->output().name);
        for (size_t i = n - shared; i-- > 0;) {  // the cache-tile loops inside the level
            const AxisTiling &a = p.axes[axis_index(p, p.outer_order[i], "outer_order")];
            int64_t e = g.op.shape.var_extent(os, a.var);
            inner->push_back({t.outer[i], a.var, (e + a.tile - 1) / a.tile});
        }
        std::vector<std::string> tile_order = p.tile_order;  // register-tile loops, innermost first
        if (tile_order.empty()) {
            for (const AxisTiling &a : p.axes) tile_order.push_back(a.var);
        }
        for (size_t i = tile_order.size(); i-- > 0;) {
            size_t k = axis_index(p, tile_order[i], "tile_order");
            const AxisTiling &a = p.axes[k];
            inner->push_back({t.vr[k], a.var, (a.tile + a.reg - 1) / a.reg});
        }
    }
    // The fused loop itself: the cache level when every cache-tile loop went into it (no handle
    // to it otherwise).
    if (par >= 2 && shared == par) {
        if (par < n) return StagePlace{};
        return {false, Halide::LoopLevel(g.op.output, t.cache.var), out + ", " + t.cache.name};
    }
    const Halide::Var &v = t.outer[n - shared];
    return {false, Halide::LoopLevel(g.op.output, v), out + ", " + v.name()};
}

// Where the statements placed at row are computed: from the level of tile_level inward through
// the loops over variables every row statement has, down to the register tile of the rows,
// stepping over loops of one trip and stopping at the first loop over another variable. For
// softmax tiled m:64/1 n:N/32, that is the m register loop: each row's exponentials (12 KiB at
// N=3072) are made and consumed in L1 where a 64-row tile's would fill 768 KiB, beyond L2. The
// same level as tile_level where no such loop is inside it.
StagePlace row_level(const TiledGroup &g, const SchedulePoint &p, const Target &target, const OutputTiles &t) {
    std::vector<InnerLoop> inner;
    StagePlace place = tile_level(g, p, target, t, &inner);
    if (place.root) return place;
    const std::string out = clean_name(g.op.output.name());
    for (const InnerLoop &loop : inner) {
        bool every = std::all_of(p.stages.begin(), p.stages.end(), [&](const StageChoice &c) {
            if (c.at != "row") return true;
            const auto &vars = g.op.def->statement_for(c.tensor)->vars;
            return std::find(vars.begin(), vars.end(), loop.axis) != vars.end();
        });
        if (every) {
            place = {false, Halide::LoopLevel(g.op.output, loop.var), out + ", " + loop.var.name()};
        } else if (loop.trips > 1) {
            break;
        }
    }
    return place;
}

// Every other statement, placed as the point says (docs/design.md §2.4): at root, in the output's
// cache tile or per register tile of its rows, reductions in partial-result lanes. UserError for a
// placement that cannot be realised.
void place_stages(Recorder &rec, const TiledGroup &g, const SchedulePoint &p, const Target &target,
                  const OutputTiles &t) {
    if (p.stages.empty()) return;
    std::string error = stage_placement_error(*g.op.def, p.stages);
    user_check(error.empty()) << "schedule: " << error;
    StagePlace tile = tile_level(g, p, target, t);
    StagePlace row = row_level(g, p, target, t);
    for (const StageChoice &c : p.stages) {
        if (c.at == "inline") continue;
        LoweredStage &st = g.op.stage(c.tensor);
        int vw = target.vector_lanes(dtype_bytes(g.op.def->find_tensor(c.tensor)->dtype));
        const StagePlace &place = c.at == "tile" ? tile : c.at == "row" ? row : StagePlace{};
        if (st.is_reduction()) {
            place_reduction(rec, st, c, place, g.op.shape, target, vw);
        } else {
            place_pointwise(rec, st, place, g.op.shape, target, vw);
        }
    }
}

}  // namespace

// The method, per stage group: tile the output; then, for a fused reduction, place its
// accumulator, block its reduction, pack its inputs, and vectorize, unroll and prefetch its loops.
AppliedSchedule apply_schedule(LoweredOp &op, const SchedulePoint &p, const Target &target) {
    Recorder rec;
    const ComputeDef &def = *op.def;
    const Statement &ms = main_statement(def);
    LoweredStage &main = op.stage(ms.tensor);
    const TiledGroup g{op, ms, main, main.is_reduction() && main_is_fusable(def)};

    schedule_root_reductions(rec, g, p, target);
    OutputTiles tiles = tile_output(rec, op.output, op.stage(def.output().name), p, op.shape, target);
    place_stages(rec, g, p, target, tiles);
    user_check(g.fused || !p.amx_tile) << "schedule: amx_tile needs a reduction computed in the output's tiles";
    if (!g.fused) return rec.finish();
    if (p.amx_tile) {
        Accumulator acc = accumulate_in_amx_tile(rec, g, p, target, tiles);
        pack_panels(rec, g, p, target, acc, cache_panel_level(g, tiles));
        return rec.finish();
    }

    // The accumulator: per register tile (registers hold it) or per cache tile with the
    // reduction blocked.
    bool blocked = reduction_is_blocked(g, p);
    Accumulator acc = blocked ? accumulate_per_cache_tile(g, p, target, tiles)
                              : accumulate_per_register_tile(g, p, target, tiles);
    place_accumulator(rec, g, p, acc, target);
    vectorize_accumulator_init(rec, g, p, acc);
    UpdateLoops update = blocked ? block_update(rec, g, p, acc) : order_update(rec, g, p, acc);
    vectorize_update(rec, g, p, update);
    prefetch_inputs(rec, g, p, update);
    pack_panels(rec, g, p, target, acc, panel_level(g, tiles, acc, update));
    return rec.finish();
}

AppliedSchedule apply_default_schedule(LoweredOp &, const Target &) {
    return {{"// Halide's default schedule: every Func inlined or, a reduction, computed where it is used; serial, scalar"}};
}

namespace {

// Row operations (softmax, layernorm: statements other than the output and a fused reduction):
// every other statement placed per heuristic_placement, fast math (exp vectorized, one division
// per row), and the output tiled by whole rows, as few as keep a row tile in 16 KiB of L1, so the
// statements computed in its tile read the rows from cache, inside the output's parallel loop
// over row tiles. On more than one core, one row tile per core: Halide's thread pool pays for
// every task it hands out, and measured 2026-11-25 (128 rows, 2 threads) 32-128 small tiles ran
// no faster than one thread (layernorm 128x3072: 96 GFLOP/s at 1 row per tile, 171 at 32 rows,
// 1 thread 101; rmsnorm 128x768: 53 at 4 rows, 146 at 64). Such a tile holds more rows than L1,
// so its statements are computed per row ("row", the register tile of rows being 1): softmax's
// exponentials of a 64-row tile at N=3072 would fill 768 KiB, beyond L2. Measured 2026-11-25, 2
// threads, 64-row tiles, GFLOP/s, stages at tile / per 4 rows / per row: softmax 128x768
// 45.7 / 47.9 / 51.8, rmsnorm 128x768 134 / 105 / 141; softmax 128x3072 36.8 / - / 48.8.
void place_rows(const ComputeDef &def, const BoundShape &shape, const Target &target, SchedulePoint &p) {
    p.stages = heuristic_placement(def, shape, target);
    if (p.stages.empty()) return;
    p.fast_math = fast_math_applies(def);
    AxisTiling &row = p.axes[0];
    row.tile = shape.var_extent(*def.statement_for(def.output().name), row.var);
    if (p.axes.size() < 2) return;
    int64_t row_bytes = row.tile * dtype_bytes(def.output().dtype);
    AxisTiling &rows = p.axes[1];
    int64_t extent = shape.var_extent(*def.statement_for(def.output().name), rows.var);
    int64_t in_l1 = 1;
    while (in_l1 * 2 * row_bytes <= 16384 && in_l1 * 2 <= extent) in_l1 *= 2;
    rows.reg = 1;
    rows.tile = in_l1;
    if (target.cores <= 1) return;
    int64_t per_core = (extent + target.cores - 1) / target.cores;
    if (per_core <= in_l1) return;
    int64_t tile = in_l1;  // a power of two (or the extent), as the tiling space offers
    while (tile < per_core) tile *= 2;
    rows.tile = std::min(extent, tile);
    p.stages = heuristic_placement(def, shape, target, "row");
}

// Operands read across their rows (B of A B^T, whose rows run along the reduction): packed into
// panels re-laid out with the vectorized axis contiguous (vectorize_panel), so the update loads
// whole vectors instead of gathering one lane per row. Measured 2026-11-25, attention scores
// 12x128x128x64, 1 thread: 226 GFLOP/s packed against 103 read in place.
std::vector<std::string> operands_read_across_rows(const ComputeDef &def, const SchedulePoint &p) {
    std::vector<std::string> out;
    if (!main_is_fusable(def) || p.axes.empty() || p.vector_width <= 1) return out;
    const Statement &ms = main_statement(def);
    if (ms.reduce == ReduceKind::None) return out;
    const std::string &v = p.axes[size_t(p.vector_axis)].var;
    for (const TensorDecl *t : def.inputs()) {
        if (reads_tensor(ms.body, t->name) && dimension_indexed_by(ms, t->name, v) > 0) out.push_back(t->name);
    }
    return out;
}

void pack_operands_read_across_rows(const ComputeDef &def, SchedulePoint &p) {
    for (const auto &name : operands_read_across_rows(def, p)) p.packed.push_back(name);
}

// The tiles around such a panel: it is packed once per cache tile of the loops outside it, so the
// rows axis's cache tile is whole (one packing per batch instead of one per row tile), and the
// packed panel's contiguous vectors feed a register tile 4 vectors wide where half the vector
// registers hold it. Measured 2026-11-25, attention scores 12x128x128x64, 1 thread: 242 GFLOP/s
// (64x4, rows whole) against 203 for the default 32x4 with row tiles of 64.
void tile_for_panels_read_across_rows(const ComputeDef &def, const BoundShape &shape, const Target &target,
                                      SchedulePoint &p) {
    if (p.axes.size() < 2 || p.vector_axis != 0 || operands_read_across_rows(def, p).empty()) return;
    const Statement &out = *def.statement_for(def.output().name);
    AxisTiling &vec = p.axes[0], &rows = p.axes[1];
    int64_t wide = 4 * int64_t(p.vector_width);
    if (shape.var_extent(out, vec.var) >= wide && 4 * rows.reg <= target.vector_registers / 2) {
        vec.reg = wide;
        vec.tile = std::max(vec.tile, wide) / wide * wide;
    }
    rows.tile = shape.var_extent(out, rows.var);
}

}  // namespace

SchedulePoint heuristic_point(const ComputeDef &def, const BoundShape &shape, const Target &target) {
    const Statement &out = *def.statement_for(def.output().name);
    const Statement &ms = main_statement(def);
    SchedulePoint p;
    int lanes = op_vector_lanes(def, target);
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
    // exp, erf and tanh vectorize only as fast math (core/FastMath.h), and an epilogue computed
    // per output element (a fused GELU) should cost little next to the reduction.
    p.fast_math = fast_math_applies(def);
    place_rows(def, shape, target, p);
    // A dot-product GEMM (int8, bf16) reads its grouped operand as laid out, and a convolution has
    // its own starting points: neither takes the packed-panel GEMM's.
    const bool dot = dot_product_point(def, shape, target, p);
    if (dot) amx_tile_point(def, shape, target, p);
    bool own_point = dot || pixel_gemm_point(def, shape, target, p) || strided_row_gemm_point(def, shape, target, p) ||
                short_row_conv_point(def, shape, target, p) || blocked_conv_point(def, shape, target, p);
    if (!own_point) panel_gemm_point(def, shape, target, p);
    if (!dot) tile_for_panels_read_across_rows(def, shape, target, p);
    // The fewest outermost tile loops that give every core a tile (the image loop of a batch-1
    // convolution alone has one).
    std::vector<int64_t> extents;
    for (const AxisTiling &a : p.axes) extents.push_back(shape.var_extent(out, a.var));
    p.parallel_loops = parallel_loop_choices(cache_loop_trips(p, extents), target.cores).front();
    place_streaming(def, shape, target, p);
    if (!own_point) pack_operands_read_across_rows(def, p);
    return p;
}

}  // namespace opgen
