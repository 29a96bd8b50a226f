#include "codegen/Emit.h"

#include "core/AmxLowering.h"
#include "core/Gather.h"
#include "codegen/GenericCode.h"
#include "core/Kernel.h"
#include "core/LlvmTarget.h"
#include "core/Lower.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <unistd.h>

namespace opgen {

namespace fs = std::filesystem;

namespace {

const char *ctype(DType t) {
    switch (t) {
    case DType::F32: return "float";
    case DType::F16: return "Halide::float16_t";
    case DType::I8: return "int8_t";
    case DType::I32: return "int32_t";
    case DType::U8: return "uint8_t";
    case DType::BF16: return "Halide::bfloat16_t";
    case DType::I64: return "int64_t";
    }
    return "float";
}

std::string float_literal(double v) {
    std::ostringstream s;
    s.precision(9);
    s << v;
    std::string t = s.str();
    if (t.find_first_of(".en") == std::string::npos) t += ".0";
    return t + "f";
}

// Prints an op-language expression as Halide C++: accesses with their arguments reversed (Halide's
// first dimension is innermost), parameters as the bound integers.
class Printer {
public:
    // `renamed`: the statement's reduction variables printed under another identifier (printed_rvar).
    // `statement`: the statement printed, whose strided reads without a window go through their
    // gathered Funcs (core/Gather.h), as lower_to_halide lowers them.
    Printer(const ComputeDef &def, const BoundShape &shape, const std::string &value_type, bool fast_math,
            std::map<std::string, std::string> renamed = {}, const Statement *statement = nullptr)
        : def_(def), shape_(shape), vt_(value_type), fast_math_(fast_math), renamed_(std::move(renamed)),
          statement_(statement) {}

    std::string value(const Expr &e) const {
        switch (e->kind) {
        case ExprKind::FloatConst: return "cast<" + vt_ + ">(" + float_literal(e->float_value) + ")";
        case ExprKind::IntConst: return "cast<" + vt_ + ">(" + std::to_string(e->int_value) + ")";
        case ExprKind::Param: return "cast<" + vt_ + ">(" + std::to_string(shape_.values.at(e->name)) + ")";
        case ExprKind::IndexVar: return "cast<" + vt_ + ">(" + identifier(e->name) + ")";
        case ExprKind::Access: return "cast<" + vt_ + ">(" + access(e) + ")";
        case ExprKind::Unary: return e->name == "-" ? "(-" + value(e->args[0]) + ")" : "select(" + value(e->args[0]) + " == 0, 1, 0)";
        case ExprKind::Binary: {
            const std::string &o = e->name;
            if (o == "&&" || o == "||") return "cast<" + vt_ + ">(" + truth(e->args[0]) + " " + o + " " + truth(e->args[1]) + ")";
            if (o == "/" && reciprocal(e->args[1])) {
                return "(" + value(e->args[0]) + " * (cast<" + vt_ + ">(1) / " + value(e->args[1]) + "))";
            }
            if (o == "+" || o == "-" || o == "*" || o == "/") return "(" + value(e->args[0]) + " " + o + " " + value(e->args[1]) + ")";
            return "cast<" + vt_ + ">(" + value(e->args[0]) + " " + o + " " + value(e->args[1]) + ")";
        }
        case ExprKind::Call: {
            const std::string &f = e->name;
            if (f == "select") return "select(" + truth(e->args[0]) + ", " + value(e->args[1]) + ", " + value(e->args[2]) + ")";
            if (f == "max" || f == "min") return f + "(" + value(e->args[0]) + ", " + value(e->args[1]) + ")";
            if (f == "f32") return "cast<" + vt_ + ">(cast<float>(" + value(e->args[0]) + "))";
            if (f == "f16") return "cast<" + vt_ + ">(cast<Halide::float16_t>(" + value(e->args[0]) + "))";
            if (f == "i32") return "cast<" + vt_ + ">(cast<int32_t>(" + value(e->args[0]) + "))";
            if (f == "i8") return "cast<" + vt_ + ">(saturating_cast<int8_t>(" + value(e->args[0]) + "))";
            if (f == "u8") return "cast<" + vt_ + ">(saturating_cast<uint8_t>(" + value(e->args[0]) + "))";
            if (f == "bf16") return "cast<" + vt_ + ">(cast<Halide::bfloat16_t>(" + value(e->args[0]) + "))";
            // round is the identity on integers, as lower_to_halide lowers it (never through float).
            if (f == "round" && vt_.find("int") != std::string::npos) return value(e->args[0]);
            if (f == "abs") return "cast<" + vt_ + ">(abs(" + value(e->args[0]) + "))";
            // Transcendental functions are float32 math, as in lower_to_halide: a statement of
            // another type converts the argument to float32 and the result back.
            std::string fn = fast_math_ && f == "exp" ? "fast_exp" : f;
            if (vt_ == "float") return fn + "(" + value(e->args[0]) + ")";
            return "cast<" + vt_ + ">(" + fn + "(cast<float>(" + value(e->args[0]) + ")))";
        }
        }
        return "0";
    }

