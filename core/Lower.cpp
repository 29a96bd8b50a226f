#include "core/Lower.h"

#include "core/FastMath.h"
#include "core/Gather.h"

#include <algorithm>

namespace opgen {

Halide::Type halide_type(DType t) {
    switch (t) {
    case DType::F32:
        return Halide::Float(32);
    case DType::F16:
        return Halide::Float(16);
    case DType::I8:
        return Halide::Int(8);
    case DType::I32:
        return Halide::Int(32);
    case DType::U8:
        return Halide::UInt(8);
    case DType::BF16:
        return Halide::BFloat(16);
    case DType::I64:
        return Halide::Int(64);
    }
    return Halide::Float(32);
}

LoweredStage &LoweredOp::stage(const std::string &tensor) {
    for (auto &s : stages) {
        if (s.statement->tensor == tensor)
            return s;
    }
    throw InternalError("no lowered stage for tensor " + tensor);
}

const LoweredOp::GatheredRead *LoweredOp::gathered_read(const std::string &tensor) const {
    for (const auto &[access, read] : gathered_reads) {
        if (access->name == tensor) return &read;
    }
    return nullptr;
}

Halide::Func LoweredOp::read_func(const std::string &tensor) const {
    const GatheredRead *g = gathered_read(tensor);
    return g ? g->func : input_funcs.at(tensor);
}

const LoweredStage *LoweredOp::find_stage(const std::string &tensor) const {
    for (const auto &s : stages) {
        if (s.statement->tensor == tensor)
            return &s;
    }
    return nullptr;
}

namespace {

// A constant of the op: a literal or a bound parameter (a division by it stays exact).
bool is_constant(const Expr &e) {
    return e->kind == ExprKind::FloatConst || e->kind == ExprKind::IntConst || e->kind == ExprKind::Param;
}

// + - * / of two expressions (Halide's integer division rounds down); undefined for another
// operator.
Halide::Expr arith(const std::string &o, const Halide::Expr &a, const Halide::Expr &b) {
    if (o == "+")
        return a + b;
    if (o == "-")
        return a - b;
    if (o == "*")
        return a * b;
    if (o == "/")
        return a / b;
    return Halide::Expr();
}

// A parameter or let: its symbol in a generic lowering, else the bound shape's constant.
Halide::Expr param_expr(const LoweredOp &op, const std::string &name) {
    if (auto it = op.symbols.find(name); it != op.symbols.end())
        return it->second;
    return Halide::Expr(int(op.shape.values.at(name)));
}

// An integer size expression of parameters and lets (an extent, a let's value): a constant when
// the lowering is not generic, else a Halide expression of the symbols.
Halide::Expr size_expr(const LoweredOp &op, const Expr &e) {
    if (op.symbols.empty())
        return Halide::Expr(int(op.shape.eval(e)));
    switch (e->kind) {
    case ExprKind::IntConst:
        return Halide::Expr(int(e->int_value));
    case ExprKind::Param:
        return param_expr(op, e->name);
    case ExprKind::Unary:
        return -size_expr(op, e->args[0]);
    case ExprKind::Binary:
        if (Halide::Expr r = arith(e->name, size_expr(op, e->args[0]), size_expr(op, e->args[1]));
            r.defined())
            return r;
        break;
    case ExprKind::Call:
        if (e->name == "max")
            return Halide::max(size_expr(op, e->args[0]), size_expr(op, e->args[1]));
        if (e->name == "min")
            return Halide::min(size_expr(op, e->args[0]), size_expr(op, e->args[1]));
        break;
    default:
        break;
    }
    throw InternalError("cannot lower size " + to_string(e));
}

class ExprLowering {
public:
    ExprLowering(const LoweredOp &op, const std::map<std::string, Halide::Expr> &vars,
                 Halide::Type type, bool fast_math)
        : op_(op), vars_(vars), type_(type), fast_math_(fast_math) {}

