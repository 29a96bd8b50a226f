#include "onnx/ops/Reduce.h"

#include "onnx/OpText.h"

#include <map>

namespace opgen::onnx_import {

namespace {

const std::map<std::string, std::string> &kinds() {
    static const std::map<std::string, std::string> k = {
        {"ReduceSum", "sum"},        {"ReduceMean", "mean"},
        {"ReduceMax", "max"},        {"ReduceProd", "prod"},
        {"ReduceMin", "min"},        {"ReduceSumSquare", "sum_square"},
        {"ReduceL1", "l1"},          {"ReduceL2", "l2"},
        {"ReduceLogSum", "log_sum"}, {"ReduceLogSumExp", "log_sum_exp"}};
    return k;
}

// The reduced axes: the attribute, or the input of opset 13's ReduceSum (18's others); none means
// every axis unless noop_with_empty_axes.
std::vector<bool> reduced_axes(const ModelGraph &g, const GraphNode &n, int64_t r) {
    std::vector<int64_t> axes = n.ints_attr("axes", {});
    if (n.inputs.size() > 1 && !n.inputs[1].empty())
        for (double v : constant_values(g, n.inputs[1], "axes"))
            axes.push_back(int64_t(v));
    if (axes.empty()) {
        if (n.int_attr("noop_with_empty_axes", 0) != 0)
            throw Unsupported{"a reduction over no axis"};
        for (int64_t i = 0; i < r; i++)
            axes.push_back(i);
    }
    std::vector<bool> reduced(size_t(r), false);
    for (int64_t a : axes)
        reduced[size_t(normalize_axis(a, r))] = true;
    return reduced;
}

} // namespace

bool reduces_nothing(const ModelGraph &g, const GraphNode &n) {
    if (n.int_attr("noop_with_empty_axes", 0) == 0 || !n.ints_attr("axes", {}).empty()) return false;
    const bool axes_input = n.inputs.size() > 1 && !n.inputs[1].empty();
    return !axes_input || (g.is_weight(n.inputs[1]) && g.tensor(n.inputs[1]).elements() == 0);
}

bool is_reduction(const std::string &op_type) {
    return kinds().count(op_type) != 0;
}

SubgraphKernel reduce_kernel(const ModelGraph &g, const GraphNode &n) {
    const std::string kind = kinds().at(n.op_type);
    const std::string &x = n.inputs[0];
    require_float(g, x);
    const Dims &d = g.tensor(x).dims;
    const int64_t r = int64_t(d.size());
    const std::vector<bool> reduced = reduced_axes(g, n, r);
    const bool keep = n.int_attr("keepdims", 1) != 0;
    std::string pattern;
    std::vector<std::string> params, out_dims, out_vars, reducers, index, count;
    std::vector<std::pair<std::string, int64_t>> values;
    for (int64_t i = 0; i < r; i++) {
        const std::string D = "D" + std::to_string(i), at = std::to_string(i);
        const bool red = reduced[size_t(i)];
        pattern += red ? 'r' : 'k';
        params.push_back(D);
        values.push_back({D, d[size_t(i)]});
        index.push_back((red ? "r" : "i") + at);
        if (red)
            reducers.push_back("r" + at + ": " + D), count.push_back(D);
        if (!red || keep)
            out_dims.push_back(red ? "1" : D), out_vars.push_back((red ? "o" : "i") + at);
    }
    if (out_dims.empty())
        out_dims = {"1"}, out_vars = {"o"}; // a scalar result: one element
    const std::string name = "reduce_" + kind + "_" + pattern + (keep ? "_keep" : "");
    const std::string read = "X[" + join(index, ", ") + "]",
                      over = "(" + join(reducers, ", ") + ") ";
    const std::string ydims = join(out_dims, ", "), y = "[" + join(out_vars, ", ") + "]";
    std::string text = std::string(kGeneratedHeader) + "# " + n.op_type +
                       " of X over the axes marked r in " + pattern +
                       (keep ? ", kept as extent 1" : "") + ".\n";
    text += "op " + name + "\nparam " + join(params, ", ") + "\ninput  X: f32[" +
            join(params, ", ") + "]\n";
    if (kind == "l2" || kind == "log_sum") {
        const std::string body = kind == "l2" ? read + " * " + read : read;
        text += "local  S: f32[" + ydims + "]\noutput Y: f32[" + ydims + "]\n";
        text += "S" + y + " = sum" + over + body + "\n";
        text += "Y" + y + " = " + (kind == "l2" ? "sqrt" : "log") + "(S" + y + ")\n";
    } else if (kind == "log_sum_exp") {
        // Shifted by the largest value, so that exp does not overflow.
        text += "local  M: f32[" + ydims + "]\nlocal  S: f32[" + ydims + "]\noutput Y: f32[" +
                ydims + "]\n";
        text += "M" + y + " = max" + over + read + "\n";
        text += "S" + y + " = sum" + over + "exp(" + read + " - M" + y + ")\n";
        text += "Y" + y + " = log(S" + y + ") + M" + y + "\n";
    } else if (kind == "prod") {
        // The op language reduces by sum, max and min: a product is exp(sum log |x|), negated for
        // an odd count of negative factors, 0 where a factor is 0.
        text += "local  Z: f32[" + ydims + "]\nlocal  Q: f32[" + ydims + "]\nlocal  L: f32[" +
                ydims + "]\n";
        text += "output Y: f32[" + ydims + "]\n";
        text += "Z" + y + " = sum" + over + "select(" + read + " == 0.0, 1.0, 0.0)\n";
        text += "Q" + y + " = sum" + over + "select(" + read + " < 0.0, 1.0, 0.0)\n";
        text += "L" + y + " = sum" + over + "log(abs(select(" + read + " == 0.0, 1.0, " + read +
                ")))\n";
        text += "Y" + y + " = select(Z" + y + " > 0.0, 0.0, (1.0 - 2.0 * (Q" + y +
                " - 2.0 * i32(Q" + y + " * 0.5))) * exp(L" + y + "))\n";
    } else {
        const std::string op = kind == "max" || kind == "min" ? kind : "sum";
        const std::string body = kind == "mean"         ? read + " / (" + join(count, " * ") + ")"
                                 : kind == "sum_square" ? read + " * " + read
                                 : kind == "l1"         ? "abs(" + read + ")"
                                                        : read;
        text += "output Y: f32[" + ydims + "]\n";
        text += "Y" + y + " = " + op + over + body + "\n";
    }
    return generated_kernel("reduce", name, text, shape_text(values),
                            {{"X", x}, {"Y", n.outputs[0]}});
}

} // namespace opgen::onnx_import