    std::string index(const Expr &e) const {
        switch (e->kind) {
        case ExprKind::IntConst: return std::to_string(e->int_value);
        case ExprKind::Param: return std::to_string(shape_.values.at(e->name));
        case ExprKind::IndexVar: return identifier(e->name);
        case ExprKind::Unary: return "(-" + index(e->args[0]) + ")";
        case ExprKind::Binary: return "(" + index(e->args[0]) + " " + e->name + " " + index(e->args[1]) + ")";
        default: return "0";
        }
    }

private:
    const ComputeDef &def_;
    const BoundShape &shape_;
    std::string vt_;
    bool fast_math_ = false;
    std::map<std::string, std::string> renamed_;
    const Statement *statement_ = nullptr;

    std::string identifier(const std::string &var) const {
        auto it = renamed_.find(var);
        return it == renamed_.end() ? var : it->second;
    }

    // Whether a division by `divisor` is printed as a multiplication by its reciprocal, as
    // lower_to_halide lowers it under fast math: float types, divisors other than constants.
    bool reciprocal(const Expr &divisor) const {
        bool is_float = vt_ == "float" || vt_ == "Halide::float16_t";
        bool constant = divisor->kind == ExprKind::FloatConst || divisor->kind == ExprKind::IntConst ||
                        divisor->kind == ExprKind::Param;
        return fast_math_ && is_float && !constant;
    }

    std::string truth(const Expr &e) const {
        if (e->kind == ExprKind::Binary) {
            const std::string &o = e->name;
            if (o == "&&" || o == "||") return "(" + truth(e->args[0]) + " " + o + " " + truth(e->args[1]) + ")";
            if (o == "<" || o == "<=" || o == ">" || o == ">=" || o == "==" || o == "!=") {
                return "(" + value(e->args[0]) + " " + o + " " + value(e->args[1]) + ")";
            }
        }
        return "(" + value(e) + " != 0)";
    }