    Halide::Expr value(const Expr &e) {
        switch (e->kind) {
        case ExprKind::FloatConst:
            return Halide::cast(type_, Halide::Expr(e->float_value));
        case ExprKind::IntConst:
            return Halide::cast(type_, Halide::Expr(int(e->int_value)));
        case ExprKind::Param:
            return Halide::cast(type_, param_expr(op_, e->name));
        case ExprKind::IndexVar:
            return Halide::cast(type_, vars_.at(e->name));
        case ExprKind::Access: {
            std::vector<Halide::Expr> args;
            for (auto it = e->args.rbegin(); it != e->args.rend(); ++it)
                args.push_back(index(*it));
            if (auto g = op_.gathered_reads.find(e.get()); g != op_.gathered_reads.end()) {
                return Halide::cast(type_, g->second.func(gathered_args(g->second.dims)));
            }
            if (auto in = op_.input_funcs.find(e->name); in != op_.input_funcs.end()) {
                return Halide::cast(type_, in->second(args));
            }
            const LoweredStage *s = op_.find_stage(e->name);
            internal_check(s) << "unlowered tensor " << e->name;
            return Halide::cast(type_, s->func(args));
        }
        case ExprKind::Unary:
            if (e->name == "-")
                return -value(e->args[0]);
            return Halide::select(value(e->args[0]) == Halide::cast(type_, 0),
                                  Halide::cast(type_, 1), Halide::cast(type_, 0));
        case ExprKind::Binary:
            return binary(e);
        case ExprKind::Call:
            return call(e);
        }
        throw InternalError("cannot lower " + to_string(e));
    }

    // An operator: logic on truth values; arithmetic and comparisons in the statement's type.
    Halide::Expr binary(const Expr &e) {
        const std::string &o = e->name;
        if (o == "&&" || o == "||") {
            Halide::Expr a = truth(e->args[0]), b = truth(e->args[1]);
            return Halide::cast(type_, o == "&&" ? (a && b) : (a || b));
        }
        if (is_comparison(o))
            return Halide::cast(type_, compared(e));
        Halide::Expr a = value(e->args[0]), b = value(e->args[1]);
        if (o == "/" && fast_math_ && type_.is_float() && !is_constant(e->args[1]))
            return a * (Halide::cast(type_, 1) / b);
        Halide::Expr r = arith(o, a, b);
        internal_check(r.defined()) << "cannot lower operator " << o;
        return r;
    }

    // A built-in function, in the statement's type.
    Halide::Expr call(const Expr &e) {
        const std::string &f = e->name;
        if (f == "select")
            return Halide::select(truth(e->args[0]), value(e->args[1]), value(e->args[2]));
        if (f == "max")
            return Halide::max(value(e->args[0]), value(e->args[1]));
        if (f == "min")
            return Halide::min(value(e->args[0]), value(e->args[1]));
        Halide::Expr a = value(e->args[0]);
        if (f == "abs")
            return Halide::cast(type_, Halide::abs(a));
        if (f == "round")
            return type_.is_float() ? Halide::round(a) : a; // ties to even
        // Transcendental functions are float32 math (Halide's erf exists only for float32, and
        // the others would return float32 for an integer argument): a statement of another
        // type converts its argument to float32 and the result back.
        Halide::Expr x = type_ == Halide::Float(32) ? a : Halide::cast(Halide::Float(32), a);
        Halide::Expr y;
        if (f == "exp")
            y = fast_math_ ? Halide::fast_exp(x) : Halide::exp(x);
        if (f == "log")
            y = Halide::log(x);
        if (f == "tanh")
            y = fast_math_ ? fast_tanh(x) : Halide::tanh(x);
        if (f == "sqrt")
            y = Halide::sqrt(x);
        if (f == "erf")
            y = fast_math_ ? fast_erf(x) : Halide::erf(x);
        if (f == "sin")
            y = Halide::sin(x);
        if (f == "cos")
            y = Halide::cos(x);
        if (y.defined())
            return Halide::cast(type_, y);
        if (f == "f32")
            return Halide::cast(type_, Halide::cast(Halide::Float(32), a));
        if (f == "f16")
            return Halide::cast(type_, Halide::cast(Halide::Float(16), a));
        if (f == "i32")
            return Halide::cast(type_, Halide::cast(Halide::Int(32), a));
        if (f == "i64")
            return Halide::cast(type_, Halide::cast(Halide::Int(64), a));
        if (f == "i8")
            return Halide::cast(type_, Halide::saturating_cast(Halide::Int(8), a));
        if (f == "u8")
            return Halide::cast(type_, Halide::saturating_cast(Halide::UInt(8), a));
        if (f == "bf16")
            return Halide::cast(type_, Halide::cast(Halide::BFloat(16), a));
        throw InternalError("cannot lower " + to_string(e));
    }

private:
    const LoweredOp &op_;
    const std::map<std::string, Halide::Expr> &vars_;
    Halide::Type type_;
    bool fast_math_ = false;

