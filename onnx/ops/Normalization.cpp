#include "onnx/ops/Normalization.h"

#include "onnx/OpText.h"

namespace opgen::onnx_import {

namespace {

// An epsilon as a name part: 1e-05 -> 1em05.
std::string eps_suffix(const std::string &e) {
    std::string s = e;
    for (auto &ch : s)
        ch = ch == '-' ? 'm' : ch == '.' || ch == '+' ? 'p' : ch;
    return s;
}

// The input viewed as [A, K, B] around the normalized extent K.
struct AroundAxis {
    int64_t a = 1, k = 1, b = 1;
};

// Softmax, LogSoftmax and Hardmax: before opset 13 over the input coerced to 2-D at `axis`
// (default 1: every axis from it on), from 13 over the one axis (default -1).
AroundAxis softmax_axes(const ModelGraph &g, const GraphNode &n) {
    const Dims &d = g.tensor(n.inputs[0]).dims;
    const int64_t r = int64_t(d.size());
    if (r == 0)
        throw Unsupported{"a scalar"};
    const bool coerced = g.opset < 13;
    const size_t axis = size_t(normalize_axis(n.int_attr("axis", coerced ? 1 : -1), r));
    if (coerced)
        return {product(d, 0, axis), product(d, axis, d.size()), 1};
    return {product(d, 0, axis), d[axis], product(d, axis + 1, d.size())};
}

SubgraphKernel softmax_family(const ModelGraph &g, const GraphNode &n) {
    require_float(g, n.inputs[0]);
    const AroundAxis s = softmax_axes(g, n);
    if (n.op_type == "Softmax" && s.b == 1) {
        SubgraphKernel k;
        k.kind = "softmax";
        k.op = "softmax";
        k.shape = shape_text({{"M", s.a}, {"N", s.k}});
        k.args = {{"X", n.inputs[0]}, {"Y", n.outputs[0]}};
        return k;
    }
    const std::string shape = shape_text({{"A", s.a}, {"K", s.k}, {"B", s.b}});
    const std::string x = "X[a, k, b]";
    std::string text = kGeneratedHeader;
    std::string name, body;
    if (n.op_type == "Hardmax") {
        name = "hardmax_akb";
        text += "# Hardmax over the middle axis of X [A, K, B]: 1 at the first largest value, else "
                "0.\n";
        body = "first[a, b] = min(k: K) select(" + x +
               " == xmax[a, b], k, K)\n"
               "Y[a, k, b] = select(k == first[a, b], 1.0, 0.0)\n";
    } else {
        const bool log = n.op_type == "LogSoftmax";
        name = log ? "log_softmax_akb" : "softmax_akb";
        text += std::string("# ") + (log ? "Log-softmax" : "Softmax") +
                " over the middle axis of X [A, K, B], shifted by the largest value.\n";
        body = "total[a, b] = sum(k: K) exp(" + x + " - xmax[a, b])\n";
        body += log ? "Y[a, k, b] = " + x + " - xmax[a, b] - log(total[a, b])\n"
                    : "Y[a, k, b] = exp(" + x + " - xmax[a, b]) / total[a, b]\n";
    }
    text += "op " + name + "\nparam A, K, B\ninput  X: f32[A, K, B]\nlocal  xmax: f32[A, B]\n";
    text += std::string("local  ") + (n.op_type == "Hardmax" ? "first" : "total") + ": f32[A, B]\n";
    text += "output Y: f32[A, K, B]\nxmax[a, b] = max(k: K) " + x + "\n" + body;
    return generated_kernel("softmax", name, text, shape,
                            {{"X", n.inputs[0]}, {"Y", n.outputs[0]}});
}

bool present(const GraphNode &n, size_t i, bool output) {
    const auto &v = output ? n.outputs : n.inputs;
    return v.size() > i && !v[i].empty();
}

// A per-position parameter of the normalized extent (a scale or bias of N elements).
void require_row(const ModelGraph &g, const std::string &t, int64_t n, const char *what) {
    require_float(g, t);
    if (g.tensor(t).elements() != n)
        throw Unsupported{std::string(what) + " that broadcasts"};
}

// The statements of the mean and the biased variance of X [M, N] over n.
const char *kMeanVariance =
    "mean[m] = sum(n: N) X[m, n] / N\n"
    "variance[m] = sum(n: N) (X[m, n] - mean[m]) * (X[m, n] - mean[m]) / N\n";

// LayerNormalization over the axes from `axis` on, the input viewed as [M, N]: Y, and the Mean
// and InvStdDev outputs when the node writes them.
std::vector<SubgraphKernel> layernorm(const ModelGraph &g, const GraphNode &n) {
    const std::string &x = n.inputs[0];
    require_float(g, x);
    const Dims &d = g.tensor(x).dims;
    const size_t axis = size_t(normalize_axis(n.int_attr("axis", -1), int64_t(d.size())));
    const int64_t rows = product(d, 0, axis), cols = product(d, axis, d.size());
    if (n.int_attr("stash_type", 1) != 1)
        throw Unsupported{"stash_type other than float32"};
    if (!present(n, 1, false))
        throw Unsupported{"no scale"};
    require_row(g, n.inputs[1], cols, "a scale");
    const bool bias = present(n, 2, false);
    if (bias)
        require_row(g, n.inputs[2], cols, "a bias");
    const std::string e = literal(float(n.float_attr("epsilon", 1e-5)));
    const std::string shape = shape_text({{"M", rows}, {"N", cols}});
    std::vector<SubgraphKernel> out;
    if (e == literal(1e-5) && bias) {
        SubgraphKernel k;
        k.kind = "layernorm";
        k.op = "layernorm";
        k.shape = shape;
        k.args = {{"X", x}, {"gamma", n.inputs[1]}, {"beta", n.inputs[2]}, {"Y", n.outputs[0]}};
        out.push_back(k);
    } else {
        const std::string name = "layernorm_eps" + eps_suffix(e) + (bias ? "" : "_nobias");
        std::string text =
            std::string(kGeneratedHeader) +
            "# Layer normalization over the last axis of an M x N matrix, with scale gamma" +
            (bias ? ", shift beta" : "") + "\n# and epsilon " + e +
            " (the biased variance, divided by N).\n";
        text += "op " + name + "\nparam M, N\ninput  X: f32[M, N]\ninput  gamma: f32[N]\n";
        if (bias)
            text += "input  beta: f32[N]\n";
        text += "local  mean: f32[M]\nlocal  variance: f32[M]\noutput Y: f32[M, N]\n";
        text += kMeanVariance;
        text += "Y[m, n] = (X[m, n] - mean[m]) / sqrt(variance[m] + " + e + ") * gamma[n]" +
                (bias ? " + beta[n]" : "") + "\n";
        std::vector<std::pair<std::string, std::string>> args = {{"X", x}, {"gamma", n.inputs[1]}};
        if (bias)
            args.push_back({"beta", n.inputs[2]});
        args.push_back({"Y", n.outputs[0]});
        out.push_back(generated_kernel("layernorm", name, text, shape, args));
    }
    if (present(n, 1, true)) {
        std::string text =
            std::string(kGeneratedHeader) + "# The mean of every row of X (M x N).\n";
        text += "op row_mean\nparam M, N\ninput  X: f32[M, N]\noutput Y: f32[M]\nY[m] = sum(n: N) "
                "X[m, n] / N\n";
        out.push_back(generated_kernel("layernorm", "row_mean", text, shape,
                                       {{"X", x}, {"Y", n.outputs[1]}}));
    }
    if (present(n, 2, true)) {
        const std::string name = "row_inv_std_eps" + eps_suffix(e);
        std::string text = std::string(kGeneratedHeader) + "# 1 / sqrt(variance + " + e +
                           ") of every row of X (M x N), the biased variance.\n";
        text += "op " + name +
                "\nparam M, N\ninput  X: f32[M, N]\nlocal  mean: f32[M]\nlocal  variance: f32[M]\n";
        text += "output Y: f32[M]\n" + std::string(kMeanVariance) +
                "Y[m] = 1.0 / sqrt(variance[m] + " + e + ")\n";
        out.push_back(
            generated_kernel("layernorm", name, text, shape, {{"X", x}, {"Y", n.outputs[2]}}));
    }
    return out;
}

// The input [N, C, ...] viewed as [N, C, S].
std::string channels_shape(const Dims &d) {
    if (d.size() < 2)
        throw Unsupported{"an input of rank below 2"};
    return shape_text({{"N", d[0]}, {"C", d[1]}, {"S", product(d, 2, d.size())}});
}

// A BatchNormalization's X [N, C, ...] as [N, C, S] and its epsilon, after checking its five
// inputs (X, then scale, bias, mean and variance of one value per channel).
std::pair<std::string, std::string> batchnorm_shape_and_epsilon(const ModelGraph &g,
                                                                const GraphNode &n) {
    if (n.inputs.size() != 5)
        throw Unsupported{"not five inputs"};
    const Dims &d = g.tensor(n.inputs[0]).dims;
    require_float(g, n.inputs[0]);
    const std::string shape = channels_shape(d);
    for (size_t i = 1; i < 5; i++)
        require_row(g, n.inputs[i], d[1], "a parameter");
    const std::string e = literal(float(n.float_attr("epsilon", 1e-5)));
    return {shape, e};
}

// BatchNormalization in inference: per channel, (X - mean) / sqrt(var + epsilon) * scale + B.
SubgraphKernel batchnorm(const ModelGraph &g, const GraphNode &n) {
    const auto [shape, e] = batchnorm_shape_and_epsilon(g, n);
    const std::string name = "batchnorm_eps" + eps_suffix(e);
    std::string text =
        std::string(kGeneratedHeader) +
        "# Batch normalization in inference, per channel of X [N, C, S]: (X - mean) / sqrt(var + " +
        e + ")\n# * scale + bias.\n";
    text += "op " + name +
            "\nparam N, C, S\ninput  X: f32[N, C, S]\ninput  scale: f32[C]\ninput  bias: f32[C]\n";
    text += "input  mean: f32[C]\ninput  var: f32[C]\noutput Y: f32[N, C, S]\n";
    text += "Y[n, c, s] = (X[n, c, s] - mean[c]) / sqrt(var[c] + " + e + ") * scale[c] + bias[c]\n";
    return generated_kernel("normalization", name, text, shape,
                            {{"X", n.inputs[0]},
                             {"scale", n.inputs[1]},
                             {"bias", n.inputs[2]},
                             {"mean", n.inputs[3]},
                             {"var", n.inputs[4]},
                             {"Y", n.outputs[0]}});
}

// The batch's mean (and biased variance) per channel of X [N, C, S]: the locals' declarations
// and statements.
std::pair<std::string, std::string> batch_statistics(bool variance) {
    std::string decls = "local  bmean: f32[C]\n",
                statements = "bmean[c] = sum(n: N, s: S) X[n, c, s] / (N * S)\n";
    if (variance) {
        decls += "local  bvar: f32[C]\n";
        statements += "bvar[c] = sum(n: N, s: S) (X[n, c, s] - bmean[c]) * (X[n, c, s] - bmean[c]) "
                      "/ (N * S)\n";
    }
    return {decls, statements};
}

// BatchNormalization in training mode (opset 14 on): Y normalized by the batch's own statistics,
// and the running mean and variance, input_mean * momentum + the batch's * (1 - momentum), when the
// node writes them.
std::vector<SubgraphKernel> batchnorm_training(const ModelGraph &g, const GraphNode &n) {
    const auto [shape, e] = batchnorm_shape_and_epsilon(g, n);
    const std::string m = literal(float(n.float_attr("momentum", 0.9)));
    std::vector<SubgraphKernel> out;
    const std::string name = "batchnorm_training_eps" + eps_suffix(e);
    std::string text = std::string(kGeneratedHeader) +
                       "# Batch normalization in training mode, per channel of X [N, C, S], by the "
                       "batch's mean and\n"
                       "# biased variance; epsilon " +
                       e + ".\n";
    text += "op " + name +
            "\nparam N, C, S\ninput  X: f32[N, C, S]\ninput  scale: f32[C]\ninput  bias: f32[C]\n";
    const auto [decls, statements] = batch_statistics(true);
    text += decls + "output Y: f32[N, C, S]\n" + statements;
    text +=
        "Y[n, c, s] = (X[n, c, s] - bmean[c]) / sqrt(bvar[c] + " + e + ") * scale[c] + bias[c]\n";
    out.push_back(generated_kernel(
        "normalization", name, text, shape,
        {{"X", n.inputs[0]}, {"scale", n.inputs[1]}, {"bias", n.inputs[2]}, {"Y", n.outputs[0]}}));
    for (size_t i = 1; i < 3; i++) {
        if (!present(n, i, true))
            continue;
        const std::string which = i == 1 ? "mean" : "var", stat = i == 1 ? "bmean" : "bvar";
        const std::string op = "batchnorm_running_" + which + "_m" + eps_suffix(m);
        std::string t = std::string(kGeneratedHeader) + "# The running " + which +
                        " of batch normalization: " + which + " * " + m + " + the batch's * (1 - " +
                        m + ").\n";
        t += "op " + op + "\nparam N, C, S\ninput  X: f32[N, C, S]\ninput  " + which + ": f32[C]\n";
        const auto [stat_decls, stat_statements] = batch_statistics(i == 2);
        t += stat_decls + "output R: f32[C]\n" + stat_statements;
        t += "R[c] = " + which + "[c] * " + m + " + " + stat + "[c] * (1.0 - " + m + ")\n";
        out.push_back(
            generated_kernel("normalization", op, t, shape,
                             {{"X", n.inputs[0]}, {which, n.inputs[2 + i]}, {"R", n.outputs[i]}}));
    }
    return out;
}

// InstanceNormalization: per sample and channel over the spatial axes, then scale and bias per
// channel.
SubgraphKernel instancenorm(const ModelGraph &g, const GraphNode &n) {
    const Dims &d = g.tensor(n.inputs[0]).dims;
    require_float(g, n.inputs[0]);
    const std::string shape = channels_shape(d);
    if (n.inputs.size() != 3)
        throw Unsupported{"not three inputs"};
    require_row(g, n.inputs[1], d[1], "a scale");
    require_row(g, n.inputs[2], d[1], "a bias");
    const std::string e = literal(float(n.float_attr("epsilon", 1e-5)));
    const std::string name = "instancenorm_eps" + eps_suffix(e);
    std::string text = std::string(kGeneratedHeader) +
                       "# Instance normalization of X [N, C, S] over S, then per-channel scale and "
                       "bias; epsilon " +
                       e + ".\n";
    text += "op " + name +
            "\nparam N, C, S\ninput  X: f32[N, C, S]\ninput  scale: f32[C]\ninput  bias: f32[C]\n";
    text += "local  mean: f32[N, C]\nlocal  variance: f32[N, C]\noutput Y: f32[N, C, S]\n";
    text += "mean[n, c] = sum(s: S) X[n, c, s] / S\n";
    text +=
        "variance[n, c] = sum(s: S) (X[n, c, s] - mean[n, c]) * (X[n, c, s] - mean[n, c]) / S\n";
    text += "Y[n, c, s] = (X[n, c, s] - mean[n, c]) / sqrt(variance[n, c] + " + e +
            ") * scale[c] + bias[c]\n";
    return generated_kernel(
        "normalization", name, text, shape,
        {{"X", n.inputs[0]}, {"scale", n.inputs[1]}, {"bias", n.inputs[2]}, {"Y", n.outputs[0]}});
}

// LpNormalization: X divided by its L1 or L2 norm along one axis.
SubgraphKernel lpnorm(const ModelGraph &g, const GraphNode &n) {
    const std::string &x = n.inputs[0];
    require_float(g, x);
    const Dims &d = g.tensor(x).dims;
    const size_t axis = size_t(normalize_axis(n.int_attr("axis", -1), int64_t(d.size())));
    const int64_t p = n.int_attr("p", 2);
    if (p != 1 && p != 2)
        throw Unsupported{"p other than 1 or 2"};
    const std::string name = p == 1 ? "l1_normalize_akb" : "l2_normalize_akb";
    const std::string read = "X[a, k, b]";
    std::string text = std::string(kGeneratedHeader) + "# X [A, K, B] divided by its L" +
                       std::to_string(p) + " norm over the middle axis.\n";
    text +=
        "op " + name +
        "\nparam A, K, B\ninput  X: f32[A, K, B]\nlocal  norm: f32[A, B]\noutput Y: f32[A, K, B]\n";
    text += p == 1 ? "norm[a, b] = sum(k: K) abs(" + read + ")\n"
                   : "norm[a, b] = sum(k: K) " + read + " * " + read + "\n";
    text += "Y[a, k, b] = " + read + " / " + (p == 1 ? "norm[a, b]" : "sqrt(norm[a, b])") + "\n";
    const std::string shape = shape_text(
        {{"A", product(d, 0, axis)}, {"K", d[axis]}, {"B", product(d, axis + 1, d.size())}});
    return generated_kernel("normalization", name, text, shape, {{"X", x}, {"Y", n.outputs[0]}});
}

} // namespace

bool is_normalization(const std::string &t) {
    return t == "Softmax" || t == "LogSoftmax" || t == "Hardmax" || t == "LayerNormalization" ||
           t == "BatchNormalization" || t == "InstanceNormalization" || t == "LpNormalization";
}

std::vector<SubgraphKernel> normalization_kernels(const ModelGraph &g, const GraphNode &n) {
    if (n.op_type == "LayerNormalization")
        return layernorm(g, n);
    if (n.op_type == "BatchNormalization")
        return n.int_attr("training_mode", 0) != 0 ? batchnorm_training(g, n)
                                                   : std::vector<SubgraphKernel>{batchnorm(g, n)};
    if (n.op_type == "InstanceNormalization")
        return {instancenorm(g, n)};
    if (n.op_type == "LpNormalization")
        return {lpnorm(g, n)};
    return {softmax_family(g, n)};
}

} // namespace opgen::onnx_import
