#include "core/Reference.h"

#include <cmath>
#include <limits>
#include <random>
#include <sstream>

namespace opgen {

namespace {

// Seeded values of `t`'s type (see random_inputs).
HostTensor random_tensor(DType t, std::vector<int64_t> dims, std::mt19937_64 &rng) {
    HostTensor h = make_host_tensor(t, std::move(dims));
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::uniform_int_distribution<int> small(-4, 4), u8(0, 255), i8(-128, 127);
    for (int64_t i = 0; i < h.elements(); i++) {
        switch (t) {
        case DType::U8: h.set(i, u8(rng)); break;
        case DType::I8: h.set(i, i8(rng)); break;
        case DType::I32:
        case DType::I64: h.set(i, small(rng)); break;
        default: h.set(i, u(rng)); break;
        }
    }
    return h;
}

} // namespace

std::map<std::string, HostTensor> random_inputs(const ComputeDef &def, const BoundShape &shape,
                                                uint64_t seed) {
    std::map<std::string, HostTensor> out;
    std::mt19937_64 rng(seed);
    for (const TensorDecl *t : def.inputs()) {
        out[t->name] = random_tensor(t->dtype, shape.dims.at(t->name), rng);
    }
    return out;
}

namespace {

// Halide's integer division: rounds down for a positive divisor (Euclidean for a negative one),
// and x / 0 is 0.
double int_div(double a, double b) {
    if (b == 0)
        return 0;
    double q = std::floor(a / std::fabs(b));
    return b < 0 ? -q : q;
}

// Two's-complement wrap-around into `bits` bits, as Halide's integer arithmetic does.
double wrap(double v, int bits) {
    if (!std::isfinite(v))
        return 0;
    double range = std::ldexp(1.0, bits);
    double half = range / 2;
    if (v >= -half && v < half)
        return v;  // in range (and for 64 bits, v + half would round small values away)
    double r = std::fmod(v + half, range);
    if (r < 0)
        r += range;
    return r - half;
}

// Round to the nearest float16 (ties to even), with overflow to infinity, as Halide's emulated
// float16 arithmetic does after every operation. (Halide may reassociate a float16 expression
// before rounding, so kernels agree with this to a few float16 ulps, not bit for bit.)
double round_half(double v) {
    if (!std::isfinite(v) || v == 0)
        return v;
    double a = std::fabs(v);
    if (a >= 65520.0)
        return std::copysign(std::numeric_limits<double>::infinity(), v);
    int e = 0;
    std::frexp(a, &e);                // a = m * 2^e with m in [0.5, 1)
    int unit = std::max(e - 11, -24); // 11 significant bits; subnormals step by 2^-24
    double q = std::ldexp(std::nearbyint(std::ldexp(a, -unit)), unit);
    return std::copysign(q, v);
}

// Round to the nearest bfloat16 (ties to even): float32's range, 8 significant bits.
double round_bfloat(double v) {
    return std::isfinite(v) ? double(bf16_value(bf16_bits(float(v)))) : v;
}

// Conversion of a value into a tensor's type, as Halide's cast<T>: floats round, integers
// truncate toward zero and wrap.
double convert(DType t, double v) {
    switch (t) {
    case DType::F32:
        return double(float(v));
    case DType::F16:
        return round_half(v);
    case DType::I32:
        return wrap(std::trunc(v), 32);
    case DType::I8:
        return wrap(std::trunc(v), 8);
    case DType::U8:
        return wrap(std::trunc(v), 8) + (wrap(std::trunc(v), 8) < 0 ? 256 : 0);
    case DType::BF16:
        return round_bfloat(v);
    case DType::I64:
        return wrap(std::trunc(v), 64);
    }
    return v;
}

// The result of an arithmetic operation in type `t`. float32 results are kept in double: the
// reference is meant to be more accurate than any kernel, and tolerances cover the difference.
double result(DType t, double v) {
    switch (t) {
    case DType::F32:
        return v;
    case DType::F16:
        return round_half(v);
    case DType::I32:
        return wrap(v, 32);
    case DType::I8:
        return wrap(v, 8);
    case DType::U8:
        return wrap(v, 8) + (wrap(v, 8) < 0 ? 256 : 0);
    case DType::BF16:
        return round_bfloat(v);
    case DType::I64:
        return wrap(v, 64);
    }
    return v;
}

bool is_int(DType t) {
    return dtype_is_integer(t);
}

} // namespace

struct ReferenceEvaluator::Impl {
    const ComputeDef &def;
    const BoundShape &shape;
    const std::map<std::string, HostTensor> &inputs;
    // Memo of computed tensors: value and a filled flag per element.
    struct Memo {
        std::vector<double> values;
        std::vector<uint8_t> filled;
    };
    std::map<std::string, Memo> memo;
    // Index variables in scope, a small stack searched from the back.
    std::vector<std::pair<const std::string *, int64_t>> env;

