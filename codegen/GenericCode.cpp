#include "codegen/GenericCode.h"

#include "codegen/CompiledCode.h"
#include "codegen/GenericBorder.h"
#include "codegen/GenericWeights.h"
#include "base/Error.h"
#include "core/Kernel.h"
#include "core/Reference.h"

#include <algorithm>
#include <optional>
#include <set>

namespace opgen {

namespace {

bool is_symbol(const std::vector<std::string> &symbols, const std::string &name) {
    return std::find(symbols.begin(), symbols.end(), name) != symbols.end();
}

// Halide's division of two constants: rounds down.
int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// A size expression as text: a constant, or text over the symbols.
struct SizeText {
    std::string text;
    std::optional<int64_t> constant;
};

// How size_text prints: for db's evaluator (GenericSignature.h), or as C over int64_t variables
// `prefix` + name with the library's opgen_floordiv, opgen_max and opgen_min (KernelLibrary.cpp).
struct SizeStyle {
    bool c = false;
    std::string prefix;
};

SizeText size_text(const ComputeDef &def, const BoundShape &shape,
                   const std::vector<std::string> &symbols, const Expr &e, const SizeStyle &style);

SizeText fold_binary(const std::string &o, const SizeText &a, const SizeText &b, const SizeStyle &style) {
    if (a.constant && b.constant && !(o == "/" && *b.constant == 0)) {
        int64_t x = *a.constant, y = *b.constant;
        int64_t r = o == "+" ? x + y : o == "-" ? x - y : o == "*" ? x * y : floor_div(x, y);
        return {std::to_string(r), r};
    }
    if (o == "/" && style.c) return {"opgen_floordiv(" + a.text + ", " + b.text + ")", std::nullopt};
    return {"(" + a.text + o + b.text + ")", std::nullopt};
}

SizeText size_text(const ComputeDef &def, const BoundShape &shape,
                   const std::vector<std::string> &symbols, const Expr &e, const SizeStyle &style) {
    switch (e->kind) {
    case ExprKind::IntConst:
        return {std::to_string(e->int_value), e->int_value};
    case ExprKind::Param: {
        if (is_symbol(symbols, e->name)) return {style.prefix + e->name, std::nullopt};
        for (const LetDecl &l : def.lets) {
            if (l.name == e->name) return size_text(def, shape, symbols, l.value, style);
        }
        int64_t v = shape.values.at(e->name);
        return {std::to_string(v), v};
    }
    case ExprKind::Unary:
        return fold_binary("-", {"0", 0}, size_text(def, shape, symbols, e->args[0], style), style);
    case ExprKind::Binary:
        return fold_binary(e->name, size_text(def, shape, symbols, e->args[0], style),
                           size_text(def, shape, symbols, e->args[1], style), style);
    case ExprKind::Call: {
        SizeText a = size_text(def, shape, symbols, e->args[0], style);
        SizeText b = size_text(def, shape, symbols, e->args[1], style);
        if (a.constant && b.constant) {
            int64_t r = e->name == "max" ? std::max(*a.constant, *b.constant) : std::min(*a.constant, *b.constant);
            return {std::to_string(r), r};
        }
        return {(style.c ? "opgen_" : "") + e->name + "(" + a.text + "," + b.text + ")", std::nullopt};
    }
    default:
        break;
    }
    throw InternalError("cannot print size " + to_string(e));
}

// "KH=3,KW=3,pad=1": every parameter and attribute not in `symbols`, with `values`' or default.
std::string value_list(const ComputeDef &def, const std::vector<std::string> &symbols,
                       const std::map<std::string, int64_t> *values) {
    std::map<std::string, int64_t> sorted;
    for (const ParamDecl &p : def.params) {
        if (is_symbol(symbols, p.name)) continue;
        if (values) sorted[p.name] = values->at(p.name);
        else if (p.default_value) sorted[p.name] = *p.default_value;
    }
    std::string text;
    for (const auto &[name, value] : sorted) text += (text.empty() ? "" : ",") + name + "=" + std::to_string(value);
    return text;
}

void guard_definition(Halide::Internal::Definition &d) {
    if (!d.defined()) return;
    for (Halide::Internal::Split &s : d.schedule().splits()) {
        if (s.is_split()) s.tail = Halide::TailStrategy::GuardWithIf;
    }
}

void guard_function(Halide::Internal::Function f) {
    guard_definition(f.definition());
    for (size_t i = 0; i < f.updates().size(); i++) guard_definition(f.update(int(i)));
}

// The loops strictly inside loop `level` of `d`, per original variable: how many points they
// cover, from the splits' constant factors; a variable with a loop of unknown extent there is in
// `unknown` instead.
struct LoopsInside {
    std::map<std::string, int64_t> covered;
    std::set<std::string> unknown;
};

LoopsInside loops_inside(const Halide::Internal::Definition &d, const std::string &level) {
    std::map<std::string, int64_t> ext;
    std::map<std::string, std::string> root;
    auto root_of = [&](const std::string &v) { return root.count(v) ? root[v] : v; };
    for (const Halide::Internal::Split &s : d.schedule().splits()) {
        const int64_t *factor = Halide::Internal::as_const_int(s.factor);
        if (s.is_split()) {
            root[s.inner] = root[s.outer] = root_of(s.old_var);
            if (!factor) continue;
            ext[s.inner] = *factor;
            if (ext.count(s.old_var)) ext[s.outer] = (ext[s.old_var] + *factor - 1) / *factor;
        } else if (s.is_rename()) {
            root[s.outer] = root_of(s.old_var);
            if (ext.count(s.old_var)) ext[s.outer] = ext[s.old_var];
        }
    }
    LoopsInside inside;
    for (const Halide::Internal::Dim &dim : d.schedule().dims()) {
        if (names_loop(dim.var, level)) break;
        const std::string &var = dim.var;
        std::string r = root_of(var);
        if (!ext.count(var)) {
            inside.unknown.insert(r);
            continue;
        }
        inside.covered[r] = (inside.covered.count(r) ? inside.covered[r] : 1) * ext[var];
    }
    for (const std::string &u : inside.unknown) inside.covered.erase(u);
    return inside;
}

// The reductions whose accumulators are computed at one of the output's loops: each stage's index
// in op.stages with the name of that loop.
std::vector<std::pair<size_t, std::string>> accumulators_in_output(const LoweredOp &op) {
    std::vector<std::pair<size_t, std::string>> found;
    for (size_t i = 0; i < op.stages.size(); i++) {
        const LoweredStage &st = op.stages[i];
        if (!st.is_reduction()) continue;
        Halide::LoopLevel at = st.acc.function().schedule().compute_level();
        at.lock();
        if (at.is_root() || at.is_inlined() || at.func() != op.output.name()) continue;
        found.emplace_back(i, at.var().name());
    }
    return found;
}

// The output loop each reduction's accumulator is computed at, where it is one of the output's.
std::vector<std::string> accumulator_levels(const LoweredOp &op) {
    std::vector<std::string> levels;
    for (const auto &[stage, level] : accumulators_in_output(op)) levels.push_back(level);
    return levels;
}

// A reduction's accumulator computed inside the output's tiles covers a whole register or cache
// tile even where the guarded tile is ragged: its loops keep constant extents, so the schedule's
// unrolled and vectorized loops stay legal. The points past the edge read clamped inputs and are
// never copied out.
void bound_accumulators(LoweredOp &op) {
    Halide::Internal::Function out = op.output.function();
    for (const auto &[stage, level] : accumulators_in_output(op)) {
        LoweredStage &st = op.stages[stage];
        std::map<std::string, int64_t> covered = loops_inside(out.definition(), level).covered;
        for (size_t i = 0; i < st.vars.size(); i++) {
            auto it = covered.find(st.var_names[i]);
            if (it != covered.end()) st.acc.bound_extent(st.vars[i], int(it->second));
        }
    }
}

// Guards the splits of `d` whose loops derive from an output variable not in `keep` (ShiftInwards
// stays legal where the extent covers the tile).
void guard_splits_except(Halide::Internal::Definition &d, const std::set<std::string> &keep) {
    std::map<std::string, std::string> root;
    for (Halide::Internal::Split &s : d.schedule().splits()) {
        std::string r = root.count(s.old_var) ? root[s.old_var] : s.old_var;
        root[s.outer] = root[s.inner] = r;
        if (s.is_split() && !keep.count(r)) s.tail = Halide::TailStrategy::GuardWithIf;
    }
}

// The tile of each output variable the output's schedule splits (the largest constant factor of a
// split of the variable itself), above 1. A tile that follows the extent (follow_whole_extent_tiles)
// counts as its register tile: the one constant a ragged extent can fail to cover.
std::map<std::string, int64_t> output_tiles(const LoweredOp &op) {
    std::map<std::string, int64_t> factor;
    const std::vector<Halide::Internal::Split> &splits = op.output.function().definition().schedule().splits();
    for (const Halide::Internal::Split &s : splits) {
        if (!s.is_split() || s.old_var.find('.') != std::string::npos) continue;
        const int64_t *f = Halide::Internal::as_const_int(s.factor);
        if (!f) {
            for (const Halide::Internal::Split &inner : splits) {
                if (inner.is_split() && inner.old_var == s.inner) f = Halide::Internal::as_const_int(inner.factor);
            }
        }
        if (f) factor[s.old_var] = std::max(factor[s.old_var], *f);
    }
    std::map<std::string, int64_t> tiles;
    for (const Halide::Var &v : op.output.args()) {
        auto it = factor.find(v.name());
        if (it != factor.end() && it->second > 1) tiles.insert(*it);
    }
    return tiles;
}

// Where the source's cache tile of an output axis is its whole extent there (the tuned winners of
// small planes tile x:28/16 at W=28), the schedule means "the whole row", not "28 points": the
// generic tile is the output's extent on that axis, so a narrower row is not computed in a wider
// ragged tile, and a wider one not cut into pieces of the source's width with a ragged last one.
// The register tile inside stays a constant (vectorized, unrolled); output_tiles then counts it as
// the axis's tile. Axes of extent 1 at the source keep their tile. Returns the axes whose tile
// now follows the extent.
std::set<std::string> follow_whole_extent_tiles(LoweredOp &op, const SchedulePoint &point, bool spanned) {
    const ComputeDef &def = *op.def;
    const Statement &out = *def.statement_for(def.output().name);
    // Only where the output is a reduction computed in its tiles (matmul, conv): there the tile
    // bounds the accumulators and panels. For softmax (row stages placed at the output's tile)
    // it made no measurable difference (own-shape median 1.35x with, 1.30x without; best other
    // generic kernel 1.36x, 1.39x; on an AMD EPYC host), so its code stays as it was.
    const std::vector<std::string> levels = accumulator_levels(op);
    if (levels.empty()) return {};
    Halide::Internal::Definition &d = op.output.function().definition();
    std::vector<Halide::Var> args = op.output.args();
    std::map<std::string, Halide::Expr> constant;  // the factors replaced, by variable
    for (const AxisTiling &a : point.axes) {
        if (a.tile <= 1 || a.tile != op.shape.var_extent(out, a.var)) continue;
        for (size_t i = 0; i < args.size(); i++) {
            if (args[i].name() != a.var) continue;
            for (Halide::Internal::Split &s : d.schedule().splits()) {
                if (!s.is_split() || s.old_var != a.var) continue;
                constant[a.var] = s.factor;
                s.factor = op.output.output_buffer().dim(int(i)).extent();
                break;
            }
        }
    }
    // An accumulator whose compute level has a register loop of the axis inside it then spans a
    // symbolic stretch of it. Where `spanned`, it does: the accumulator covers the rows there are
    // (a dense layer's M at run time) rather than the source's whole extent at every call, which
    // its loops allow where none that the stretch makes symbolic is unrolled whole (checked_generic
    // tries it first). Otherwise that axis keeps its constant tile.
    std::set<std::string> keep;
    for (const std::string &level : levels) {
        if (spanned) break;
        for (const std::string &var : loops_inside(d, level).unknown) keep.insert(var);
    }
    std::set<std::string> followed;
    for (Halide::Internal::Split &s : d.schedule().splits()) {
        if (s.is_split() && keep.count(s.old_var) && constant.count(s.old_var)) s.factor = constant[s.old_var];
    }
    for (const auto &[var, factor] : constant) {
        if (!keep.count(var)) followed.insert(var);
    }
    return followed;
}

// A pointwise statement placed in the output's tiles or rows (softmax's exponentials) is computed
// there into a buffer of its tile's rows, which the symbolic row length makes an allocation of
// dynamic size: Halide calls halide_malloc and halide_free for it at every tile, about the cost of
// the tile's own work at softmax's 2 x 256 (the exact kernel's buffer is a constant-size stack
// one). Stack memory of a dynamic size is Halide's pseudostack: allocated at the first tile and
// reused by the others.
void reuse_stage_buffers(LoweredOp &op, const SchedulePoint &point) {
    for (const StageChoice &c : point.stages) {
        if (c.at != "tile" && c.at != "row") continue;
        LoweredStage &st = op.stage(c.tensor);
        if (!st.is_reduction()) st.func.store_in(Halide::MemoryType::Stack);
    }
}

// The tile that cuts `extent` into as many tiles as `tile` would, of equal size rounded up to the
// register tile `reg`: 384 rows at tile 256 are two tiles of 192, not 256 and a shifted or guarded
// 256 that recomputes or skips 128 (about a third of the work at M=384, measured on BERT's dense
// layers); 16 rows are one tile of 16.
Halide::Expr balanced_tile(const Halide::Expr &extent, int64_t tile, int64_t reg) {
    Halide::Expr tiles = (extent + int(tile) - 1) / int(tile);
    Halide::Expr per = (extent + tiles - 1) / tiles;
    return (per + int(reg) - 1) / int(reg) * int(reg);
}

// In a case where an output axis's extent may be below its cache tile (its split guarded), the
// tile becomes min(tile, extent): with the constant tile, the guarded register loop inside runs to
// the tile's end with every lane masked off past the extent (softmax's n:4096 tile at N=1000: 97 of
// 128 register tiles per row). Those masked loads and stores reach up to a tile past the rows'
// ends, and where that lands on unmapped memory (the end of a small heap, in a process other than
// the tuner's) each takes a fault-suppression assist: the cached code ran 5x slower than its JIT
// timing (on an Intel Xeon host). Register loops inside stay constant. An axis that an
// accumulator computed in the output's tiles spans (matmul's and conv's) keeps its constant tile
// where not `spanned` (lower_generic): the accumulator's unrolled loops need it
// (bound_accumulators). Where `spanned`, its tile is balanced instead (balanced_tile), in every
// case: the accumulator then computes the rows there are, not whole tiles of the source's size.
// Softmax's row reductions span only the rows, so its whole-row tile (n) is clamped either way.
void clamp_tiles_except(const LoweredOp &op, Halide::Internal::Definition &d, std::set<std::string> keep,
                        bool spanned) {
    std::set<std::string> accumulated;
    for (const auto &[stage, level] : accumulators_in_output(op))
        accumulated.insert(op.stages[stage].var_names.begin(), op.stages[stage].var_names.end());
    keep.insert(accumulated.begin(), accumulated.end());
    // Balanced only where the output is itself the reduction computed in its tiles (matmul, conv;
    // as follow_whole_extent_tiles).
    spanned = spanned && !accumulator_levels(op).empty();
    std::vector<Halide::Var> args = op.output.args();
    for (size_t i = 0; i < args.size(); i++) {
        bool balance = spanned && accumulated.count(args[i].name());
        if (keep.count(args[i].name()) && !balance) continue;
        std::vector<Halide::Internal::Split> &splits = d.schedule().splits();
        for (Halide::Internal::Split &s : splits) {
            if (!s.is_split() || s.old_var != args[i].name()) continue;
            // The axis's first split is its cache tile where its inner loop is split again (the
            // register tile); a lone split is the register tile itself and stays constant.
            const int64_t *reg = nullptr;
            for (const Halide::Internal::Split &inner : splits)
                if (inner.is_split() && inner.old_var == s.inner) reg = Halide::Internal::as_const_int(inner.factor);
            const int64_t *f = Halide::Internal::as_const_int(s.factor);
            Halide::Expr extent = op.output.output_buffer().dim(int(i)).extent();
            if (reg && f && *f > 1 && balance) s.factor = Halide::min(balanced_tile(extent, *f, *reg), extent);
            else if (reg && f && *f > 1) s.factor = Halide::min(s.factor, extent);
            break;
        }
    }
}

// A guarded tail is computed scalar where its loop is vectorized, which at a ragged edge of a
// large tile costs more than recomputing a shifted one (the schedule's own ShiftInwards). So the
// output gets one specialization per set of dimensions whose extents cover their cache tile (the
// largest sets first, since the first true condition wins), each keeping the schedule's tails on
// those dimensions and guarding the others; guard_tails then guards every dimension of the
// remaining case. At most 2^3 - 1 specializations: beyond three tiled dimensions only all of them.
void specialize_full_tiles(LoweredOp &op, bool spanned) {
    std::map<std::string, int64_t> factor = output_tiles(op);
    std::vector<Halide::Var> args = op.output.args();
    std::vector<std::pair<std::string, Halide::Expr>> tiled;  // variable, "its extent covers the tile"
    for (size_t d = 0; d < args.size(); d++) {
        auto it = factor.find(args[d].name());
        if (it == factor.end()) continue;
        // The lowering's own condition when it has one: the same expression, so that within the
        // all-covered specialization the simplifier knows the unclamped reads are the ones taken.
        auto lowered = op.full_tile.find(it->first);
        tiled.emplace_back(args[d].name(), lowered != op.full_tile.end()
                                               ? lowered->second
                                               : op.output.output_buffer().dim(int(d)).extent() >= int(it->second));
    }
    std::vector<unsigned> masks;
    unsigned all = (1u << tiled.size()) - 1;
    for (unsigned m = all; m > 0; m--) {
        if (tiled.size() <= 3 || m == all) masks.push_back(m);
    }
    std::stable_sort(masks.begin(), masks.end(),
                     [](unsigned x, unsigned y) { return __builtin_popcount(x) > __builtin_popcount(y); });
    for (unsigned m : masks) {
        Halide::Expr full = Halide::Internal::const_true();
        std::set<std::string> keep;
        for (size_t i = 0; i < tiled.size(); i++) {
            if (!(m & (1u << i))) continue;
            full = full && tiled[i].second;
            keep.insert(tiled[i].first);
        }
        op.output.specialize(full);
        guard_splits_except(op.output.function().definition().specializations().back().definition, keep);
        clamp_tiles_except(op, op.output.function().definition().specializations().back().definition, keep, spanned);
    }
    clamp_tiles_except(op, op.output.function().definition(), {}, spanned);
}

// Whether the op reads `t` past its edges at `shape`: a zero-padded input, unless every attribute
// named pad... is 0 there (an op whose padding has another name is taken to pad).
bool pads(const ComputeDef &def, const BoundShape &shape, const TensorDecl &t) {
    if (!t.zero_pad) return false;
    bool named = false;
    for (const ParamDecl &p : def.params) {
        if (!p.is_attr || p.name.rfind("pad", 0) != 0) continue;
        named = true;
        if (shape.values.at(p.name) != 0) return true;
    }
    return !named;
}

}  // namespace

SchedulePoint generic_point(const ComputeDef &def, const BoundShape &shape, const SchedulePoint &point) {
    SchedulePoint generic = point;
    // An AMX tile needs whole 16 x 16 tiles, which a symbolic shape does not promise: the same
    // tiling on vpdpbusd instead.
    generic.amx_tile = false;
    for (const TensorDecl *t : def.inputs()) {
        if (!pads(def, shape, *t)) continue;
        if (std::find(generic.packed.begin(), generic.packed.end(), t->name) == generic.packed.end())
            generic.packed.push_back(t->name);
    }
    return generic;
}

bool names_loop(const std::string &dim, const std::string &loop) {
    return dim == loop || (dim.size() > loop.size() && dim.compare(dim.size() - loop.size(), loop.size(), loop) == 0 &&
                           dim[dim.size() - loop.size() - 1] == '.');
}

std::vector<std::string> generic_symbols(const ComputeDef &def) { return def.symbolic_params(); }

std::string generic_signature(const ComputeDef &def, const BoundShape &shape) {
    std::vector<std::string> symbols = generic_symbols(def);
    std::string text;
    auto add = [&](const TensorDecl &t, bool out) {
        text += (text.empty() ? "" : ";") + t.name + (out ? ":out:" : ":in:") + dtype_name(t.dtype) + ":";
        for (size_t i = 0; i < t.dims.size(); i++) {
            text += (i ? "," : "") + size_text(def, shape, symbols, t.dims[i], SizeStyle{}).text;
        }
    };
    for (const TensorDecl *t : def.inputs()) add(*t, false);
    add(def.output(), true);
    return text;
}

std::vector<std::vector<std::string>> generic_dims_c(const ComputeDef &def, const BoundShape &shape,
                                                    const std::string &prefix) {
    std::vector<std::string> symbols = generic_symbols(def);
    std::vector<std::vector<std::string>> dims;
    std::vector<const TensorDecl *> tensors = def.inputs();
    tensors.push_back(&def.output());
    for (const TensorDecl *t : tensors) {
        dims.emplace_back();
        for (const Expr &d : t->dims) dims.back().push_back(size_text(def, shape, symbols, d, {true, prefix}).text);
    }
    return dims;
}

void guard_tails(LoweredOp &op) {
    for (auto &[name, f] : Halide::Internal::find_transitive_calls(op.output.function())) {
        guard_function(f);
        for (auto &[wrapped, wrapper] : f.schedule().wrappers()) guard_function(Halide::Internal::Function(wrapper));
    }
}

LoweredOp lower_generic(const ComputeDef &def, const BoundShape &shape, const SchedulePoint &tuned,
                        const Target &target, bool spanned) {
    const SchedulePoint point = generic_point(def, shape, tuned);
    // Lowered twice: the schedule's output tiles, read off a first lowering, decide where the
    // second reads its inputs unclamped (where every tile is covered, ShiftInwards keeps each
    // read in bounds; clamped reads there would turn the shifted last tile's loads into gathers).
    std::map<std::string, int64_t> tiles;
    {
        LoweredOp probe = lower_to_halide_generic(def, shape, generic_symbols(def), point.fast_math);
        apply_schedule(probe, point, target);
        follow_whole_extent_tiles(probe, point, spanned);
        tiles = output_tiles(probe);
    }
    LoweredOp op = lower_to_halide_generic(def, shape, generic_symbols(def), point.fast_math, tiles);
    apply_schedule(op, point, target);
    const std::set<std::string> followed = follow_whole_extent_tiles(op, point, spanned);
    pack_generic_weights(op, point);
    bound_vector_panels(op, point, followed);
    fill_padded_panels(op, point, followed);
    reuse_stage_buffers(op, point);
    specialize_full_tiles(op, spanned);
    guard_tails(op);
    bound_accumulators(op);
    return op;
}

std::vector<BoundShape> generic_check_shapes(const ComputeDef &def, const BoundShape &shape) {
    std::vector<std::string> symbols = generic_symbols(def);
    // Per symbol, which size it takes: 0 one, 1 about half the tuned value (odd), 2 the tuned value
    // plus 3. All 0, all 1, all 2, then each symbol alone at 2 among 1s and alone at 1 among 2s,
    // so that every mix of covered and uncovered tiles (specialize_full_tiles) is run.
    std::vector<std::vector<int>> plans = {std::vector<int>(symbols.size(), 0), std::vector<int>(symbols.size(), 1),
                                           std::vector<int>(symbols.size(), 2)};
    for (size_t i = 0; i < symbols.size() && symbols.size() > 1; i++) {
        for (int base : {1, 2}) {
            plans.emplace_back(symbols.size(), base);
            plans.back()[i] = 3 - base;
        }
    }
    std::vector<BoundShape> shapes;
    std::set<std::string> seen;
    for (const std::vector<int> &plan : plans) {
        std::map<std::string, int64_t> given;
        for (const ParamDecl &p : def.params) given[p.name] = shape.values.at(p.name);
        for (size_t i = 0; i < symbols.size(); i++) {
            int64_t v = shape.values.at(symbols[i]);
            given[symbols[i]] = plan[i] == 0 ? 1 : plan[i] == 1 ? (v / 2) | 1 : v + 3;
        }
        try {
            BoundShape bound = bind_shape(def, given);
            if (seen.insert(bound.canonical).second) shapes.push_back(bound);
        } catch (const UserError &) {
            // a let below 1 at these sizes: not a shape of the op
        }
    }
    return shapes;
}

std::string verify_generic(LoweredOp &op, const Target &target, const std::vector<BoundShape> &shapes) {
    JitKernel kernel(op, target);
    const ComputeDef &def = *op.def;
    for (const BoundShape &shape : shapes) {
        std::map<std::string, HostTensor> inputs = random_inputs(def, shape, 11);
        HostTensor output = make_host_tensor(def.output().dtype, shape.dims.at(def.output().name));
        try {
            kernel.bind(inputs, output);
            kernel.run();
        } catch (const Halide::Error &e) {
            return "at " + shape.canonical + ": " + e.what();
        }
        Verification v = verify_output(def, shape, inputs, output);
        if (!v.ok) return "at " + shape.canonical + ": " + v.first_mismatch;
    }
    return "";
}

LoweredOp checked_generic(const ComputeDef &def, const BoundShape &shape, const SchedulePoint &point,
                          const Target &target, std::string &checked) {
    const std::string what = "op '" + def.name + "' generic from " + shape.canonical;
    user_check(!generic_symbols(def).empty()) << what << ": the op has no parameter without a default to leave symbolic";
    std::vector<BoundShape> shapes = generic_check_shapes(def, shape);
    user_check(shapes.size() >= 2) << what << ": fewer than two shapes to check it at";
    // Accumulators spanning the rows there are where Halide takes it (lower_generic's `spanned`),
    // else the constant tiles.
    bool spanned = true;
    try {
        LoweredOp op = lower_generic(def, shape, point, target, spanned);
        spanned = verify_generic(op, target, shapes).empty();
    } catch (const Halide::Error &) {
        spanned = false;
    }
    if (!spanned) {
        LoweredOp op = lower_generic(def, shape, point, target, spanned);
        std::string failure = verify_generic(op, target, shapes);
        user_check(failure.empty()) << what << ": wrong result " << failure;
    }
    checked.clear();
    for (const BoundShape &s : shapes) checked += (checked.empty() ? "" : ";") + s.canonical;
    // Lowered again: the checked pipeline holds the last check's buffers.
    return lower_generic(def, shape, point, target, spanned);
}

db::KernelCode generic_code_header(const ComputeDef &def, const BoundShape &shape, const std::string &schedule_json) {
    std::vector<std::string> symbols = generic_symbols(def);
    db::KernelCode code;
    code.halide_version = OPGEN_HALIDE_VERSION;
    code.function = code_function_name(def);
    code.signature = generic_signature(def, shape);
    code.schedule_json = schedule_json;
    code.generic = true;
    for (const std::string &s : symbols) code.symbols += (code.symbols.empty() ? "" : ",") + s;
    code.fixed = generic_fixed_values(def, shape);
    code.defaults = value_list(def, symbols, nullptr);
    return code;
}

std::string generic_fixed_values(const ComputeDef &def, const BoundShape &shape) {
    return value_list(def, generic_symbols(def), &shape.values);
}

}  // namespace opgen
