#include "onnx/QdqFusion.h"

#include "onnx/OpText.h"
#include "onnx/QdqOperands.h"
#include "onnx/WeightDequantize.h"

#include <cmath>

namespace opgen::onnx_import {

namespace {

// The dense layer's folded pieces, before they become the kernel's constants.
struct Dense {
    std::vector<int> nodes;
    PerTensor a, y;
    std::string w;      // the s8 weight initializer
    bool w_nk = false;  // W is [N, K] (Gemm's transB), else [K, N]
    std::string w_scale;
    std::string bias;         // "" none; a float32 row, or an int32 row read at bias_scale
    std::string bias_scale;   // the int32 bias's DequantizeLinear scale; "" for a float bias
    int64_t M = 0, N = 0, K = 0;
};

// An s8 weight initializer of dims [K, N] (or [N, K]) with a scale of 1 or N values and a zero
// zero point: fills the weight's part of `d`.
bool weight_fits(const ModelGraph &g, const std::string &w, const std::string &scale, const std::string &zero,
                 Dense &d) {
    if (!g.is_weight(w) || g.tensor(w).elem_type != kOnnxInt8 || g.tensor(w).dims.size() != 2) return false;
    if (!g.is_weight(scale)) return false;
    const int64_t n = d.w_nk ? g.tensor(w).dims[0] : g.tensor(w).dims[1];
    if (g.tensor(scale).elements() != 1 && g.tensor(scale).elements() != n) return false;
    // A weight zero point other than 0 needs each row's sum of A at run time: not folded.
    if (!zero.empty() && !all_zero(g, zero)) return false;
    d.w = w;
    d.w_scale = scale;
    return true;
}

// The Relu and QuantizeLinear that end a dense layer at `t`.
bool match_output(const ModelGraph &g, const std::string &t, const SoleReader &sole_reader, Dense &d) {
    std::optional<RequantizedOutput> out = match_requantized_output(g, t, sole_reader);
    if (!out) return false;
    d.y = out->y;
    d.nodes.insert(d.nodes.end(), out->nodes.begin(), out->nodes.end());
    return true;
}

// The QDQ form rooted at MatMul or Gemm `n`.
std::optional<Dense> match_qdq(const ModelGraph &g, const GraphNode &n, const SoleReader &sole_reader) {
    Dense d;
    if (n.op_type == "Gemm") {
        if (n.int_attr("transA", 0) != 0 || n.float_attr("alpha", 1.0) != 1.0 || n.float_attr("beta", 1.0) != 1.0)
            return std::nullopt;
        d.w_nk = n.int_attr("transB", 0) != 0;
    }
    const GraphNode *adq = dequantize_of(g, n.inputs[0]);
    const GraphNode *wdq = dequantize_of(g, n.inputs[1]);
    if (!adq || !wdq || sole_reader(n.inputs[0]) != &n || sole_reader(n.inputs[1]) != &n) return std::nullopt;
    if (g.tensor(adq->inputs[0]).elem_type != kOnnxUint8) return std::nullopt;
    std::optional<PerTensor> a = per_tensor(g, adq->inputs[0], adq->inputs[1], present(*adq, 2) ? adq->inputs[2] : "");
    if (!a) return std::nullopt;
    d.a = *a;
    if (g.tensor(wdq->inputs[1]).elements() > 1 &&
        normalize_axis(wdq->int_attr("axis", 1), 2) != (d.w_nk ? 0 : 1))
        return std::nullopt;
    if (!weight_fits(g, wdq->inputs[0], wdq->inputs[1], present(*wdq, 2) ? wdq->inputs[2] : "", d)) return std::nullopt;
    d.nodes = {adq->index, wdq->index, n.index};
    std::string out = n.outputs[0];
    if (n.op_type == "Gemm" && present(n, 2)) {
        const GraphNode *bdq = dequantize_of(g, n.inputs[2]);
        if (bdq && sole_reader(n.inputs[2]) == &n && g.is_weight(bdq->inputs[0]) &&
            g.tensor(bdq->inputs[0]).elem_type == kOnnxInt32 && (!present(*bdq, 2) || all_zero(g, bdq->inputs[2]))) {
            d.bias = bdq->inputs[0], d.bias_scale = bdq->inputs[1];
            d.nodes.push_back(bdq->index);
        } else if (g.is_weight(n.inputs[2]) && g.tensor(n.inputs[2]).elem_type == kOnnxFloat) {
            d.bias = n.inputs[2];
        } else {
            return std::nullopt;
        }
    } else if (const GraphNode *add = sole_reader(out); n.op_type == "MatMul" && add && add->op_type == "Add") {
        const std::string other = add->inputs[0] == out ? add->inputs[1] : add->inputs[0];
        if (g.is_weight(other) && g.tensor(other).elem_type == kOnnxFloat && g.tensor(other).dims.size() == 1) {
            d.bias = other;
            d.nodes.push_back(add->index);
            out = add->outputs[0];
        }
    }
    if (!match_output(g, out, sole_reader, d)) return std::nullopt;
    return d;
}

// The QOperator form: a QLinearMatMul of a u8 activation and an s8 weight.
std::optional<Dense> match_qlinear(const ModelGraph &g, const GraphNode &n) {
    Dense d;
    if (n.inputs.size() < 8 || g.tensor(n.inputs[0]).elem_type != kOnnxUint8 ||
        g.tensor(n.outputs[0]).elem_type != kOnnxUint8)
        return std::nullopt;
    std::optional<PerTensor> a = per_tensor(g, n.inputs[0], n.inputs[1], n.inputs[2]);
    std::optional<PerTensor> y = per_tensor(g, n.outputs[0], n.inputs[6], n.inputs[7]);
    if (!a || !y || !weight_fits(g, n.inputs[3], n.inputs[4], n.inputs[5], d)) return std::nullopt;
    d.a = *a, d.y = *y;
    d.nodes = {n.index};
    return d;
}

// The kernel's folded constants (§3.2, QDQ fusion): B packed [K/4, N, 4], the int32 bias with the
// activation's zero point, the float32 scales, the output zero point. Their elements only when
// the weights were read.
std::vector<GraphTensor> folded_constants(const ModelGraph &g, const Dense &d) {
    const std::string base = d.y.tensor + "#int8";
    std::vector<GraphTensor> c = {folded_constant(base + "_B", {d.K / 4, d.N, 4}, kOnnxInt8), folded_constant(base + "_bias", {d.N}, kOnnxInt32),
                                  folded_constant(base + "_scale", {d.N}, kOnnxFloat), folded_constant(base + "_zp", {1}, kOnnxInt32)};
    const std::vector<double> w = constant_elements(g.tensor(d.w)), sw = constant_elements(g.tensor(d.w_scale));
    const std::vector<double> bias = d.bias.empty() ? std::vector<double>() : constant_elements(g.tensor(d.bias));
    const std::vector<double> bias_scale = d.bias_scale.empty() ? std::vector<double>() : constant_elements(g.tensor(d.bias_scale));
    if (int64_t(w.size()) != d.K * d.N || sw.empty() || (!d.bias.empty() && int64_t(bias.size()) != d.N) ||
        (!d.bias_scale.empty() && bias_scale.empty()))
        return c;
    c[0].raw.resize(size_t(d.K * d.N));
    std::vector<int32_t> b32(size_t(d.N));
    c[2].data.resize(size_t(d.N));
    for (int64_t n = 0; n < d.N; n++) {
        const double acc_scale = double(float(d.a.scale) * float(per_channel(sw, n)));
        int64_t column_sum = 0;
        for (int64_t k = 0; k < d.K; k++) {
            const int64_t v = int64_t(d.w_nk ? w[size_t(n * d.K + k)] : w[size_t(k * d.N + n)]);
            c[0].raw[size_t(((k / 4) * d.N + n) * 4 + k % 4)] = char(int8_t(v));
            column_sum += v;
        }
        double b = 0;
        if (!d.bias.empty()) b = d.bias_scale.empty() ? bias[size_t(n)] : bias[size_t(n)] * per_channel(bias_scale, n);
        b32[size_t(n)] = int32_t(std::nearbyint(b / acc_scale) - double(d.a.zero * column_sum));
        c[2].data[size_t(n)] = float(acc_scale / d.y.scale);
    }
    c[1].raw.assign(reinterpret_cast<const char *>(b32.data()), b32.size() * 4);
    const int32_t zp = int32_t(d.y.zero);
    c[3].raw.assign(reinterpret_cast<const char *>(&zp), 4);
    return c;
}

}  // namespace

std::optional<SubgraphKernel> fuse_quantized_dense(const ModelGraph &g, const GraphNode &n,
                                                   const SoleReader &sole_reader) {
    std::optional<Dense> d;
    if ((n.op_type == "MatMul" || n.op_type == "Gemm") && n.inputs.size() >= 2) d = match_qdq(g, n, sole_reader);
    if (n.op_type == "QLinearMatMul") d = match_qlinear(g, n);
    if (!d) return std::nullopt;
    const Dims &ad = g.tensor(d->a.tensor).dims, &wd = g.tensor(d->w).dims;
    d->K = d->w_nk ? wd[1] : wd[0];
    d->N = d->w_nk ? wd[0] : wd[1];
    const Dims &yd = g.tensor(d->y.tensor).dims;
    if (ad.empty() || yd.empty() || ad.back() != d->K || d->K % 4 != 0 || yd.back() != d->N) return std::nullopt;
    // A bias row and its scale of the columns' count (or one scale), or nothing is folded.
    if (!d->bias.empty() && g.tensor(d->bias).elements() != d->N) return std::nullopt;
    if (!d->bias_scale.empty() && g.tensor(d->bias_scale).elements() != 1 && g.tensor(d->bias_scale).elements() != d->N)
        return std::nullopt;
    d->M = product(ad, 0, ad.size() - 1);
    SubgraphKernel k;
    k.kind = "dense";
    k.op = "matmul_u8s8_requant";
    k.shape = shape_text({{"M", d->M}, {"N", d->N}, {"K", d->K}});
    k.constants = folded_constants(g, *d);
    k.args = {{"A", d->a.tensor}};
    const char *const names[] = {"B", "bias", "scale", "zp"};
    for (size_t i = 0; i < 4; i++) k.args.push_back({names[i], k.constants[i].name});
    k.args.push_back({"C", d->y.tensor});
    k.nodes = d->nodes;
    return k;
}

}  // namespace opgen::onnx_import
