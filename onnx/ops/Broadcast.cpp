#include "onnx/ops/Broadcast.h"

#include "onnx/OpText.h"

#include <cctype>

namespace opgen::onnx_import {

namespace {

std::string operand_name(size_t i) {
    return i == 0 ? "A" : i == 1 ? "B" : "X" + std::to_string(i);
}

// floor(x) with the op language's truncating cast: floats of magnitude 2^23 or more are integers
// already (and would overflow i32).
std::string floor_of(const std::string &x) {
    return "select(abs(" + x + ") >= 8388608.0, " + x + ", select(i32(" + x + ") > " + x +
           ", i32(" + x + ") - 1.0, i32(" + x + ")))";
}

std::string ceil_of(const std::string &x) {
    return "select(abs(" + x + ") >= 8388608.0, " + x + ", select(i32(" + x + ") < " + x +
           ", i32(" + x + ") + 1.0, i32(" + x + ")))";
}

// Round half to even, as ONNX's Round.
std::string round_of(const std::string &x) {
    const std::string f = floor_of(x), half = "(" + x + ") - (" + f + ")";
    const std::string odd = "(" + f + ") - 2.0 * " + floor_of("(" + f + ") * 0.5");
    return "select(" + half + " > 0.5, " + f + " + 1.0, select(" + half + " < 0.5, " + f + ", " +
           f + " + " + odd + "))";
}

// a^b for a tensor exponent: |a|^b as exp(b log |a|), negated for a negative base and an odd
// integer exponent; 0^b is 1 for b = 0, else 0 (b > 0); a negative base with a fractional
// exponent is NaN, as ONNX has it (the square root of a negative value computed at run time: a
// constant NaN would be folded away).
std::string power_of(const std::string &a, const std::string &b) {
    const std::string odd = "(" + b + ") - 2.0 * " + floor_of("(" + b + ") * 0.5") + " != 0.0";
    const std::string fractional = "(" + b + ") != " + floor_of(b);
    return "select(" + a + " == 0.0, select(" + b + " == 0.0, 1.0, 0.0), select(" + a + " < 0.0 && " +
           fractional + ", sqrt(-1.0 - abs(" + a + ")), select(" + a + " < 0.0 && " + odd + ", -1.0, 1.0) * exp(" + b +
           " * log(abs(" + a + ")))))";
}

// A chain of a two-argument function over every read: max(max(A, B), X2).
std::string fold(const std::string &fn, const std::vector<std::string> &reads) {
    std::string e = reads[0];
    for (size_t i = 1; i < reads.size(); i++)
        e = fn + "(" + e + ", " + reads[i] + ")";
    return e;
}

std::vector<std::string> present_inputs(const GraphNode &n) {
    std::vector<std::string> out;
    for (const std::string &t : n.inputs)
        if (!t.empty())
            out.push_back(t);
    return out;
}

SubgraphKernel clip(const ModelGraph &g, const GraphNode &n) {
    std::vector<std::string> inputs = {n.inputs[0]};
    bool lo = n.inputs.size() > 1 && !n.inputs[1].empty(),
         hi = n.inputs.size() > 2 && !n.inputs[2].empty();
    if (lo)
        inputs.push_back(n.inputs[1]);
    if (hi)
        inputs.push_back(n.inputs[2]);
    const std::string base = std::string("clip") + (lo ? "_lo" : "") + (hi ? "_hi" : "");
    return broadcast_kernel(g, inputs, n.outputs[0], base, "Clip",
                            [lo, hi](const std::vector<std::string> &r) {
                                std::string e = r[0];
                                if (lo)
                                    e = "max(" + e + ", " + r[1] + ")";
                                if (hi)
                                    e = "min(" + e + ", " + r[lo ? 2 : 1] + ")";
                                return e;
                            });
}

// An operator as the op language writes it, and the base of its generated op's name.
struct Spelling {
    std::string op, name;
};

// ONNX's comparisons: a bool result (u8 0 or 1), the operands compared in their own type
// (core/ComputeDef.h comparison_type).
const std::map<std::string, Spelling> &comparisons() {
    static const std::map<std::string, Spelling> c = {{"Equal", {"==", "compare_eq"}},
                                                      {"Less", {"<", "compare_lt"}},
                                                      {"Greater", {">", "compare_gt"}},
                                                      {"LessOrEqual", {"<=", "compare_le"}},
                                                      {"GreaterOrEqual", {">=", "compare_ge"}}};
    return c;
}

// The logical operators on bools, as conditions of their operands.
const std::map<std::string, std::string> &logic() {
    static const std::map<std::string, std::string> l = {{"And", "&&"}, {"Or", "||"}, {"Xor", "!="}};
    return l;
}

// Arithmetic that integer tensors compute in their own type (every operation of the statement is
// in the output's type: core/Lower.cpp): an infix operator, or a function (integer_expression).
const std::map<std::string, Spelling> &integer_arithmetic() {
    static const std::map<std::string, Spelling> a = {
        {"Add", {"+", "add"}},   {"Sub", {"-", "sub"}},   {"Mul", {"*", "mul"}},
        {"Div", {"/", "div"}},   {"Max", {"max", "max"}}, {"Min", {"min", "min"}},
        {"Neg", {"neg", "neg"}}, {"Abs", {"abs", "abs"}}, {"Relu", {"relu", "relu"}}};
    return a;
}

std::string integer_expression(const std::string &op, const std::vector<std::string> &r) {
    if (op == "neg") return "-" + r[0];
    if (op == "abs") return "abs(" + r[0] + ")";
    if (op == "relu") return "max(" + r[0] + ", 0)";
    if (op == "max" || op == "min") return fold(op, r);
    if (op == "/") {
        // C's (and ONNX Runtime's) division truncates toward zero; Halide's is Euclidean (the
        // remainder never negative): one step toward zero for a negative dividend that leaves one.
        const std::string q = "(" + r[0] + " / " + r[1] + ")";
        const std::string rem = "(" + r[0] + " - " + r[1] + " * " + q + ")";
        return "select(" + r[0] + " < 0 && " + rem + " != 0, " + q + " + select(" + r[1] + " < 0, -1, 1), " + q + ")";
    }
    return r[0] + " " + op + " " + r[1];
}

// a mod b for integers, Halide's division being Euclidean (a remainder r with 0 <= r < |b|): the
// divisor's sign (ONNX's fmod 0, as Python) or the dividend's (fmod 1, as C).
std::string integer_mod(const std::vector<std::string> &r, bool c_sign) {
    const std::string rem = "(" + r[0] + " - " + r[1] + " * (" + r[0] + " / " + r[1] + "))";
    if (c_sign) return "select(" + rem + " != 0 && " + r[0] + " < 0, " + rem + " - abs(" + r[1] + "), " + rem + ")";
    return "select(" + rem + " != 0 && " + r[1] + " < 0, " + rem + " + " + r[1] + ", " + rem + ")";
}

// A node whose element types decide its kernel: comparisons, logic, Where, Cast between types,
// and arithmetic on integers; empty when `n` is none of them.
std::vector<SubgraphKernel> typed_kernels(const ModelGraph &g, const GraphNode &n,
                                          const std::vector<std::string> &inputs) {
    const std::string &t = n.op_type, &y = n.outputs[0];
    if (comparisons().count(t)) {
        const Spelling &c = comparisons().at(t);
        return {broadcast_kernel(g, inputs, y, c.name, t,
                                 [op = c.op](const std::vector<std::string> &r) {
                                     return "select(" + r[0] + " " + op + " " + r[1] + ", 1, 0)";
                                 })};
    }
    if (logic().count(t)) {
        const std::string op = logic().at(t);
        std::string base = t;
        for (auto &c : base) c = char(std::tolower(c));
        return {broadcast_kernel(g, inputs, y, "logical_" + base, t, [op](const std::vector<std::string> &r) {
            return "select((" + r[0] + " != 0) " + op + " (" + r[1] + " != 0), 1, 0)";
        })};
    }
    if (t == "Not")
        return {broadcast_kernel(g, inputs, y, "logical_not", t, [](const std::vector<std::string> &r) {
            return "select(" + r[0] + " == 0, 1, 0)";
        })};
    if (t == "Where")
        return {broadcast_kernel(g, inputs, y, "where", t, [](const std::vector<std::string> &r) {
            return "select(" + r[0] + " != 0, " + r[1] + ", " + r[2] + ")";
        })};
    if (t == "Cast" || t == "CastLike") {
        // Conversions as C's (and ONNX Runtime's): float to integer truncates toward zero,
        // integers wrap; to bool, any non-zero value is true.
        const bool to_bool = g.tensor(y).is_bool();
        return {broadcast_kernel(g, {inputs[0]}, y, "cast", t, [to_bool](const std::vector<std::string> &r) {
            return to_bool ? "select(" + r[0] + " != 0, 1, 0)" : r[0];
        })};
    }
    if (t == "Mod" && !all_float(g, {inputs[0], inputs[1], y})) {
        const bool c_sign = n.int_attr("fmod", 0) == 1;
        return {broadcast_kernel(g, inputs, y, c_sign ? "imod_c" : "imod", t,
                                 [c_sign](const std::vector<std::string> &r) { return integer_mod(r, c_sign); })};
    }
    if (t == "Pow" && g.tensor(inputs[0]).elem_type != 1) {
        // An integer base: the power in float32, rounded to the nearest integer in float32, then
        // converted (every value of a statement is in its output's type).
        const BroadcastStage power{"P", "f32", [](const std::vector<std::string> &r) { return power_of(r[0], r[1]); }};
        const BroadcastStage rounded{"R", "f32", [](const std::vector<std::string> &r) { return floor_of(r[2] + " + 0.5"); }};
        return {broadcast_kernel(
            g, inputs, y, "pow", t, [](const std::vector<std::string> &r) { return r[3]; }, {}, {power, rounded})};
    }
    std::vector<std::string> tensors = inputs;
    tensors.push_back(y);
    if (integer_arithmetic().count(t) && !all_float(g, tensors)) {
        const Spelling &a = integer_arithmetic().at(t);
        return {broadcast_kernel(g, inputs, y, a.name, t,
                                 [op = a.op](const std::vector<std::string> &r) { return integer_expression(op, r); })};
    }
    return {};
}

} // namespace

SubgraphKernel broadcast_kernel(const ModelGraph &g, const std::vector<std::string> &inputs,
                                const std::string &output, const std::string &base,
                                const std::string &what, const Combine &combine,
                                const std::map<std::string, Dims> &read_as,
                                const std::vector<BroadcastStage> &stages) {
    Dims d = g.tensor(output).dims;
    if (d.empty())
        d = {1}; // a scalar result: one element
    const size_t r = d.size();
    const AxisNames a = axis_names(d);
    std::vector<std::string> typed = inputs;
    typed.push_back(output);
    std::string name = base + type_suffix(g, typed) + "_b", decls;
    std::vector<std::string> reads;
    std::vector<std::pair<std::string, std::string>> args;
    for (size_t i = 0; i < inputs.size(); i++) {
        const Dims &dt =
            read_as.count(inputs[i]) ? read_as.at(inputs[i]) : g.tensor(inputs[i]).dims;
        if (dt.size() > r)
            throw Unsupported{"an operand of higher rank than the result"};
        const size_t offset = r - dt.size();
        std::string pattern(r, '1');
        std::vector<std::string> index, shape;
        for (size_t j = 0; j < dt.size(); j++) {
            const size_t axis = offset + j;
            const bool own = dt[j] == d[axis];
            if (!own && dt[j] != 1)
                throw Unsupported{"operand extents that do not broadcast"};
            if (own)
                pattern[axis] = 'f';
            index.push_back(own ? a.vars[axis] : "0");
            shape.push_back(own ? a.dims[axis] : "1");
        }
        if (dt.empty())
            index = {"0"}, shape = {"1"}, pattern = "s";
        const std::string operand = operand_name(i);
        name += (i ? "_" : "") + pattern;
        reads.push_back(operand + "[" + join(index, ", ") + "]");
        decls += "input  " + operand + ": " + type_name(g, inputs[i]) + "[" + join(shape, ", ") + "]\n";
        args.push_back({operand, inputs[i]});
    }
    args.push_back({"C", output});
    const std::string params = join(a.dims, ", "), at = "[" + join(a.vars, ", ") + "]";
    std::string locals, statements;
    for (const BroadcastStage &s : stages) {
        locals += "local  " + s.name + ": " + s.type + "[" + params + "]\n";
        statements += s.name + at + " = " + s.combine(reads) + "\n";
        reads.push_back(s.name + at);
    }
    const std::string expr = combine(reads);
    std::string text = std::string(kGeneratedHeader) + "# Elementwise " + what +
                       " with numpy broadcasting over " + std::to_string(r) + " axes: C = " + expr +
                       ".\n";
    text += "op " + name + "\nparam " + params + "\n" + decls + locals + "output C: " + type_name(g, output) + "[" + params + "]\n";
    text += statements + "C" + at + " = " + expr + "\n";
    SubgraphKernel k = generated_kernel("elementwise", name, text, shape_text(a.shape), args);
    k.pointwise = true;
    return k;
}

bool is_broadcast(const ModelGraph &g, const GraphNode &n) {
    const std::string &t = n.op_type;
    if (t == "Sum" || t == "Mean" || t == "PRelu" || t == "Mod" || t == "Floor" || t == "Ceil" ||
        t == "Round" || t == "Sign")
        return true;
    if (comparisons().count(t) || logic().count(t) || t == "Not" || t == "Where") return true;
    if ((t == "Cast" || t == "CastLike") && g.tensor(n.inputs[0]).elem_type != g.tensor(n.outputs[0]).elem_type)
        return true;
    std::vector<std::string> tensors = n.inputs;
    tensors.insert(tensors.end(), n.outputs.begin(), n.outputs.end());
    if (integer_arithmetic().count(t) && !all_float(g, tensors)) return true;
    if (t == "Max" || t == "Min")
        return n.inputs.size() != 2;
    auto computed = [&](size_t i) {
        return n.inputs.size() > i && !n.inputs[i].empty() && !g.is_weight(n.inputs[i]);
    };
    if (t == "Pow")
        return computed(1);
    if (t == "Clip")
        return computed(1) || computed(2);
    return false;
}

std::vector<SubgraphKernel> broadcast_kernels(const ModelGraph &g, const GraphNode &n) {
    const std::string &t = n.op_type;
    const std::vector<std::string> inputs = present_inputs(n);
    const std::string &y = n.outputs[0];
    if (std::vector<SubgraphKernel> k = typed_kernels(g, n, inputs); !k.empty())
        return k;
    // Float formulas; Pow's exponent may be an integer tensor, read as float32.
    for (size_t i = 0; i < inputs.size(); i++)
        if (t != "Pow" || i == 0) require_float(g, inputs[i]);
    require_float(g, y);
    if (t == "Clip")
        return {clip(g, n)};
    if (t == "Sum" || t == "Mean") {
        const std::string count = literal(double(inputs.size()));
        const bool mean = t == "Mean";
        return {broadcast_kernel(g, inputs, y, mean ? "mean" : "sum", t,
                                 [mean, count](const std::vector<std::string> &r) {
                                     return mean ? "(" + join(r, " + ") + ") / " + count
                                                 : join(r, " + ");
                                 })};
    }
    if (t == "Max" || t == "Min") {
        const std::string fn = t == "Max" ? "max" : "min";
        return {broadcast_kernel(g, inputs, y, fn, t,
                                 [fn](const std::vector<std::string> &r) { return fold(fn, r); })};
    }
    if (t == "PRelu") {
        // Before opset 7 a slope of one value per channel applies along axis 1.
        std::map<std::string, Dims> read_as;
        const Dims &xd = g.tensor(inputs[0]).dims, &sd = g.tensor(inputs[1]).dims;
        if (g.opset < 7 && sd.size() == 1 && xd.size() > 2 && sd[0] == xd[1] &&
            sd[0] != xd.back()) {
            Dims channel(xd.size() - 1, 1);
            channel[0] = sd[0];
            read_as[inputs[1]] = channel;
        }
        return {broadcast_kernel(
            g, inputs, y, "prelu", t,
            [](const std::vector<std::string> &r) {
                return "select(" + r[0] + " < 0.0, " + r[1] + " * " + r[0] + ", " + r[0] + ")";
            },
            read_as)};
    }
    if (t == "Pow")
        return {broadcast_kernel(g, inputs, y, "pow", t, [](const std::vector<std::string> &r) {
            return power_of(r[0], r[1]);
        })};
    if (t == "Mod") {
        if (n.int_attr("fmod", 0) != 1)
            throw Unsupported{"float modulus without fmod 1"};
        return {broadcast_kernel(g, inputs, y, "fmod", t, [](const std::vector<std::string> &r) {
            return r[0] + " - " + r[1] + " * i32(" + r[0] + " / " + r[1] + ")";
        })};
    }
    static const std::map<std::string, std::string (*)(const std::string &)> unary = {
        {"Floor", floor_of},
        {"Ceil", ceil_of},
        {"Round", round_of},
        {"Sign", [](const std::string &x) {
             return "select(" + x + " > 0.0, 1.0, select(" + x + " < 0.0, -1.0, 0.0))";
         }}};
    auto fn = unary.at(t);
    std::string base = t;
    for (auto &c : base)
        c = char(std::tolower(c));
    return {broadcast_kernel(g, inputs, y, base, t,
                             [fn](const std::vector<std::string> &r) { return fn(r[0]); })};
}

} // namespace opgen::onnx_import
