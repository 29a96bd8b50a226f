#include "core/ComputeDef.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace opgen {

std::string SourceLoc::str() const {
    std::string s = file;
    if (line > 0) {
        s += (s.empty() ? "" : ":") + std::to_string(line);
        if (col > 0) {
            s += ":" + std::to_string(col);
        }
    }
    return s;
}

std::string read_func_name(const TensorDecl &t) { return t.zero_pad ? t.name + "_padded" : t.name; }

const char *reduce_name(ReduceKind k) {
    switch (k) {
    case ReduceKind::None:
        return "none";
    case ReduceKind::Sum:
        return "sum";
    case ReduceKind::Max:
        return "max";
    case ReduceKind::Min:
        return "min";
    }
    return "?";
}

const TensorDecl *ComputeDef::find_tensor(const std::string &n) const {
    for (const auto &t : tensors) {
        if (t.name == n) {
            return &t;
        }
    }
    return nullptr;
}

const ParamDecl *ComputeDef::find_param(const std::string &n) const {
    for (const auto &p : params) {
        if (p.name == n) {
            return &p;
        }
    }
    return nullptr;
}

const TensorDecl &ComputeDef::output() const {
    for (const auto &t : tensors) {
        if (t.role == TensorRole::Output) {
            return t;
        }
    }
    throw InternalError("op '" + name + "' has no output tensor");
}

std::vector<std::string> ComputeDef::symbolic_params() const {
    std::vector<std::string> symbols;
    for (const ParamDecl &p : params)
        if (!p.is_attr && !p.default_value) symbols.push_back(p.name);
    return symbols;
}

std::vector<const TensorDecl *> ComputeDef::inputs() const {
    std::vector<const TensorDecl *> result;
    for (const auto &t : tensors) {
        if (t.role == TensorRole::Input) {
            result.push_back(&t);
        }
    }
    return result;
}

const Statement *ComputeDef::statement_for(const std::string &tensor) const {
    for (const auto &s : statements) {
        if (s.tensor == tensor) {
            return &s;
        }
    }
    return nullptr;
}

namespace {
// Whether the line starting at `at` declares a view: its first word is `view`.
bool is_view_line(const std::string &source, size_t at) {
    size_t word = source.find_first_not_of(" \t", at);
    return word != std::string::npos && source.compare(word, 4, "view") == 0 &&
           (word + 4 == source.size() || source[word + 4] == ' ' || source[word + 4] == '\t');
}
}  // namespace

std::string op_dtype(const ComputeDef &def) {
    const DType out = def.output().dtype;
    std::string inputs;
    bool uniform = true;
    for (const TensorDecl *t : def.inputs()) {
        uniform &= t->dtype == out;
        inputs += (inputs.empty() ? "" : ",") + std::string(dtype_name(t->dtype));
    }
    if (uniform) return dtype_name(out);
    return inputs + "->" + dtype_name(out);
}

std::string definition_hash(const std::string &source) {
    // FNV-1a over the bytes with "\r\n" folded to "\n", so a checkout on any platform hashes alike.
    // The offset basis and prime are FNV's 64-bit constants (the basis is 14695981039346656037).
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < source.size(); i++) {
        if ((i == 0 || source[i - 1] == '\n') && is_view_line(source, i)) {
            size_t end = source.find('\n', i);
            if (end == std::string::npos) break;
            i = end;  // the newline ends the skipped line
            continue;
        }
        if (source[i] == '\r' && i + 1 < source.size() && source[i + 1] == '\n') {
            continue;
        }
        h ^= static_cast<unsigned char>(source[i]);
        h *= 0x100000001b3ull;
    }
    char buf[17];
    std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

