#include "opgen/Lower.h"

#include "opgen/FastMath.h"

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
            return Halide::cast(type_, Halide::Expr(int(op_.shape.values.at(e->name))));
        case ExprKind::IndexVar:
            return Halide::cast(type_, vars_.at(e->name));
        case ExprKind::Access: {
            std::vector<Halide::Expr> args;
            for (auto it = e->args.rbegin(); it != e->args.rend(); ++it)
                args.push_back(index(*it));
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
        Halide::Expr a = value(e->args[0]), b = value(e->args[1]);
        if (o == "+")
            return a + b;
        if (o == "-")
            return a - b;
        if (o == "*")
            return a * b;
        if (o == "/" && fast_math_ && type_.is_float() && !is_constant(e->args[1]))
            return a * (Halide::cast(type_, 1) / b);
        if (o == "/")
            return a / b;
        return Halide::cast(type_, compare(o, a, b));
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
        if (y.defined())
            return Halide::cast(type_, y);
        if (f == "f32")
            return Halide::cast(type_, Halide::cast(Halide::Float(32), a));
        if (f == "f16")
            return Halide::cast(type_, Halide::cast(Halide::Float(16), a));
        if (f == "i32")
            return Halide::cast(type_, Halide::cast(Halide::Int(32), a));
        if (f == "i8")
            return Halide::cast(type_, Halide::saturating_cast(Halide::Int(8), a));
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

    // A condition: comparisons stay boolean; any other value is true when non-zero.
    Halide::Expr truth(const Expr &e) {
        if (e->kind == ExprKind::Binary) {
            const std::string &o = e->name;
            if (o == "&&")
                return truth(e->args[0]) && truth(e->args[1]);
            if (o == "||")
                return truth(e->args[0]) || truth(e->args[1]);
            if (o == "<" || o == "<=" || o == ">" || o == ">=" || o == "==" || o == "!=") {
                return compare(o, value(e->args[0]), value(e->args[1]));
            }
        }
        if (e->kind == ExprKind::Unary && e->name == "!")
            return !truth(e->args[0]);
        return value(e) != Halide::cast(type_, 0);
    }

    // An index: integer arithmetic of variables and parameters (affine, checked by the parser).
    Halide::Expr index(const Expr &e) {
        switch (e->kind) {
        case ExprKind::IntConst:
            return Halide::Expr(int(e->int_value));
        case ExprKind::Param:
            return Halide::Expr(int(op_.shape.values.at(e->name)));
        case ExprKind::IndexVar:
            return vars_.at(e->name);
        case ExprKind::Unary:
            return -index(e->args[0]);
        case ExprKind::Binary: {
            Halide::Expr a = index(e->args[0]), b = index(e->args[1]);
            if (e->name == "+")
                return a + b;
            if (e->name == "-")
                return a - b;
            if (e->name == "*")
                return a * b;
            if (e->name == "/")
                return a / b;
            break;
        }
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

} // namespace

LoweredOp lower_to_halide(const ComputeDef &def, const BoundShape &shape, bool fast_math) {
    LoweredOp op;
    op.def = &def;
    op.shape = shape;
    for (const TensorDecl *t : def.inputs()) {
        Halide::ImageParam p(halide_type(t->dtype), int(t->dims.size()), t->name);
        constrain(p, shape.dims.at(t->name));
        op.params.push_back(p);
        op.param_names.push_back(t->name);
        op.input_funcs[t->name] =
            t->zero_pad
                ? Halide::BoundaryConditions::constant_exterior(p, Halide::cast(p.type(), 0))
                : Halide::Func(p);
    }
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
        } else {
            std::vector<Halide::Range> ranges;
            for (auto it = s.reduce_vars.rbegin(); it != s.reduce_vars.rend(); ++it) {
                ranges.emplace_back(0, int(shape.eval(it->extent)));
                st.rvar_names.push_back(it->name);
            }
            st.rdom = Halide::RDom(ranges, s.tensor + "_r");
            for (size_t i = 0; i < st.rvar_names.size(); i++)
                env[st.rvar_names[i]] = st.rdom[int(i)];
            st.acc = Halide::Func(s.tensor + "_acc");
            Halide::Expr body = ExprLowering(op, env, type, fast_math).value(s.body);
            switch (s.reduce) {
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
        op.stages.push_back(st);
    }
    op.output = op.stage(def.output().name).func;
    constrain(op.output.output_buffer(), shape.dims.at(def.output().name));
    return op;
}

} // namespace opgen