    static Halide::Expr compare(const std::string &o, const Halide::Expr &a,
                                const Halide::Expr &b) {
        if (o == "<")
            return a < b;
        if (o == "<=")
            return a <= b;
        if (o == ">")
            return a > b;
        if (o == ">=")
            return a >= b;
        if (o == "==")
            return a == b;
        return a != b;
    }

    static bool is_comparison(const std::string &o) {
        return o == "<" || o == "<=" || o == ">" || o == ">=" || o == "==" || o == "!=";
    }

    // A comparison, its operands in the type comparison_type gives (the statement's when they
    // read no tensor).
    Halide::Expr compared(const Expr &e) {
        std::optional<DType> t = comparison_type(*op_.def, e->args[0], e->args[1]);
        if (!t || halide_type(*t) == type_) return compare(e->name, value(e->args[0]), value(e->args[1]));
        ExprLowering operands(op_, vars_, halide_type(*t), fast_math_);
        return compare(e->name, operands.value(e->args[0]), operands.value(e->args[1]));
    }

    // A condition: comparisons stay boolean; any other value is true when non-zero.
    Halide::Expr truth(const Expr &e) {
        if (e->kind == ExprKind::Binary) {
            const std::string &o = e->name;
            if (o == "&&")
                return truth(e->args[0]) && truth(e->args[1]);
            if (o == "||")
                return truth(e->args[0]) || truth(e->args[1]);
            if (is_comparison(o)) return compared(e);
        }
        if (e->kind == ExprKind::Unary && e->name == "!")
            return !truth(e->args[0]);
        return value(e) != Halide::cast(type_, 0);
    }