namespace {
int precedence(const std::string &op) {
    if (op == "||")
        return 1;
    if (op == "&&")
        return 2;
    if (op == "<" || op == "<=" || op == ">" || op == ">=" || op == "==" || op == "!=")
        return 3;
    if (op == "+" || op == "-")
        return 4;
    return 5; // * /
}

void print(std::ostringstream &out, const Expr &e, int parent_prec) {
    switch (e->kind) {
    case ExprKind::FloatConst: {
        // The shortest text that reads back as the same double, so that printing and parsing
        // again gives the same op (0.7071067811865476 must not become 0.707107).
        char buf[32];
        for (int digits = 1; digits <= 17; digits++) {
            std::snprintf(buf, sizeof(buf), "%.*g", digits, e->float_value);
            if (std::strtod(buf, nullptr) == e->float_value) {
                break;
            }
        }
        std::string s = buf;
        if (s.find_first_of(".e") == std::string::npos) {
            s += ".0";
        }
        out << s;
        return;
    }
    case ExprKind::IntConst:
        out << e->int_value;
        return;
    case ExprKind::Param:
    case ExprKind::IndexVar:
        out << e->name;
        return;
    case ExprKind::Access:
    case ExprKind::Call: {
        out << e->name << (e->kind == ExprKind::Access ? "[" : "(");
        for (size_t i = 0; i < e->args.size(); i++) {
            out << (i ? ", " : "");
            print(out, e->args[i], 0);
        }
        out << (e->kind == ExprKind::Access ? "]" : ")");
        return;
    }
    case ExprKind::Unary:
        out << e->name;
        print(out, e->args[0], 6);
        return;
    case ExprKind::Binary: {
        int p = precedence(e->name);
        if (p < parent_prec)
            out << "(";
        print(out, e->args[0], p);
        out << " " << e->name << " ";
        print(out, e->args[1], p + 1);
        if (p < parent_prec)
            out << ")";
        return;
    }
    }
}
} // namespace

const ExprNode *find_access(const Expr &e, const std::string &tensor) {
    if (e->kind == ExprKind::Access && e->name == tensor) return e.get();
    for (const Expr &a : e->args) {
        if (const ExprNode *found = find_access(a, tensor)) return found;
    }
    return nullptr;
}

std::vector<const ExprNode *> accesses(const Statement &s) {
    std::vector<const ExprNode *> found, stack{s.body.get()};
    while (!stack.empty()) {
        const ExprNode *e = stack.back();
        stack.pop_back();
        if (e->kind == ExprKind::Access) found.push_back(e);
        for (const Expr &a : e->args) stack.push_back(a.get());
    }
    return found;
}

bool mentions_var(const ExprNode &e, const std::string &var) {
    if (e.kind == ExprKind::IndexVar && e.name == var) return true;
    return std::any_of(e.args.begin(), e.args.end(), [&](const Expr &a) { return mentions_var(*a, var); });
}

namespace {

// Whether `a` holds more than `b`: any float type more than any integer type, then the larger.
bool wider(DType a, DType b) {
    const bool fa = !dtype_is_integer(a), fb = !dtype_is_integer(b);
    if (fa != fb) return fa;
    return dtype_bytes(a) > dtype_bytes(b);
}

// The widest type of the tensors `e` reads outside index expressions, into `widest`.
void widest_read(const ComputeDef &def, const Expr &e, std::optional<DType> &widest) {
    if (e->kind == ExprKind::Access) {
        const TensorDecl *t = def.find_tensor(e->name);
        if (t && (!widest || wider(t->dtype, *widest))) widest = t->dtype;
        return;
    }
    for (const Expr &a : e->args) widest_read(def, a, widest);
}

}  // namespace

std::optional<DType> comparison_type(const ComputeDef &def, const Expr &a, const Expr &b) {
    std::optional<DType> widest;
    widest_read(def, a, widest);
    widest_read(def, b, widest);
    return widest;
}

std::string to_string(const Expr &e) {
    std::ostringstream out;
    print(out, e, 0);
    return out.str();
}

SourceLoc start_loc(const Expr &e) {
    const ExprNode *n = e.get();
    while (n->kind == ExprKind::Binary)
        n = n->args[0].get();
    return n->loc;
}

} // namespace opgen