    Impl(const ComputeDef &d, const BoundShape &s, const std::map<std::string, HostTensor> &i)
        : def(d), shape(s), inputs(i) {}

    int64_t lookup_var(const std::string &name) const {
        for (auto it = env.rbegin(); it != env.rend(); ++it) {
            if (*it->first == name)
                return it->second;
        }
        throw InternalError("reference: unbound index variable " + name);
    }

    // An index: exact 64-bit integer arithmetic with Halide's division.
    int64_t eval_index(const Expr &e) {
        switch (e->kind) {
        case ExprKind::IntConst:
            return e->int_value;
        case ExprKind::Param:
            return shape.values.at(e->name);
        case ExprKind::IndexVar:
            return lookup_var(e->name);
        case ExprKind::Unary:
            return -eval_index(e->args[0]);
        case ExprKind::Binary: {
            int64_t a = eval_index(e->args[0]), b = eval_index(e->args[1]);
            if (e->name == "+")
                return a + b;
            if (e->name == "-")
                return a - b;
            if (e->name == "*")
                return a * b;
            if (e->name == "/")
                return static_cast<int64_t>(int_div(double(a), double(b)));
            break;
        }
        default:
            break;
        }
        throw InternalError("reference: cannot evaluate index " + to_string(e));
    }

    double read(const std::string &tensor, const std::vector<int64_t> &idx) {
        const TensorDecl *t = def.find_tensor(tensor);
        const auto &dims = shape.dims.at(tensor);
        int64_t flat = 0;
        for (size_t i = 0; i < dims.size(); i++) {
            if (idx[i] < 0 || idx[i] >= dims[i]) {
                if (t->zero_pad)
                    return 0.0;
                std::ostringstream msg;
                msg << "op '" << def.name << "': read of " << tensor << "[";
                for (size_t j = 0; j < idx.size(); j++)
                    msg << (j ? ", " : "") << idx[j];
                msg << "] is outside its extent at shape " << shape.canonical
                    << " (declare it zero_pad if out-of-range reads should give zero)";
                throw UserError(msg.str());
            }
            flat = flat * dims[i] + idx[i];
        }
        if (t->role == TensorRole::Input)
            return convert(t->dtype, inputs.at(tensor).at(flat));
        return computed(tensor, idx, flat);
    }

    double computed(const std::string &tensor, const std::vector<int64_t> &idx, int64_t flat) {
        auto &m = memo[tensor];
        int64_t n = shape.elements(tensor);
        bool memoise = n <= (int64_t(1) << 26);
        if (memoise && m.values.empty()) {
            m.values.assign(size_t(n), 0.0);
            m.filled.assign(size_t(n), 0);
        }
        if (memoise && m.filled[size_t(flat)])
            return m.values[size_t(flat)];
        const Statement *s = def.statement_for(tensor);
        // Every value of a statement is computed in its tensor's type, as the lowering does.
        DType type = def.find_tensor(tensor)->dtype;
        size_t base = env.size();
        for (size_t i = 0; i < s->vars.size(); i++)
            env.emplace_back(&s->vars[i], idx[i]);
        double v = 0;
        if (s->reduce == ReduceKind::None) {
            v = eval(s->body, type);
        } else {
            v = s->reduce == ReduceKind::Sum   ? 0.0
                : s->reduce == ReduceKind::Max ? -std::numeric_limits<double>::infinity()
                                               : std::numeric_limits<double>::infinity();
            std::vector<int64_t> extents;
            for (const auto &r : s->reduce_vars)
                extents.push_back(shape.eval(r.extent));
            size_t rbase = env.size();
            for (const auto &r : s->reduce_vars)
                env.emplace_back(&r.name, 0);
            // Odometer over the reduction domain, outermost variable first.
            while (true) {
                double x = eval(s->body, type);
                if (s->reduce == ReduceKind::Sum) {
                    v = result(type, v + x);
                } else if (s->reduce == ReduceKind::Max) {
                    v = std::max(v, x);
                } else {
                    v = std::min(v, x);
                }
                int k = int(extents.size()) - 1;
                while (k >= 0 && ++env[rbase + size_t(k)].second == extents[size_t(k)]) {
                    env[rbase + size_t(k)].second = 0;
                    k--;
                }
                if (k < 0)
                    break;
            }
        }
        env.resize(base);
        // float32 tensors hold float32 values, whatever precision the statement was computed in.
        v = convert(type, v);
        if (memoise) {
            m.values[size_t(flat)] = v;
            m.filled[size_t(flat)] = 1;
        }
        return v;
    }

    bool truth(const Expr &e, DType t) { return eval(e, t) != 0.0; }