    std::string access(const Expr &e) const {
        const TensorDecl *t = def_.find_tensor(e->name);
        if (statement_) {
            if (auto dims = gather_dims(def_, *statement_, *e, shape_)) {
                std::string s = gathered_name(e->name) + "(";
                for (size_t i = dims->size(); i-- > 0;) s += ((*dims)[i].empty() ? "0" : identifier((*dims)[i])) + (i ? ", " : "");
                return s + ")";
            }
        }
        std::string s = read_func_name(*t) + "(";
        for (size_t i = e->args.size(); i-- > 0;) s += index(e->args[i]) + (i ? ", " : "");
        return s + ")";
    }
};

// Declares and defines the gathered Func of each strided read without a window of `s` (core/Gather.h):
// "Var X_g0(...), ...; Func X_gathered(...); X_gathered(X_g3, ..., X_g0) = X_padded(...)".
void print_gathers(std::ostream &out, const ComputeDef &def, const BoundShape &shape, const Statement &s) {
    std::set<std::string> printed;
    for (const ExprNode *e : accesses(s)) {
        std::optional<std::vector<std::string>> dims = gather_dims(def, s, *e, shape);
        if (!dims || !printed.insert(e->name).second) continue;
        std::map<std::string, std::string> renamed;
        for (const std::string &r : unit_reduction_vars(s, shape)) renamed[r] = "0";
        std::string vars, args;
        for (size_t d = dims->size(); d-- > 0;) {
            std::string v = gathered_var_name(e->name, dims->size() - 1 - d);
            if (!(*dims)[d].empty()) renamed[(*dims)[d]] = v;
            vars += (vars.empty() ? "" : ", ") + v + "(\"" + v + "\")";
            args += (args.empty() ? "" : ", ") + v;
        }
        Printer p(def, shape, "float", false, renamed);
        std::string at;
        for (size_t i = e->args.size(); i-- > 0;) at += p.index(e->args[i]) + (i ? ", " : "");
        const std::string g = gathered_name(e->name);
        out << "        Var " << vars << ";\n";
        out << "        Func " << g << "(\"" << g << "\");\n";
        out << "        " << g << "(" << args << ") = " << read_func_name(*def.find_tensor(e->name)) << "(" << at << ");\n";
    }
}

std::string var_list(const std::vector<std::string> &outer_first) {
    std::string s;
    for (size_t i = outer_first.size(); i-- > 0;) s += outer_first[i] + (i ? ", " : "");
    return s;
}

}  // namespace

std::string halide_algorithm_source(const ComputeDef &def, const BoundShape &shape, bool fast_math) {
    std::ostringstream out;
    // Index variables, declared once.
    std::vector<std::string> vars;
    for (const auto &s : def.statements) {
        for (const auto &v : s.vars) {
            if (std::find(vars.begin(), vars.end(), v) == vars.end()) vars.push_back(v);
        }
    }
    out << "        Var ";
    for (size_t i = 0; i < vars.size(); i++) out << (i ? ", " : "") << vars[i] << "(\"" << vars[i] << "\")";
    out << ";\n";
    for (const TensorDecl *t : def.inputs()) {
        const auto &d = shape.dims.at(t->name);
        int64_t stride = 1;
        for (size_t k = 0; k < d.size(); k++) {
            int64_t extent = d[d.size() - 1 - k];
            out << "        " << t->name << ".dim(" << k << ").set_bounds(0, " << extent << ").set_stride(" << stride << ");\n";
            stride *= extent;
        }
        if (t->zero_pad) {
            out << "        Func " << read_func_name(*t) << " = BoundaryConditions::constant_exterior(" << t->name << ", cast<"
                << ctype(t->dtype) << ">(0));\n";
        }
    }
    for (const auto &s : def.statements) {
        const TensorDecl *t = def.find_tensor(s.tensor);
        std::string vt = ctype(t->dtype);
        std::map<std::string, std::string> renamed;
        for (const ReduceVar &r : s.reduce_vars) renamed[r.name] = printed_rvar(def, s, r.name);
        Printer p(def, shape, vt, fast_math, renamed, &s);
        std::string lhs = var_list(s.vars);
        bool is_output = t->role == TensorRole::Output;
        std::string func = s.tensor;
        if (!is_output) out << "        Func " << func << "(\"" << func << "\");\n";
        if (s.reduce == ReduceKind::None) {
            out << "        " << func << "(" << lhs << ") = " << p.value(s.body) << ";\n";
            continue;
        }
        print_gathers(out, def, shape, s);
        std::string rdom = s.tensor + "_r";
        out << "        RDom " << rdom << "(";
        for (size_t i = s.reduce_vars.size(); i-- > 0;) {
            out << "0, " << shape.eval(s.reduce_vars[i].extent) << ", ";
        }
        out << "\"" << rdom << "\");\n";
        for (size_t i = 0; i < s.reduce_vars.size(); i++) {
            out << "        RVar " << renamed.at(s.reduce_vars[s.reduce_vars.size() - 1 - i].name) << " = " << rdom << "[" << i
                << "];\n";
        }
        std::string acc = s.tensor + "_acc";
        out << "        Func " << acc << "(\"" << acc << "\");\n";
        std::string body = p.value(s.body);
        switch (s.reduce) {
        case ReduceKind::Sum:
            out << "        " << acc << "(" << lhs << ") = cast<" << vt << ">(0);\n";
            out << "        " << acc << "(" << lhs << ") += " << body << ";\n";
            break;
        case ReduceKind::Max:
        case ReduceKind::Min: {
            bool mx = s.reduce == ReduceKind::Max;
            out << "        " << acc << "(" << lhs << ") = " << (mx ? "Float(32).min()" : "Float(32).max()") << ";\n";
            if (vt != "float") out << "        // note: the initial value assumes f32\n";
            out << "        " << acc << "(" << lhs << ") = " << (mx ? "max(" : "min(") << acc << "(" << lhs << "), " << body << ");\n";
            break;
        }
        case ReduceKind::None: break;
        }
        out << "        " << func << "(" << lhs << ") = " << acc << "(" << lhs << ");\n";
    }
    return out.str();
}

std::string generator_source(const ComputeDef &def, const BoundShape &shape, const std::optional<SchedulePoint> &point,
                             const Target &target, const std::string &name) {
    LoweredOp op = lower_for_point(def, shape, point ? &*point : nullptr);
    AppliedSchedule sched = point ? apply_schedule(op, *point, target) : apply_default_schedule(op, target);
    std::string cls;
    bool up = true;
    for (char c : name) {
        if (c == '_') {
            up = true;
            continue;
        }
        cls += up ? char(std::toupper(static_cast<unsigned char>(c))) : c;
        up = false;
    }
    cls += "Generator";
    std::ostringstream out;
    out << "// Generated by opgen: op '" << def.name << "' at " << shape.canonical << " for target " << target.name << ".\n";
    out << "// Rebuild with Halide 14: compile with GenGen.cpp and run the generator (-g " << name << ").\n";
    out << "#include \"Halide.h\"\n\nusing namespace Halide;\n\n";
    out << "class " << cls << " : public Generator<" << cls << "> {\npublic:\n";
    for (const TensorDecl *t : def.inputs()) {
        out << "    Input<Buffer<" << ctype(t->dtype) << ">> " << t->name << "{\"" << t->name << "\", " << t->dims.size() << "};\n";
    }
    const TensorDecl &o = def.output();
    out << "    Output<Buffer<" << ctype(o.dtype) << ">> " << o.name << "{\"" << o.name << "\", " << o.dims.size() << "};\n\n";
    out << "    void generate() {\n        // The algorithm (from " << fs::path(def.filename).filename().string() << ")\n";
    out << halide_algorithm_source(def, shape, point && point->fast_math);
    out << "\n        // The schedule" << (point ? " (" + point->summary() + ")" : "") << "\n";
    for (const auto &l : sched.lines) out << "        " << l << "\n";
    out << "    }\n};\n\nHALIDE_REGISTER_GENERATOR(" << cls << ", " << name << ")\n";
    return out.str();
}

namespace {

bool is_c_identifier(const std::string &name) {
    return !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) &&
           std::all_of(name.begin(), name.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// Runs `write(base)` with `base` a path prefix in a private folder inside `out_dir`, then moves
// <name><suffix> for each of `suffixes` into `out_dir`: a failure leaves no half-written file.
std::vector<std::string> write_into(const std::string &out_dir, const std::string &name,
                                    const std::vector<std::string> &suffixes,
                                    const std::function<void(const std::string &base)> &write) {
    user_check(is_c_identifier(name)) << "kernel name '" << name << "' must be a C identifier";
    std::error_code ec;
    fs::create_directories(out_dir, ec);
    user_check(!ec && fs::is_directory(out_dir)) << "cannot create output folder '" << out_dir << "': " << ec.message();
    fs::path tmp = fs::path(out_dir) / (".opgen-emit-" + name + "-" + std::to_string(::getpid()));
    fs::remove_all(tmp, ec);
    fs::create_directories(tmp, ec);
    user_check(!ec) << "cannot write into '" << out_dir << "': " << ec.message();
    std::vector<std::string> written;
    try {
        write((tmp / name).string());
        for (const std::string &suffix : suffixes) {
            fs::path from = tmp / (name + suffix), to = fs::path(out_dir) / (name + suffix);
            fs::rename(from, to);
            written.push_back(to.string());
        }
        fs::remove_all(tmp, ec);
    } catch (...) {
        fs::remove_all(tmp, ec);
        throw;
    }
    return written;
}

std::vector<Halide::Argument> arguments_of(const LoweredOp &op) {
    std::vector<Halide::Argument> args;
    for (const auto &param : op.params) args.emplace_back(param);
    return args;
}

// Halide 14's C backend has no AMX tile intrinsics (tile_zero, tile_matmul: an internal error),
// so the C source of an AMX point (core/AmxTile.h) is that of the same tiling on vpdpbusd, which
// its first line says.
void write_c_without_amx(const ComputeDef &def, const BoundShape &shape, SchedulePoint point, const Target &target,
                         const std::string &path, const std::string &name) {
    point.amx_tile = false;
    LoweredOp op = lower_for_point(def, shape, &point);
    apply_schedule(op, point, target);
    Halide::Pipeline(op.output).compile_to_c(path, arguments_of(op), name,
                                             halide_target_of(target, def).with_feature(Halide::Target::NoRuntime));
    std::ifstream in(path);
    std::stringstream c;
    c << "/* The schedule's AMX tiles are left out here: Halide 14's C backend has no tile intrinsics; "
         "the library and the .stmt have them. */\n"
      << in.rdbuf();
    in.close();
    std::ofstream(path) << c.str();
}

}  // namespace

std::vector<std::string> emit_kernel(const ComputeDef &def, const BoundShape &shape, const std::optional<SchedulePoint> &point,
                                     const Target &target, const std::string &out_dir, const std::string &name) {
    return write_into(out_dir, name, {"_generator.cpp", ".a", ".h", ".c", ".stmt"}, [&](const std::string &base) {
        {
            std::ofstream g(base + "_generator.cpp");
            g << generator_source(def, shape, point, target, name);
            user_check(g.good()) << "cannot write into '" << out_dir << "'";
        }
        LoweredOp op = lower_for_point(def, shape, point ? &*point : nullptr);
        if (point) {
            apply_schedule(op, *point, target);
        } else {
            apply_default_schedule(op, target);
        }
        Halide::Pipeline p(op.output);
        add_amx_lowering(p, op);
        std::vector<Halide::Argument> args = arguments_of(op);
        Halide::Target ht = halide_target_of(target, def);
        if (needs_fp16_override(ht)) {
            compile_static_library_without_fp16(p, args, name, ht, base);
        } else {
            p.compile_to_static_library(base, args, name, ht);
        }
        if (op.amx_tile) {
            write_c_without_amx(def, shape, *point, target, base + ".c", name);
        } else {
            p.compile_to_c(base + ".c", args, name, ht.with_feature(Halide::Target::NoRuntime));
        }
        p.compile_to_lowered_stmt(base + ".stmt", args, Halide::Text, ht);
    });
}

std::vector<std::string> emit_generic_inspection(const ComputeDef &def, const BoundShape &shape,
                                                 const SchedulePoint &point, const Target &target,
                                                 const std::string &out_dir, const std::string &name) {
    user_check(!generic_symbols(def).empty())
        << "op '" << def.name << "' has no parameter without a default to leave symbolic";
    return write_into(out_dir, name, {"_generic.stmt", "_generic.s", ".s"}, [&](const std::string &base) {
        Halide::Target ht = halide_target_of(target, def).with_feature(Halide::Target::NoRuntime);
        // The kernel that ships: checked_generic's choice of accumulator tiles (GenericCode.h).
        std::string checked;
        LoweredOp generic = checked_generic(def, shape, point, target, checked);
        Halide::Pipeline g(generic.output);
        g.compile_to_lowered_stmt(base + "_generic.stmt", arguments_of(generic), Halide::Text, ht);
        g.compile_to_assembly(base + "_generic.s", arguments_of(generic), name, ht);
        LoweredOp exact = lower_for_point(def, shape, &point);
        apply_schedule(exact, point, target);
        Halide::Pipeline e(exact.output);
        add_amx_lowering(e, exact);
        e.compile_to_assembly(base + ".s", arguments_of(exact), name, ht);
    });
}

}  // namespace opgen
