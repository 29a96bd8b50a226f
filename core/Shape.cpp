#include "core/Shape.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>

namespace opgen {

namespace {
// Halide's extents, indices and constants are 32-bit.
constexpr int64_t max_extent = INT32_MAX;

std::string trim(const std::string &s) {
    size_t a = s.find_first_not_of(" \t");
    size_t b = s.find_last_not_of(" \t");
    return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// Operations in one evaluation of a value expression: arithmetic, comparisons and math functions
// count one each; casts, constants and reads (with their index arithmetic) are free.
double value_ops(const Expr &e) {
    if (e->kind == ExprKind::Access)
        return 0;
    double n = 0;
    for (const auto &a : e->args)
        n += value_ops(a);
    if (e->kind == ExprKind::Binary || (e->kind == ExprKind::Unary && e->name == "-")) {
        n += 1;
    } else if (e->kind == ExprKind::Call) {
        bool is_cast = dtype_from_name(e->name).has_value();
        n += is_cast ? 0 : 1;
    }
    return n;
}
} // namespace

std::map<std::string, int64_t> parse_shape_text(const std::string &text) {
    std::map<std::string, int64_t> out;
    // An op whose parameters all have defaults needs no shape; bind_shape names what is missing.
    if (trim(text).empty())
        return out;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t comma = text.find(',', pos);
        std::string part =
            trim(text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
        user_check(!part.empty()) << "shape '" << text
                                  << "': empty entry (expected NAME=VALUE,...)";
        size_t eq = part.find('=');
        user_check(eq != std::string::npos)
            << "shape '" << text << "': entry '" << part << "' is not NAME=VALUE";
        std::string name = trim(part.substr(0, eq));
        std::string value = trim(part.substr(eq + 1));
        bool good_name =
            !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
        for (char c : name) {
            good_name &= std::isalnum(static_cast<unsigned char>(c)) || c == '_';
        }
        user_check(good_name) << "shape '" << text << "': '" << name << "' is not a parameter name";
        char *end = nullptr;
        errno = 0;
        long long v = std::strtoll(value.c_str(), &end, 10);
        user_check(!value.empty() && end && *end == '\0' && errno == 0)
            << "shape '" << text << "': value '" << value << "' of " << name
            << " is not an integer";
        user_check(out.emplace(name, v).second)
            << "shape '" << text << "': " << name << " is given twice";
        if (comma == std::string::npos)
            break;
        pos = comma + 1;
    }
    return out;
}

namespace {

// Floor division for a positive divisor, Euclidean for a negative one: Halide's integer division,
// so that a size or offset here and the same expression in a kernel agree.
int64_t halide_div(int64_t a, int64_t b) {
    int64_t q = a / b, r = a % b;
    if (r < 0)
        q += b > 0 ? -1 : 1;
    return q;
}

// Evaluates an integer expression of parameters with overflow and division checks; `what` says
// which size it is, for the message.
int64_t eval_checked(const BoundShape &b, const Expr &e, const std::string &what) {
    auto fail = [&](const char *problem) {
        user_check(false, e->loc) << what << (what.empty() ? "" : ": ") << "'" << to_string(e)
                                  << "' " << problem;
    };
    switch (e->kind) {
    case ExprKind::IntConst:
        return e->int_value;
    case ExprKind::Param: {
        auto it = b.values.find(e->name);
        internal_check(it != b.values.end()) << "unbound parameter " << e->name;
        return it->second;
    }
    case ExprKind::Unary: {
        int64_t a = eval_checked(b, e->args[0], what);
        if (e->name != "-" || a == INT64_MIN)
            break;
        return -a;
    }
    case ExprKind::Binary: {
        int64_t x = eval_checked(b, e->args[0], what), y = eval_checked(b, e->args[1], what);
        int64_t r = 0;
        bool overflow = false;
        if (e->name == "+") {
            overflow = __builtin_add_overflow(x, y, &r);
        } else if (e->name == "-") {
            overflow = __builtin_sub_overflow(x, y, &r);
        } else if (e->name == "*") {
            overflow = __builtin_mul_overflow(x, y, &r);
        } else if (e->name == "/") {
            if (y == 0)
                fail("divides by zero");
            overflow = x == INT64_MIN && y == -1;
            if (!overflow)
                r = halide_div(x, y);
        } else {
            break;
        }
        if (overflow)
            fail("overflows 64-bit integers");
        return r;
    }
    case ExprKind::Call:
        if (e->name == "max") {
            return std::max(eval_checked(b, e->args[0], what), eval_checked(b, e->args[1], what));
        }
        if (e->name == "min") {
            return std::min(eval_checked(b, e->args[0], what), eval_checked(b, e->args[1], what));
        }
        break;
    default:
        break;
    }
    fail("is not an integer expression of parameters");
    return 0;
}

} // namespace

int64_t BoundShape::eval(const Expr &e) const {
    return eval_checked(*this, e, "");
}

int64_t BoundShape::elements(const std::string &tensor) const {
    int64_t n = 1;
    for (int64_t d : dims.at(tensor))
        n *= d;
    return n;
}

int64_t BoundShape::var_extent(const Statement &s, const std::string &var) const {
    for (size_t i = 0; i < s.vars.size(); i++) {
        if (s.vars[i] == var)
            return dims.at(s.tensor)[i];
    }
    for (const auto &r : s.reduce_vars) {
        if (r.name == var)
            return eval(r.extent);
    }
    throw InternalError("statement of '" + s.tensor + "' has no variable '" + var + "'");
}

namespace {

// An affine index, constant + sum of coefficient * index variable, computed exactly.
struct Affine {
    int64_t constant = 0;
    std::map<std::string, int64_t> coeff;
};

Affine affine_of(const BoundShape &b, const Expr &e, const std::string &what) {
    auto overflow = [&]() {
        user_check(false, e->loc) << what << ": index '" << to_string(e)
                                  << "' overflows 64-bit integers";
    };
    Affine r;
    switch (e->kind) {
    case ExprKind::IndexVar:
        r.coeff[e->name] = 1;
        return r;
    case ExprKind::Unary: {
        r = affine_of(b, e->args[0], what);
        if (r.constant == INT64_MIN)
            overflow();
        r.constant = -r.constant;
        for (auto &[v, c] : r.coeff) {
            if (c == INT64_MIN)
                overflow();
            c = -c;
        }
        return r;
    }
    case ExprKind::Binary: {
        Affine x = affine_of(b, e->args[0], what), y = affine_of(b, e->args[1], what);
        if (e->name == "+" || e->name == "-") {
            int64_t sign = e->name == "+" ? 1 : -1;
            int64_t t = 0;
            if (__builtin_mul_overflow(y.constant, sign, &t) ||
                __builtin_add_overflow(x.constant, t, &x.constant)) {
                overflow();
            }
            for (const auto &[v, c] : y.coeff) {
                if (__builtin_mul_overflow(c, sign, &t) ||
                    __builtin_add_overflow(x.coeff[v], t, &x.coeff[v])) {
                    overflow();
                }
            }
            return x;
        }
        if (e->name == "*") {
            // The parser allows a product only with one side free of index variables.
            if (!x.coeff.empty())
                std::swap(x, y);
            internal_check(x.coeff.empty()) << "non-affine index " << to_string(e);
            for (auto &[v, c] : y.coeff) {
                if (__builtin_mul_overflow(c, x.constant, &c))
                    overflow();
            }
            if (__builtin_mul_overflow(y.constant, x.constant, &y.constant))
                overflow();
            return y;
        }
        break;
    }
    default:
        break;
    }
    // Free of index variables (the parser allows nothing else here): a size-like expression.
    r.constant = eval_checked(b, e, what);
    return r;
}

// Every read of an input that is not zero_pad must stay inside the input, and every index must fit
// in 32 bits: a kernel cannot read outside its buffers, and Halide's indices are 32-bit. Checked
// exactly over the statement's whole iteration domain, which is what a kernel's bounds cover.
void check_reads(const ComputeDef &def, const BoundShape &b, const std::string &at) {
    for (const auto &s : def.statements) {
        std::vector<const ExprNode *> stack{s.body.get()};
        while (!stack.empty()) {
            const ExprNode *e = stack.back();
            stack.pop_back();
            for (const auto &a : e->args)
                stack.push_back(a.get());
            if (e->kind != ExprKind::Access)
                continue;
            const TensorDecl *t = def.find_tensor(e->name);
            const auto &dims = b.dims.at(e->name);
            for (size_t i = 0; i < e->args.size(); i++) {
                const Expr &index = e->args[i];
                Affine a = affine_of(b, index, at);
                int64_t lo = a.constant, hi = a.constant;
                bool overflow = false;
                for (const auto &[v, c] : a.coeff) {
                    int64_t span = 0;
                    overflow |= __builtin_mul_overflow(c, b.var_extent(s, v) - 1, &span);
                    overflow |=
                        __builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi);
                }
                user_check(!overflow && lo >= -max_extent && hi <= max_extent, start_loc(index))
                    << at << ": index '" << to_string(index) << "' of '" << e->name
                    << "' leaves the 32-bit range of kernel indices";
                bool outside = lo < 0 || hi >= dims[i];
                user_check(!outside || t->zero_pad || t->role != TensorRole::Input,
                           start_loc(index))
                    << at << ": index '" << to_string(index) << "' of input '" << e->name
                    << "' ranges over " << lo << ".." << hi << " but dimension " << i
                    << " has extent " << dims[i] << " (declare '" << e->name
                    << "' zero_pad if reads outside it should give zero)";
            }
        }
    }
}

// The reduction variable that steps whole groups along `a` where `a` reads a group of `g`
// consecutive elements through `inner` (index g*q + inner, `inner` of extent g): `q`'s name, or ""
// when `a` is not such an index.
std::string group_stepper(const Statement &s, const BoundShape &b, const Affine &a,
                          const ReduceVar &inner) {
    auto c = a.coeff.find(inner.name);
    if (c == a.coeff.end() || c->second != 1)
        return "";
    const int64_t g = b.eval(inner.extent);
    for (const ReduceVar &q : s.reduce_vars) {
        auto k = a.coeff.find(q.name);
        if (&q != &inner && k != a.coeff.end() && k->second == g)
            return q.name;
    }
    return "";
}

// A reduction that reads an operand in groups of g consecutive elements along one dimension
// (index g*kb + kk, kk the innermost reduction variable of extent g: the dot-product packing of
// docs/design.md §2.4) reads g * (extent / g) of them: where the dimension's extent is not a
// multiple of g its last elements would silently be left out of the sum, so binding refuses it.
void check_grouped_reads(const ComputeDef &def, const BoundShape &b, const std::string &at) {
    for (const auto &s : def.statements) {
        if (s.reduce != ReduceKind::Sum || s.reduce_vars.size() < 2)
            continue;
        const ReduceVar &inner = s.reduce_vars.back();
        const int64_t g = b.eval(inner.extent);
        for (const ExprNode *e : accesses(s)) {
            const TensorDecl *t = def.find_tensor(e->name);
            for (size_t i = 0; i < e->args.size(); i++) {
                const Affine a = affine_of(b, e->args[i], at);
                if (g < 2 || group_stepper(s, b, a, inner).empty())
                    continue;
                int64_t hi = a.constant;
                for (const auto &[v, c] : a.coeff)
                    hi += c > 0 ? c * (b.var_extent(s, v) - 1) : 0;
                const int64_t extent = b.dims.at(e->name)[i];
                user_check(hi >= extent - 1, start_loc(e->args[i]))
                    << at << ": " << to_string(t->dims[i]) << "=" << extent
                    << " is not a multiple of " << g << ": the reduction reads dimension " << i
                    << " of '" << e->name << "' in groups of " << g << " ('"
                    << to_string(e->args[i]) << "'), so its elements " << hi + 1 << ".."
                    << extent - 1 << " would be left out of the sum (pad " << to_string(t->dims[i])
                    << " to a multiple of " << g << " with zeros)";
            }
        }
    }
}

// The given parameter values, each checked against its declaration.
std::map<std::string, int64_t> given_values(const ComputeDef &def,
                                            const std::map<std::string, int64_t> &given) {
    std::map<std::string, int64_t> values;
    for (const auto &[name, value] : given) {
        const ParamDecl *p = def.find_param(name);
        if (!p) {
            std::string known;
            for (const auto &q : def.params)
                known += (known.empty() ? "" : ", ") + q.name;
            user_check(false) << "op '" << def.name << "' has no parameter '" << name
                              << "' (parameters: " << (known.empty() ? "none" : known) << ")";
        }
        user_check(value > 0 || (p->is_attr && value >= 0))
            << "op '" << def.name << "': " << name << "=" << value << " must be "
            << (p->is_attr ? "zero or positive" : "positive");
        user_check(value <= max_extent) << "op '" << def.name << "': " << name << "=" << value
                                        << " is too large (the limit is " << max_extent << ")";
        values[name] = value;
    }
    return values;
}

// `values` with every parameter not given at its default; UserError naming those that have none.
std::map<std::string, int64_t> with_defaults(const ComputeDef &def,
                                             std::map<std::string, int64_t> values) {
    std::vector<std::string> missing;
    for (const auto &p : def.params) {
        if (values.count(p.name))
            continue;
        if (!p.default_value) {
            missing.push_back(p.name);
            continue;
        }
        values[p.name] = *p.default_value;
    }
    if (!missing.empty()) {
        std::string list;
        for (const auto &m : missing)
            list += (list.empty() ? "'" : ", '") + m + "'";
        user_check(false) << "op '" << def.name << "': shape is missing parameter"
                          << (missing.size() == 1 ? " " : "s ") << list << " (give "
                          << missing.front() << "=<value>)";
    }
    return values;
}

// "M=2,N=1": ordered by name, so that "N=1,M=2" and "M=2,N=1" are one key.
std::string canonical_text(const std::map<std::string, int64_t> &values) {
    std::string text;
    for (const auto &[name, value] : values) {
        text += (text.empty() ? "" : ",") + name + "=" + std::to_string(value);
    }
    return text;
}

// Adds each let's value to b.values. A let may be zero or negative (an offset); only its use as a
// size must be positive.
void bind_lets(const ComputeDef &def, BoundShape &b, const std::string &at) {
    for (const auto &l : def.lets) {
        int64_t v = eval_checked(b, l.value, at + ": let " + l.name);
        user_check(v >= -max_extent && v <= max_extent, l.loc)
            << at << ": let " << l.name << " = " << to_string(l.value) << " is " << v
            << ", outside the 32-bit range of kernel constants";
        b.values[l.name] = v;
    }
}

// "OH (= (H + 2*pad - KH) / stride + 1)": a size that is a let is shown with its definition.
std::string explain_size(const ComputeDef &def, const Expr &e) {
    std::string s = to_string(e);
    for (const auto &l : def.lets) {
        if (e->kind == ExprKind::Param && e->name == l.name) {
            s += " = " + to_string(l.value);
        }
    }
    return s;
}

// Every tensor's extents, each in [1, max_extent], and all tensors within `max_bytes` together.
std::map<std::string, std::vector<int64_t>> tensor_dims(const ComputeDef &def, const BoundShape &b,
                                                        const std::string &at, int64_t max_bytes) {
    std::map<std::string, std::vector<int64_t>> dims;
    double total_bytes = 0;
    for (const auto &t : def.tensors) {
        std::vector<int64_t> d;
        double elems = 1;
        for (size_t i = 0; i < t.dims.size(); i++) {
            const Expr &e = t.dims[i];
            int64_t v = eval_checked(
                b, e, at + ": dimension " + std::to_string(i) + " of '" + t.name + "'");
            user_check(v > 0, e->loc)
                << at << ": tensor '" << t.name << "' would have extent " << v << " in dimension "
                << i << " (" << explain_size(def, e) << "); sizes must be positive";
            user_check(v <= max_extent, e->loc)
                << at << ": tensor '" << t.name << "' would have extent " << v << " in dimension "
                << i << " (" << explain_size(def, e) << "), more than " << max_extent;
            d.push_back(v);
            elems *= double(v);
        }
        total_bytes += elems * dtype_bytes(t.dtype);
        dims[t.name] = d;
    }
    user_check(total_bytes <= double(max_bytes))
        << at << " needs " << static_cast<int64_t>(total_bytes)
        << " bytes of tensors, more than the limit of " << max_bytes;
    return dims;
}

// Every reduction variable's extent must be in [1, max_extent].
void check_reduction_extents(const ComputeDef &def, const BoundShape &b, const std::string &at) {
    for (const auto &s : def.statements) {
        for (const auto &r : s.reduce_vars) {
            int64_t v = eval_checked(b, r.extent, at + ": extent of '" + r.name + "'");
            user_check(v > 0 && v <= max_extent, r.loc)
                << at << ": reduction variable '" << r.name << "' would have extent " << v << " ("
                << explain_size(def, r.extent) << "); it must be between 1 and " << max_extent;
        }
    }
}

} // namespace

namespace {

BoundShape bind_values(const ComputeDef &def, const std::map<std::string, int64_t> &values,
                       int64_t max_bytes) {
    BoundShape b;
    b.values = values;
    b.canonical = canonical_text(b.values);
    const std::string at = "op '" + def.name + "' at shape " + b.canonical;
    bind_lets(def, b, at);
    b.dims = tensor_dims(def, b, at, max_bytes);
    check_reduction_extents(def, b, at);
    check_reads(def, b, at);
    check_grouped_reads(def, b, at);
    return b;
}

// Whether a view's condition holds at `b`'s values.
bool holds(const BoundShape &b, const Expr &e, const std::string &what) {
    if (e->name == "&&")
        return holds(b, e->args[0], what) && holds(b, e->args[1], what);
    if (e->name == "||")
        return holds(b, e->args[0], what) || holds(b, e->args[1], what);
    int64_t x = eval_checked(b, e->args[0], what), y = eval_checked(b, e->args[1], what);
    if (e->name == "==")
        return x == y;
    if (e->name == "!=")
        return x != y;
    if (e->name == "<")
        return x < y;
    if (e->name == "<=")
        return x <= y;
    if (e->name == ">")
        return x > y;
    return x >= y;
}

// `values` (parameters and attributes) with the assignments of the first view whose condition
// holds there, each evaluated at `values`; `values` itself, and `applied` null, when none holds.
std::map<std::string, int64_t> viewed(const ComputeDef &def, const std::map<std::string, int64_t> &values,
                                      const ViewDecl *&applied) {
    BoundShape at;
    at.values = values;
    const std::string what = "op '" + def.name + "' at shape " + canonical_text(values) + ": view";
    applied = nullptr;
    for (const ViewDecl &v : def.views) {
        if (!holds(at, v.when, what))
            continue;
        std::map<std::string, int64_t> out = values;
        for (const auto &[name, size] : v.set) {
            int64_t value = eval_checked(at, size, what);
            user_check(value > 0 && value <= max_extent, v.loc)
                << what << " sets " << name << "=" << value << "; a parameter must be between 1 and " << max_extent;
            out[name] = value;
        }
        applied = &v;
        return out;
    }
    return values;
}

// A view must name the same computation over the same memory: every tensor keeps its size, and
// the shape it makes is its own view (so the canonical key is stable).
void check_view(const ComputeDef &def, const ViewDecl &view, const BoundShape &given, const BoundShape &made) {
    const std::string what = "op '" + def.name + "': the view from " + given.canonical + " to " + made.canonical;
    for (const TensorDecl &t : def.tensors)
        user_check(given.elements(t.name) == made.elements(t.name), view.loc)
            << what << " changes tensor '" << t.name << "' from " << given.elements(t.name) << " to "
            << made.elements(t.name) << " elements; a view must keep every tensor's size";
    std::map<std::string, int64_t> params;
    for (const ParamDecl &p : def.params)
        params[p.name] = made.values.at(p.name);
    const ViewDecl *again = nullptr;
    user_check(viewed(def, params, again) == params, view.loc)
        << what << " is not stable: applied to " << made.canonical << " it gives another shape";
}

}  // namespace

BoundShape bind_shape(const ComputeDef &def, const std::map<std::string, int64_t> &given,
                      int64_t max_bytes) {
    std::map<std::string, int64_t> as_given = with_defaults(def, given_values(def, given));
    const ViewDecl *view = nullptr;
    BoundShape b = bind_values(def, viewed(def, as_given, view), max_bytes);
    if (!view) {
        b.given = b.values;
        return b;
    }
    BoundShape g = bind_values(def, as_given, max_bytes);
    check_view(def, *view, g, b);
    b.given = g.values;
    return b;
}

BoundShape bind_shape(const ComputeDef &def, const std::string &shape_text) {
    return bind_shape(def, parse_shape_text(shape_text));
}

double flop_count(const ComputeDef &def, const BoundShape &shape) {
    double total = 0;
    for (const auto &s : def.statements) {
        double points = double(shape.elements(s.tensor));
        double reduce = 1;
        for (const auto &r : s.reduce_vars)
            reduce *= double(shape.eval(r.extent));
        double per_point = value_ops(s.body) + (s.reduce != ReduceKind::None ? 1 : 0);
        total += points * reduce * std::max(per_point, 1.0);
    }
    return total;
}

double min_bytes_moved(const ComputeDef &def, const BoundShape &shape) {
    double bytes = 0;
    for (const auto &t : def.tensors) {
        if (t.role != TensorRole::Local)
            bytes += double(shape.elements(t.name)) * dtype_bytes(t.dtype);
    }
    return bytes;
}

} // namespace opgen