    // The value of `e` in a statement of type `t`: leaves are converted to `t`, every operation's
    // result is rounded to `t` (see result()), casts round to their own type and back.
    double eval(const Expr &e, DType t) {
        switch (e->kind) {
        case ExprKind::FloatConst:
            return convert(t, e->float_value);
        case ExprKind::IntConst:
            return convert(t, double(e->int_value));
        case ExprKind::Param:
            return convert(t, double(shape.values.at(e->name)));
        case ExprKind::IndexVar:
            return convert(t, double(lookup_var(e->name)));
        case ExprKind::Access: {
            std::vector<int64_t> idx;
            idx.reserve(e->args.size());
            for (const auto &a : e->args)
                idx.push_back(eval_index(a));
            return convert(t, read(e->name, idx));
        }
        case ExprKind::Unary:
            if (e->name == "-")
                return result(t, -eval(e->args[0], t));
            return double(eval(e->args[0], t) == 0.0);
        case ExprKind::Binary:
            return binary(e, t);
        case ExprKind::Call:
            return call(e, t);
        }
        throw InternalError("reference: cannot evaluate " + to_string(e));
    }

    // An operator: logic on truth values, arithmetic rounded to `t`, comparisons as 0 or 1.
    double binary(const Expr &e, DType t) {
        const std::string &op = e->name;
        if (op == "&&")
            return double(truth(e->args[0], t) && truth(e->args[1], t));
        if (op == "||")
            return double(truth(e->args[0], t) || truth(e->args[1], t));
        if (op == "<" || op == "<=" || op == ">" || op == ">=" || op == "==" || op == "!=")
            return compare(e, comparison_type(def, e->args[0], e->args[1]).value_or(t));
        double a = eval(e->args[0], t), b = eval(e->args[1], t);
        if (op == "+")
            return result(t, a + b);
        if (op == "-")
            return result(t, a - b);
        if (op == "*")
            return result(t, a * b);
        if (op == "/")
            return is_int(t) ? result(t, int_div(a, b)) : result(t, a / b);
        throw InternalError("reference: cannot evaluate " + to_string(e));
    }

    // A comparison as 0 or 1, its operands evaluated in `t` (comparison_type).
    double compare(const Expr &e, DType t) {
        const std::string &op = e->name;
        double a = eval(e->args[0], t), b = eval(e->args[1], t);
        if (op == "<")
            return double(a < b);
        if (op == "<=")
            return double(a <= b);
        if (op == ">")
            return double(a > b);
        if (op == ">=")
            return double(a >= b);
        if (op == "==")
            return double(a == b);
        return double(a != b);
    }