    // A gathered read's arguments: per dimension of the input (innermost first, as Halide names
    // them) the variable its index moves with, 0 where it is constant.
    std::vector<Halide::Expr> gathered_args(const std::vector<std::string> &dims) {
        std::vector<Halide::Expr> args;
        for (auto it = dims.rbegin(); it != dims.rend(); ++it) args.push_back(it->empty() ? Halide::Expr(0) : vars_.at(*it));
        return args;
    }

public:
    // An index: integer arithmetic of variables and parameters (affine, checked by the parser).
    Halide::Expr index(const Expr &e) {
        switch (e->kind) {
        case ExprKind::IntConst:
            return Halide::Expr(int(e->int_value));
        case ExprKind::Param:
            return param_expr(op_, e->name);
        case ExprKind::IndexVar:
            return vars_.at(e->name);
        case ExprKind::Unary:
            return -index(e->args[0]);
        case ExprKind::Binary:
            if (Halide::Expr r = arith(e->name, index(e->args[0]), index(e->args[1])); r.defined())
                return r;
            break;
        default:
            break;
        }
        throw InternalError("cannot lower index " + to_string(e));
    }
};

void constrain(Halide::OutputImageParam p, const std::vector<int64_t> &dims_outer_first) {
    // Halide dim 0 is the op's last (contiguous) dimension.
    int64_t stride = 1;
    int rank = int(dims_outer_first.size());
    for (int d = 0; d < rank; d++) {
        int64_t extent = dims_outer_first[size_t(rank - 1 - d)];
        p.dim(d).set_bounds(0, int(extent)).set_stride(int(stride));
        stride *= extent;
    }
}

// The accumulator of a reduction statement (init and update) and the tensor as its copy.
void define_reduction(LoweredStage &st, ReduceKind reduce, Halide::Type type,
                      const Halide::Expr &body) {
    std::vector<Halide::Expr> lhs(st.vars.begin(), st.vars.end());
    switch (reduce) {
    case ReduceKind::Sum:
        st.acc(lhs) = Halide::cast(type, 0);
        st.acc(lhs) += body;
        break;
    case ReduceKind::Max:
        st.acc(lhs) = type.min();
        st.acc(lhs) = Halide::max(st.acc(lhs), body);
        break;
    case ReduceKind::Min:
        st.acc(lhs) = type.max();
        st.acc(lhs) = Halide::min(st.acc(lhs), body);
        break;
    case ReduceKind::None:
        break;
    }
    st.func(lhs) = st.acc(lhs);
}

// Generic lowering: each symbolic parameter is the extent of the first input dimension declared
// with exactly it; every let follows, in declaration order, as an expression of them.
void bind_symbols(LoweredOp &op, const std::vector<std::string> &symbolic) {
    const ComputeDef &def = *op.def;
    for (const std::string &name : symbolic) {
        for (size_t i = 0; i < op.params.size() && !op.symbols.count(name); i++) {
            const TensorDecl *t = def.find_tensor(op.param_names[i]);
            int rank = int(t->dims.size());
            for (int d = 0; d < rank; d++) {
                const Expr &e = t->dims[size_t(d)];
                if (e->kind == ExprKind::Param && e->name == name) {
                    op.symbols[name] = op.params[i].dim(rank - 1 - d).extent();
                    break;
                }
            }
        }
        user_check(op.symbols.count(name))
            << "op '" << def.name << "': parameter '" << name
            << "' is no input's extent, so no generic kernel can take it from the buffers";
    }
    for (const LetDecl &l : def.lets)
        op.symbols[l.name] = size_expr(op, l.value);
}

// A dense row-major buffer of a generic lowering: stride 1 innermost, each stride the product of
// the extents inside it; every extent but a parameter's own (those read by bind_symbols) is its
// declaration's expression, which Halide checks at each call.
void constrain_generic(const LoweredOp &op, Halide::OutputImageParam p, const TensorDecl &t,
                       bool is_output) {
    int rank = int(t.dims.size());
    for (int d = 0; d < rank; d++) {
        const Expr &e = t.dims[size_t(rank - 1 - d)];
        bool reads_symbol = !is_output && e->kind == ExprKind::Param && op.symbols.count(e->name) &&
                            Halide::Internal::equal(op.symbols.at(e->name), p.dim(d).extent());
        if (reads_symbol)
            p.dim(d).set_min(0);
        else
            p.dim(d).set_bounds(0, size_expr(op, e));
        p.dim(d).set_stride(d == 0 ? Halide::Expr(1) : p.dim(d - 1).stride() * p.dim(d - 1).extent());
    }
}

// Each input as an ImageParam (wrapped in a zero exterior when the op pads it; with `clamp_edges`,
// any other in its repeated edge, so reads past its end are safe); not constrained.
void lower_inputs(LoweredOp &op, bool clamp_edges) {
    for (const TensorDecl *t : op.def->inputs()) {
        Halide::ImageParam p(halide_type(t->dtype), int(t->dims.size()), t->name);
        op.params.push_back(p);
        op.param_names.push_back(t->name);
        if (t->zero_pad)
            op.input_funcs[t->name] =
                Halide::BoundaryConditions::constant_exterior(p, Halide::cast(p.type(), 0));
        else
            op.input_funcs[t->name] =
                clamp_edges ? Halide::BoundaryConditions::repeat_edge(p) : Halide::Func(p);
    }
}

// Gives each strided read without a window of `s` its gathered Func (core/Gather.h): one
// variable per dimension of the input, reading it where `s` would, with `s`'s reduction variables
// of extent 1 at 0.
void gather_reads(LoweredOp &op, const Statement &s) {
    for (const ExprNode *a : accesses(s)) {
        std::optional<std::vector<std::string>> dims = gather_dims(*op.def, s, *a, op.shape);
        if (!dims) continue;
        std::map<std::string, Halide::Expr> env;
        for (const std::string &r : unit_reduction_vars(s, op.shape)) env[r] = Halide::Expr(0);
        std::vector<Halide::Var> vars;
        for (size_t d = dims->size(); d-- > 0;) {
            Halide::Var v(gathered_var_name(a->name, vars.size()));  // as codegen/Emit.cpp prints it
            if (!(*dims)[d].empty()) env[(*dims)[d]] = v;
            vars.push_back(v);
        }
        ExprLowering lowering(op, env, halide_type(op.def->find_tensor(a->name)->dtype), false);
        std::vector<Halide::Expr> at;
        for (auto it = a->args.rbegin(); it != a->args.rend(); ++it) at.push_back(lowering.index(*it));
        Halide::Func g(gathered_name(a->name));
        g(vars) = op.input_funcs.at(a->name)(at);
        op.gathered_reads[a] = {g, *dims};
    }
}

// One Func per statement (two for a reduction: the accumulator and its copy). `gather`: strided
// reads without a window go through gathered Funcs (gather_reads).
void lower_statements(LoweredOp &op, bool fast_math, bool gather) {
    const ComputeDef &def = *op.def;
    op.stages.reserve(def.statements.size());
    for (const Statement &s : def.statements) {
        const TensorDecl *t = def.find_tensor(s.tensor);
        Halide::Type type = halide_type(t->dtype);
        LoweredStage st;
        st.statement = &s;
        st.func = Halide::Func(s.tensor);
        std::map<std::string, Halide::Expr> env;
        for (auto it = s.vars.rbegin(); it != s.vars.rend(); ++it) {
            Halide::Var v(*it);
            st.vars.push_back(v);
            st.var_names.push_back(*it);
            env[*it] = v;
        }
        std::vector<Halide::Expr> lhs(st.vars.begin(), st.vars.end());
        if (s.reduce == ReduceKind::None) {
            st.func(lhs) = ExprLowering(op, env, type, fast_math).value(s.body);
            op.stages.push_back(st);
            continue;
        }
        if (gather) gather_reads(op, s);
        std::vector<Halide::Range> ranges;
        for (auto it = s.reduce_vars.rbegin(); it != s.reduce_vars.rend(); ++it) {
            ranges.emplace_back(0, size_expr(op, it->extent));
            st.rvar_names.push_back(it->name);
            st.rvar_idents.push_back(printed_rvar(def, s, it->name));
        }
        st.rdom = Halide::RDom(ranges, s.tensor + "_r");
        for (size_t i = 0; i < st.rvar_names.size(); i++)
            env[st.rvar_names[i]] = st.rdom[int(i)];
        st.acc = Halide::Func(s.tensor + "_acc");
        define_reduction(st, s.reduce, type, ExprLowering(op, env, type, fast_math).value(s.body));
        op.stages.push_back(st);
    }
    op.output = op.stage(def.output().name).func;
}

// Where every output extent of `full_tiles` covers its tile, each unpadded input reads its
// buffer directly (promised in bounds); elsewhere its repeated edge. Sets op.full_tile.
void promise_full_tile_reads(LoweredOp &op, const std::map<std::string, int64_t> &full_tiles) {
    const ComputeDef &def = *op.def;
    const Statement &out = *def.statement_for(def.output().name);
    Halide::Expr all = Halide::Internal::const_true();
    for (size_t i = 0; i < out.vars.size(); i++) {
        auto tile = full_tiles.find(out.vars[i]);
        if (tile == full_tiles.end()) continue;
        Halide::Expr covers = size_expr(op, def.output().dims[i]) >= int(tile->second);
        op.full_tile[out.vars[i]] = covers;
        all = all && covers;
    }
    for (size_t i = 0; i < op.params.size(); i++) {
        const TensorDecl *t = def.find_tensor(op.param_names[i]);
        if (t->zero_pad) continue;
        Halide::ImageParam p = op.params[i];
        std::vector<Halide::Var> vars;
        std::vector<Halide::Expr> at;
        for (int d = 0; d < p.dimensions(); d++) {
            vars.emplace_back();
            Halide::Expr lo = p.dim(d).min(), hi = p.dim(d).max();
            at.push_back(Halide::select(all, Halide::unsafe_promise_clamped(vars.back(), lo, hi),
                                        Halide::clamp(vars.back(), lo, hi)));
        }
        Halide::Func in(t->name + "_in");
        in(vars) = p(at);
        op.input_funcs[t->name] = in;
    }
}

} // namespace

std::string printed_rvar(const ComputeDef &def, const Statement &s, const std::string &var) {
    for (const Statement &other : def.statements) {
        bool index = std::find(other.vars.begin(), other.vars.end(), var) != other.vars.end();
        bool reduced = &other != &s && std::any_of(other.reduce_vars.begin(), other.reduce_vars.end(),
                                                   [&](const ReduceVar &r) { return r.name == var; });
        if (index || reduced) return s.tensor + "_" + var;
    }
    return var;
}

LoweredOp lower_to_halide(const ComputeDef &def, const BoundShape &shape, bool fast_math) {
    LoweredOp op;
    op.def = &def;
    op.shape = shape;
    lower_inputs(op, false);
    for (size_t i = 0; i < op.params.size(); i++)
        constrain(op.params[i], shape.dims.at(op.param_names[i]));
    lower_statements(op, fast_math, true);
    constrain(op.output.output_buffer(), shape.dims.at(def.output().name));
    return op;
}

LoweredOp lower_to_halide_generic(const ComputeDef &def, const BoundShape &shape,
                                  const std::vector<std::string> &symbolic, bool fast_math,
                                  const std::map<std::string, int64_t> &full_tiles) {
    LoweredOp op;
    op.def = &def;
    op.shape = shape;
    lower_inputs(op, true);
    bind_symbols(op, symbolic);
    if (!full_tiles.empty()) promise_full_tile_reads(op, full_tiles);
    for (size_t i = 0; i < op.params.size(); i++)
        constrain_generic(op, op.params[i], *def.find_tensor(op.param_names[i]), false);
    lower_statements(op, fast_math, false);
    constrain_generic(op, op.output.output_buffer(), def.output(), true);
    return op;
}

} // namespace opgen
