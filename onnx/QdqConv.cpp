#include "onnx/QdqConv.h"

#include "onnx/OpText.h"
#include "onnx/QdqOperands.h"
#include "onnx/WeightDequantize.h"

#include <algorithm>
#include <cmath>

namespace opgen::onnx_import {

const char *const kQuantizedConv = "conv2d_nhwc_u8s8_requant";

namespace {

// The quantized convolution's pieces, before they become the kernel's constants.
struct QuantizedConv {
    std::vector<int> nodes;
    int x_reader = 0;  // the node among them that reads X (the padding kernel's, where one is needed)
    PerTensor x, y;
    std::string w, w_scale;  // the s8 [F, C, KH, KW] weight initializer and its scales
    std::string bias;        // "" none; float32 (QDQ, folded) or int32 at sx sw (QLinearConv)
    int64_t stride = 1, pad = 0, dilation = 1;
};

// The window attributes of Conv or QLinearConv `n`; false for a grouped or uneven window.
bool window_fits(const GraphNode &n, QuantizedConv &c) {
    if (n.int_attr("group", 1) != 1) return false;
    const std::string mode = n.has("auto_pad") ? n.attrs.at("auto_pad").s : "NOTSET";
    if (mode != "NOTSET" && mode != "VALID") return false;
    if (!one_value(n.ints_attr("strides", {1, 1}), c.stride) || !one_value(n.ints_attr("dilations", {1, 1}), c.dilation))
        return false;
    if (mode == "NOTSET" && !one_value(n.ints_attr("pads", {0, 0, 0, 0}), c.pad)) return false;
    return c.stride > 0 && c.dilation > 0 && c.pad >= 0;
}

// An s8 [F, C, KH, KW] weight initializer with one scale or one per output channel (axis 0) and
// a zero zero point.
bool weight_fits(const ModelGraph &g, const std::string &w, const std::string &scale, const std::string &zero,
                 int64_t axis, QuantizedConv &c) {
    if (!g.is_weight(w) || g.tensor(w).elem_type != kOnnxInt8 || g.tensor(w).dims.size() != 4 || !g.is_weight(scale))
        return false;
    const int64_t scales = g.tensor(scale).elements();
    if (scales != 1 && (scales != g.tensor(w).dims[0] || axis != 0)) return false;
    if (!zero.empty() && !all_zero(g, zero)) return false;
    c.w = w, c.w_scale = scale;
    return true;
}

// The QDQ form rooted at Conv `n`.
std::optional<QuantizedConv> match_qdq(const ModelGraph &g, const GraphNode &n, const SoleReader &sole_reader) {
    QuantizedConv c;
    if (n.inputs.size() < 2 || !window_fits(n, c)) return std::nullopt;
    const GraphNode *xdq = dequantize_of(g, n.inputs[0]);
    const GraphNode *wdq = dequantize_of(g, n.inputs[1]);
    if (!xdq || !wdq || sole_reader(n.inputs[0]) != &n || sole_reader(n.inputs[1]) != &n) return std::nullopt;
    if (g.tensor(xdq->inputs[0]).elem_type != kOnnxUint8) return std::nullopt;
    std::optional<PerTensor> x = per_tensor(g, xdq->inputs[0], xdq->inputs[1], present(*xdq, 2) ? xdq->inputs[2] : "");
    if (!x) return std::nullopt;
    c.x = *x;
    const int64_t axis = normalize_axis(wdq->int_attr("axis", 1), 4);
    if (!weight_fits(g, wdq->inputs[0], wdq->inputs[1], present(*wdq, 2) ? wdq->inputs[2] : "", axis, c))
        return std::nullopt;
    c.nodes = {xdq->index, wdq->index, n.index};
    c.x_reader = xdq->index;
    if (present(n, 2)) {
        // A constant float32 bias: the folded DQ of an int32 bias, or a float initializer.
        if (!g.is_weight(n.inputs[2]) || g.tensor(n.inputs[2]).elem_type != kOnnxFloat) return std::nullopt;
        c.bias = n.inputs[2];
        if (const GraphNode *bdq = dequantize_of(g, c.bias); bdq && sole_reader(c.bias) == &n) c.nodes.push_back(bdq->index);
    }
    std::optional<RequantizedOutput> out = match_requantized_output(g, n.outputs[0], sole_reader);
    if (!out) return std::nullopt;
    c.y = out->y;
    c.nodes.insert(c.nodes.end(), out->nodes.begin(), out->nodes.end());
    return c;
}

// The QOperator form: QLinearConv of a u8 activation and an s8 weight, u8 output.
std::optional<QuantizedConv> match_qlinear(const ModelGraph &g, const GraphNode &n) {
    QuantizedConv c;
    if (n.inputs.size() < 8 || !window_fits(n, c) || g.tensor(n.inputs[0]).elem_type != kOnnxUint8 ||
        g.tensor(n.outputs[0]).elem_type != kOnnxUint8)
        return std::nullopt;
    std::optional<PerTensor> x = per_tensor(g, n.inputs[0], n.inputs[1], n.inputs[2]);
    std::optional<PerTensor> y = per_tensor(g, n.outputs[0], n.inputs[6], n.inputs[7]);
    if (!x || !y || !weight_fits(g, n.inputs[3], n.inputs[4], n.inputs[5], 0, c)) return std::nullopt;
    if (present(n, 8)) {
        if (!g.is_weight(n.inputs[8]) || g.tensor(n.inputs[8]).elem_type != kOnnxInt32) return std::nullopt;
        c.bias = n.inputs[8];
    }
    c.x = *x, c.y = *y;
    c.nodes = {n.index};
    c.x_reader = n.index;
    return c;
}

// The kernel's folded constants (§3.2, QDQ fusion): Wt packed [KH, KW, CP/4, F, 4] (CP: the
// channels rounded up to 4, the added ones' weights 0), the int32 bias with the activation's
// zero point, the float32 scales, the output zero point. Their elements only when the weights
// were read.
std::vector<GraphTensor> folded_constants(const ModelGraph &g, const QuantizedConv &c, int64_t CP) {
    const Dims &wd = g.tensor(c.w).dims;
    const int64_t F = wd[0], C = wd[1], KH = wd[2], KW = wd[3], taps = C * KH * KW;
    const std::string base = c.y.tensor + "#int8";
    std::vector<GraphTensor> k = {folded_constant(base + "_Wt", {KH, KW, CP / 4, F, 4}, kOnnxInt8),
                                  folded_constant(base + "_bias", {F}, kOnnxInt32),
                                  folded_constant(base + "_scale", {F}, kOnnxFloat), folded_constant(base + "_zp", {1}, kOnnxInt32)};
    const std::vector<double> w = constant_elements(g.tensor(c.w)), sw = constant_elements(g.tensor(c.w_scale));
    const std::vector<double> bias = c.bias.empty() ? std::vector<double>() : constant_elements(g.tensor(c.bias));
    const bool int_bias = !c.bias.empty() && g.tensor(c.bias).elem_type == kOnnxInt32;
    if (int64_t(w.size()) != F * taps || sw.empty() || (!c.bias.empty() && int64_t(bias.size()) != F)) return k;
    k[0].raw.assign(size_t(F * CP * KH * KW), 0);  // the padded channels' weights are 0
    std::vector<int32_t> b32(static_cast<size_t>(F));
    k[2].data.resize(size_t(F));
    for (int64_t f = 0; f < F; f++) {
        const double acc_scale = double(float(c.x.scale) * float(per_channel(sw, f)));
        int64_t sum = 0;
        for (int64_t ch = 0; ch < C; ch++)
            for (int64_t ry = 0; ry < KH; ry++)
                for (int64_t rx = 0; rx < KW; rx++) {
                    const int64_t v = int64_t(w[size_t(((f * C + ch) * KH + ry) * KW + rx)]);
                    k[0].raw[size_t((((ry * KW + rx) * (CP / 4) + ch / 4) * F + f) * 4 + ch % 4)] = char(int8_t(v));
                    sum += v;
                }
        const double b = bias.empty() ? 0 : int_bias ? bias[size_t(f)] : std::nearbyint(bias[size_t(f)] / acc_scale);
        b32[size_t(f)] = int32_t(b - double(c.x.zero * sum));
        k[2].data[size_t(f)] = float(acc_scale / c.y.scale);
    }
    k[1].raw.assign(reinterpret_cast<const char *>(b32.data()), b32.size() * 4);
    const int32_t zp = int32_t(c.y.zero);
    k[3].raw.assign(reinterpret_cast<const char *>(&zp), 4);
    return k;
}

// The u8 copy of X that a convolution needing explicit padding reads: NHWC, its channels padded
// to CP and its border `pad` wide, both holding X's zero point (so the folded zx sum W stays right
// at the border; the padded channels meet zero weights).
std::string pad_text() {
    return std::string(kGeneratedHeader) +
           "# A u8 NCHW tensor copied to NHWC with its channels padded to CP and a border `pad` wide, the\n"
           "# new elements holding the zero point Z (the quantized zero).\n"
           "op pad_u8_nchw_nhwc\nparam N, C, H, W, CP\nattr pad = 0\n"
           "let PH = H + 2*pad\nlet PW = W + 2*pad\n"
           "input  X: u8[N, C, H, W] zero_pad\ninput  Z: u8[1]\noutput Y: u8[N, PH, PW, CP]\n"
           "Y[n, y, x, c] = select(c < C && y >= pad && y < H + pad && x >= pad && x < W + pad,\n"
           "    X[n, c, y - pad, x - pad], Z[0])\n";
}

// The padding kernel for `c` at X dims `xd`, writing `padded` (an intermediate it adds, held NHWC).
SubgraphKernel pad_kernel(const QuantizedConv &c, const Dims &xd, int64_t CP, const std::string &padded) {
    GraphTensor zero = folded_constant(c.y.tensor + "#int8_xzp", {1}, kOnnxUint8);
    zero.raw.assign(1, char(uint8_t(c.x.zero)));
    GraphTensor out = folded_constant(padded, {xd[0], CP, xd[2] + 2 * c.pad, xd[3] + 2 * c.pad}, kOnnxUint8);
    out.kind = TensorKind::Intermediate;
    out.layout = "nhwc";
    SubgraphKernel k = generated_kernel("copy", "pad_u8_nchw_nhwc", pad_text(),
                                        shape_text({{"N", xd[0]}, {"C", xd[1]}, {"H", xd[2]}, {"W", xd[3]}, {"CP", CP}, {"pad", c.pad}}),
                                        {{"X", c.x.tensor}, {"Z", zero.name}, {"Y", padded}});
    k.constants = {zero, out};
    return k;
}

}  // namespace

std::vector<SubgraphKernel> fuse_quantized_conv(const ModelGraph &g, const GraphNode &n, const SoleReader &sole_reader) {
    std::optional<QuantizedConv> c;
    if (n.op_type == "Conv") c = match_qdq(g, n, sole_reader);
    if (n.op_type == "QLinearConv") c = match_qlinear(g, n);
    if (!c) return {};
    const Dims &xd = g.tensor(c->x.tensor).dims, &wd = g.tensor(c->w).dims, &yd = g.tensor(c->y.tensor).dims;
    if (xd.size() != 4 || yd.size() != 4 || xd[1] != wd[1] || yd[1] != wd[0]) return {};
    if (!c->bias.empty() && g.tensor(c->bias).elements() != wd[0]) return {};
    const int64_t oh = (xd[2] + 2 * c->pad - c->dilation * (wd[2] - 1) - 1) / c->stride + 1;
    const int64_t ow = (xd[3] + 2 * c->pad - c->dilation * (wd[3] - 1) - 1) / c->stride + 1;
    if (yd != Dims{xd[0], wd[0], oh, ow}) return {};
    // The op reads whole groups of 4 channels and pads with 0: other channel counts, and padding
    // whose quantized zero is not 0, read an explicitly padded copy of X.
    const int64_t CP = (xd[1] + 3) / 4 * 4;
    const bool explicit_pad = CP != xd[1] || (c->pad > 0 && c->x.zero != 0);
    std::vector<SubgraphKernel> kernels;
    std::string x = c->x.tensor;
    int64_t h = xd[2], w = xd[3], pad = c->pad;
    std::sort(c->nodes.begin(), c->nodes.end());
    if (explicit_pad) {
        x = c->y.tensor + "#int8_X";
        kernels.push_back(pad_kernel(*c, xd, CP, x));
        kernels.back().nodes = {c->x_reader};
        if (c->nodes.size() > 1) c->nodes.erase(std::find(c->nodes.begin(), c->nodes.end(), c->x_reader));
        h += 2 * pad, w += 2 * pad, pad = 0;
    }
    SubgraphKernel k;
    k.kind = "conv";
    k.op = kQuantizedConv;
    k.shape = shape_text({{"N", xd[0]}, {"H", h}, {"W", w}, {"C", CP}, {"F", wd[0]}, {"KH", wd[2]}, {"KW", wd[3]},
                          {"stride", c->stride}, {"pad", pad}, {"dilation", c->dilation}});
    k.constants = folded_constants(g, *c, CP);
    k.args = {{"X", x}};
    const char *const names[] = {"Wt", "bias", "scale", "zp"};
    for (size_t i = 0; i < 4; i++) k.args.push_back({names[i], k.constants[i].name});
    k.args.push_back({"Y", c->y.tensor});
    k.nodes = c->nodes;
    kernels.push_back(std::move(k));
    return kernels;
}

}  // namespace opgen::onnx_import