    // A built-in function of a statement of type `t`.
    double call(const Expr &e, DType t) {
        const std::string &f = e->name;
        if (f == "select") {
            return truth(e->args[0], t) ? eval(e->args[1], t) : eval(e->args[2], t);
        }
        double a = eval(e->args[0], t);
        if (f == "max")
            return std::max(a, eval(e->args[1], t));
        if (f == "min")
            return std::min(a, eval(e->args[1], t));
        if (f == "abs")
            return result(t, std::fabs(a));
        if (f == "round")
            return is_int(t) ? a : result(t, std::nearbyint(a)); // ties to even, as Halide's round
        // Transcendental functions: float32 math, converted back to a non-float32 type.
        if (f == "exp")
            return t == DType::F32 ? std::exp(a) : convert(t, std::exp(a));
        if (f == "log")
            return t == DType::F32 ? std::log(a) : convert(t, std::log(a));
        if (f == "tanh")
            return t == DType::F32 ? std::tanh(a) : convert(t, std::tanh(a));
        if (f == "sqrt")
            return t == DType::F32 ? std::sqrt(a) : convert(t, std::sqrt(a));
        if (f == "erf")
            return t == DType::F32 ? std::erf(a) : convert(t, std::erf(a));
        if (f == "sin")
            return t == DType::F32 ? std::sin(a) : convert(t, std::sin(a));
        if (f == "cos")
            return t == DType::F32 ? std::cos(a) : convert(t, std::cos(a));
        if (f == "f32")
            return convert(t, double(float(a)));
        if (f == "f16")
            return convert(t, round_half(a));
        if (f == "i32")
            return convert(t, convert(DType::I32, a));
        if (f == "i64")
            return convert(t, convert(DType::I64, a));
        if (f == "i8")
            return convert(t, std::trunc(std::max(-128.0, std::min(127.0, a))));
        if (f == "u8")
            return convert(t, std::trunc(std::max(0.0, std::min(255.0, a))));
        if (f == "bf16")
            return convert(t, round_bfloat(a));
        throw InternalError("reference: cannot evaluate " + to_string(e));
    }
};

ReferenceEvaluator::ReferenceEvaluator(const ComputeDef &def, const BoundShape &shape,
                                       const std::map<std::string, HostTensor> &inputs)
    : impl_(std::make_unique<Impl>(def, shape, inputs)) {}

ReferenceEvaluator::~ReferenceEvaluator() = default;

double ReferenceEvaluator::value(const std::string &tensor, const std::vector<int64_t> &index) {
    internal_check(impl_->def.statement_for(tensor))
        << "reference: '" << tensor << "' is not a computed tensor";
    const auto &dims = impl_->shape.dims.at(tensor);
    internal_check(index.size() == dims.size())
        << "reference: " << index.size() << " indices for '" << tensor << "'";
    int64_t flat = 0;
    for (size_t i = 0; i < dims.size(); i++) {
        internal_check(index[i] >= 0 && index[i] < dims[i])
            << "reference: index " << index[i] << " outside dimension " << i << " of '" << tensor
            << "'";
        flat = flat * dims[i] + index[i];
    }
    return impl_->computed(tensor, index, flat);
}

ReferenceSample reference_sample(const ComputeDef &def, const BoundShape &shape,
                                 const std::map<std::string, HostTensor> &inputs,
                                 int64_t sample_points, uint64_t seed) {
    ReferenceSample r;
    const TensorDecl &out = def.output();
    r.output_name = out.name;
    r.dims = shape.dims.at(out.name);
    int64_t n = shape.elements(out.name);
    // Work of one output point, to decide between a full and a sampled check.
    double per_point = std::max(1.0, flop_count(def, shape) / double(n));
    if (double(n) * per_point <= 3e7 || n <= sample_points) {
        r.flat.resize(size_t(n));
        for (int64_t i = 0; i < n; i++)
            r.flat[size_t(i)] = i;
    } else {
        std::mt19937_64 rng(seed);
        std::uniform_int_distribution<int64_t> u(0, n - 1);
        r.flat.push_back(0);
        r.flat.push_back(n - 1);
        int64_t stride = 1;
        for (size_t d = r.dims.size(); d-- > 0;) {
            r.flat.push_back(std::min(n - 1, (r.dims[d] - 1) * stride));
            stride *= r.dims[d];
        }
        for (int64_t i = 0; i < sample_points; i++)
            r.flat.push_back(u(rng));
    }
    ReferenceEvaluator ref(def, shape, inputs);
    std::vector<int64_t> idx(r.dims.size());
    for (int64_t flat : r.flat) {
        int64_t rest = flat;
        for (size_t d = r.dims.size(); d-- > 0;) {
            idx[d] = rest % r.dims[d];
            rest /= r.dims[d];
        }
        r.want.push_back(ref.value(out.name, idx));
    }
    return r;
}

Verification check_output(const ReferenceSample &sample, const HostTensor &output,
                          double tolerance) {
    Verification v;
    int64_t n = 1;
    for (int64_t d : sample.dims)
        n *= d;
    if (output.elements() != n) {
        v.first_mismatch = "output has " + std::to_string(output.elements()) +
                           " elements, expected " + std::to_string(n);
        return v;
    }
    // Integer kernels compute exactly what the reference does: any difference is a wrong result.
    const bool exact = dtype_is_integer(output.dtype);
    for (size_t i = 0; i < sample.flat.size(); i++) {
        double want = sample.want[i];
        double got = output.at(sample.flat[i]);
        double err = std::fabs(got - want) / (1.0 + std::fabs(want));
        if (exact && got != want) err = std::numeric_limits<double>::infinity();
        if (std::isnan(got) != std::isnan(want) || (std::isinf(want) && got != want) ||
            (std::isinf(got) && got != want)) {
            err = std::numeric_limits<double>::infinity();
        } else if (std::isnan(want) || (std::isinf(want) && got == want)) {
            err = 0;
        }
        v.points_checked++;
        if (err > v.max_error)
            v.max_error = err;
        if (err > tolerance && v.first_mismatch.empty()) {
            std::ostringstream m;
            m << sample.output_name << "[";
            int64_t rest = sample.flat[i];
            std::vector<int64_t> idx(sample.dims.size());
            for (size_t d = sample.dims.size(); d-- > 0;) {
                idx[d] = rest % sample.dims[d];
                rest /= sample.dims[d];
            }
            for (size_t d = 0; d < idx.size(); d++)
                m << (d ? ", " : "") << idx[d];
            m << "]: got " << got << ", want " << want;
            v.first_mismatch = m.str();
        }
    }
    v.ok = v.first_mismatch.empty();
    return v;
}

Verification verify_output(const ComputeDef &def, const BoundShape &shape,
                           const std::map<std::string, HostTensor> &inputs,
                           const HostTensor &output, double tolerance, int64_t sample_points,
                           uint64_t seed) {
    return check_output(reference_sample(def, shape, inputs, sample_points, seed), output,
                        tolerance);
}

} // namespace opgen
