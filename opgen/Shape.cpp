#include "opgen/Shape.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace opgen {

namespace {
std::string trim(const std::string &s) {
    size_t a = s.find_first_not_of(" \t");
    size_t b = s.find_last_not_of(" \t");
    return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// Operations in one evaluation of a value expression: arithmetic, comparisons and math functions
// count one each; casts, constants and reads (with their index arithmetic) are free.
double value_ops(const Expr &e) {
    if (e->kind == ExprKind::Access) return 0;
    double n = 0;
    for (const auto &a : e->args) n += value_ops(a);
    if (e->kind == ExprKind::Binary || (e->kind == ExprKind::Unary && e->name == "-")) {
        n += 1;
    } else if (e->kind == ExprKind::Call) {
        static const char *casts[] = {"f32", "f16", "i8", "i32"};
        bool is_cast = std::any_of(std::begin(casts), std::end(casts), [&](const char *c) { return e->name == c; });
        n += is_cast ? 0 : 1;
    }
    return n;
}
}  // namespace

std::map<std::string, int64_t> parse_shape_text(const std::string &text) {
    std::map<std::string, int64_t> out;
    user_check(!trim(text).empty()) << "shape is empty (expected NAME=VALUE,...)";
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t comma = text.find(',', pos);
        std::string part = trim(text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
        user_check(!part.empty()) << "shape '" << text << "': empty entry (expected NAME=VALUE,...)";
        size_t eq = part.find('=');
        user_check(eq != std::string::npos) << "shape '" << text << "': entry '" << part << "' is not NAME=VALUE";
        std::string name = trim(part.substr(0, eq));
        std::string value = trim(part.substr(eq + 1));
        user_check(!name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_'))
            << "shape '" << text << "': '" << name << "' is not a parameter name";
        char *end = nullptr;
        errno = 0;
        long long v = std::strtoll(value.c_str(), &end, 10);
        user_check(!value.empty() && end && *end == '\0' && errno == 0)
            << "shape '" << text << "': value '" << value << "' of " << name << " is not an integer";
        user_check(out.emplace(name, v).second) << "shape '" << text << "': " << name << " is given twice";
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    return out;
}

int64_t BoundShape::eval(const Expr &e) const {
    switch (e->kind) {
    case ExprKind::IntConst: return e->int_value;
    case ExprKind::Param: {
        auto it = values.find(e->name);
        internal_check(it != values.end()) << "unbound parameter " << e->name;
        return it->second;
    }
    case ExprKind::Unary: return -eval(e->args[0]);
    case ExprKind::Binary: {
        int64_t a = eval(e->args[0]), b = eval(e->args[1]);
        if (e->name == "+") return a + b;
        if (e->name == "-") return a - b;
        if (e->name == "*") return a * b;
        if (e->name == "/") {
            user_check(b != 0, e->loc) << "division by zero in '" << to_string(e) << "'";
            // Floor division, so that negative offsets round the way sizes expect.
            int64_t q = a / b;
            return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
        }
        break;
    }
    case ExprKind::Call:
        if (e->name == "max") return std::max(eval(e->args[0]), eval(e->args[1]));
        if (e->name == "min") return std::min(eval(e->args[0]), eval(e->args[1]));
        break;
    default: break;
    }
    user_check(false, e->loc) << "'" << to_string(e) << "' is not an integer expression";
    return 0;
}

int64_t BoundShape::elements(const std::string &tensor) const {
    int64_t n = 1;
    for (int64_t d : dims.at(tensor)) n *= d;
    return n;
}

int64_t BoundShape::var_extent(const Statement &s, const std::string &var) const {
    for (size_t i = 0; i < s.vars.size(); i++) {
        if (s.vars[i] == var) return dims.at(s.tensor)[i];
    }
    for (const auto &r : s.reduce_vars) {
        if (r.name == var) return eval(r.extent);
    }
    throw InternalError("statement of '" + s.tensor + "' has no variable '" + var + "'");
}

BoundShape bind_shape(const ComputeDef &def, const std::map<std::string, int64_t> &given, int64_t max_bytes) {
    BoundShape b;
    for (const auto &[name, value] : given) {
        const ParamDecl *p = def.find_param(name);
        if (!p) {
            std::string known;
            for (const auto &q : def.params) known += (known.empty() ? "" : ", ") + q.name;
            user_check(false) << "op '" << def.name << "' has no parameter '" << name << "' (parameters: " << known << ")";
        }
        user_check(value > 0 || (p->is_attr && value >= 0))
            << "op '" << def.name << "': " << name << "=" << value << " must be positive";
        user_check(value <= (int64_t(1) << 31)) << "op '" << def.name << "': " << name << "=" << value << " is too large";
        b.values[name] = value;
    }
    for (const auto &p : def.params) {
        if (b.values.count(p.name)) continue;
        user_check(p.default_value.has_value()) << "op '" << def.name << "': shape is missing parameter '" << p.name << "'";
        b.values[p.name] = *p.default_value;
    }
    for (const auto &p : def.params) {
        b.canonical += (b.canonical.empty() ? "" : ",") + p.name + "=" + std::to_string(b.values[p.name]);
    }
    // Canonical order is by name, so that "N=1,M=2" and "M=2,N=1" are one key.
    {
        std::string c;
        for (const auto &[name, value] : b.values) c += (c.empty() ? "" : ",") + name + "=" + std::to_string(value);
        b.canonical = c;
    }
    for (const auto &l : def.lets) {
        int64_t v = b.eval(l.value);
        user_check(v > 0, l.loc) << "op '" << def.name << "': " << l.name << " = " << to_string(l.value) << " is " << v
                                 << " at shape " << b.canonical << "; it must be positive";
        b.values[l.name] = v;
    }
    double total_bytes = 0;
    for (const auto &t : def.tensors) {
        std::vector<int64_t> d;
        double elems = 1;
        for (const auto &e : t.dims) {
            int64_t v = b.eval(e);
            user_check(v > 0, t.loc) << "op '" << def.name << "': tensor '" << t.name << "' has extent " << v
                                     << " (" << to_string(e) << ") at shape " << b.canonical;
            d.push_back(v);
            elems *= double(v);
        }
        total_bytes += elems * dtype_bytes(t.dtype);
        b.dims[t.name] = d;
    }
    user_check(total_bytes <= double(max_bytes))
        << "op '" << def.name << "' at shape " << b.canonical << " needs " << static_cast<int64_t>(total_bytes)
        << " bytes of tensors, more than the limit of " << max_bytes;
    for (const auto &s : def.statements) {
        for (const auto &r : s.reduce_vars) {
            int64_t v = b.eval(r.extent);
            user_check(v > 0, r.loc) << "op '" << def.name << "': reduction extent of '" << r.name << "' is " << v
                                     << " at shape " << b.canonical;
        }
    }
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
        for (const auto &r : s.reduce_vars) reduce *= double(shape.eval(r.extent));
        double per_point = value_ops(s.body) + (s.reduce != ReduceKind::None ? 1 : 0);
        total += points * reduce * std::max(per_point, 1.0);
    }
    return total;
}

double min_bytes_moved(const ComputeDef &def, const BoundShape &shape) {
    double bytes = 0;
    for (const auto &t : def.tensors) {
        if (t.role != TensorRole::Local) bytes += double(shape.elements(t.name)) * dtype_bytes(t.dtype);
    }
    return bytes;
}

}  // namespace opgen
