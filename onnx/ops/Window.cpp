#include "onnx/ops/Window.h"

#include "onnx/OpText.h"
#include "onnx/ops/Quantize.h"

#include <algorithm>

namespace opgen::onnx_import {

namespace {

// One spatial axis of a window: the input extent, the window, the output extent, and where each
// window starts (output index * stride + window index * dilation - begin pad).
struct WindowAxis {
    int64_t in = 1, kernel = 1, out = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0;
};

// The spatial axes of node `n` reading `x` [N, C, S...] and writing `y`, with `kernel` the window
// extents; pads from auto_pad (SAME_UPPER, SAME_LOWER, VALID) or the pads attribute.
std::vector<WindowAxis> window_axes(const ModelGraph &g, const GraphNode &n, const Dims &kernel) {
    const Dims &xd = g.tensor(n.inputs[0]).dims, &yd = g.tensor(n.outputs[0]).dims;
    const size_t s = xd.size() - 2;
    const Dims strides = n.ints_attr("strides", Dims(s, 1)),
               dilations = n.ints_attr("dilations", Dims(s, 1));
    const Dims pads = n.ints_attr("pads", Dims(2 * s, 0));
    const std::string mode = n.has("auto_pad") ? n.attrs.at("auto_pad").s : "NOTSET";
    if (strides.size() != s || dilations.size() != s || pads.size() != 2 * s || kernel.size() != s)
        throw Unsupported{"strides, dilations, pads or kernel_shape not one per spatial axis"};
    std::vector<WindowAxis> axes(s);
    for (size_t i = 0; i < s; i++) {
        WindowAxis &a = axes[i];
        a = {xd[i + 2], kernel[i], yd[i + 2], strides[i], dilations[i], pads[i], pads[i + s]};
        if (mode == "SAME_UPPER" || mode == "SAME_LOWER") {
            const int64_t total = std::max<int64_t>(0, (a.out - 1) * a.stride +
                                                           (a.kernel - 1) * a.dilation + 1 - a.in);
            a.pad_begin = mode == "SAME_UPPER" ? total / 2 : total - total / 2;
            a.pad_end = total - a.pad_begin;
        } else if (mode == "VALID") {
            a.pad_begin = a.pad_end = 0;
        } else if (mode != "NOTSET") {
            throw Unsupported{"auto_pad " + mode};
        }
        if (a.stride <= 0 || a.dilation <= 0)
            throw Unsupported{"a stride or dilation below 1"};
        if (a.pad_begin < 0 || a.pad_end < 0)
            throw Unsupported{"negative pads"};
    }
    return axes;
}

// The names a window op uses for spatial axis i.
struct AxisText {
    std::string in, kernel, out, ov, kv, stride, dilation, pad, pad_end;
    std::string position() const {
        return ov + "*" + stride + " + " + kv + "*" + dilation;
    } // before the pad
};

std::vector<AxisText> axis_texts(size_t s) {
    std::vector<AxisText> out;
    for (size_t i = 0; i < s; i++) {
        const std::string k = std::to_string(i);
        out.push_back(
            {"S" + k, "K" + k, "O" + k, "o" + k, "k" + k, "st" + k, "dl" + k, "pb" + k, "pe" + k});
    }
    return out;
}

// The parameters, attributes and shape values of the spatial axes.
struct SpatialDecl {
    std::vector<std::string> in, kernel, out, ov, reducers, reads, attrs;
    std::vector<std::pair<std::string, int64_t>> params, attr_values;
};

SpatialDecl spatial(const std::vector<WindowAxis> &axes) {
    SpatialDecl d;
    const std::vector<AxisText> t = axis_texts(axes.size());
    for (size_t i = 0; i < axes.size(); i++) {
        d.in.push_back(t[i].in), d.kernel.push_back(t[i].kernel), d.out.push_back(t[i].out);
        d.ov.push_back(t[i].ov);
        d.reducers.push_back(t[i].kv + ": " + t[i].kernel);
        d.reads.push_back(t[i].position() + " - " + t[i].pad);
        for (const std::string &attr : {t[i].stride, t[i].dilation})
            d.attrs.push_back(attr + " = 1");
        for (const std::string &attr : {t[i].pad, t[i].pad_end})
            d.attrs.push_back(attr + " = 0");
        d.params.push_back({t[i].in, axes[i].in});
        d.params.push_back({t[i].kernel, axes[i].kernel});
        d.params.push_back({t[i].out, axes[i].out});
        d.attr_values.insert(d.attr_values.end(), {{t[i].stride, axes[i].stride},
                                                   {t[i].dilation, axes[i].dilation},
                                                   {t[i].pad, axes[i].pad_begin},
                                                   {t[i].pad_end, axes[i].pad_end}});
    }
    return d;
}

// The sizes of a window op: the leading parameters, then the spatial ones and the attributes.
std::string window_shape(std::vector<std::pair<std::string, int64_t>> lead, const SpatialDecl &d) {
    lead.insert(lead.end(), d.params.begin(), d.params.end());
    lead.insert(lead.end(), d.attr_values.begin(), d.attr_values.end());
    return shape_text(lead);
}

std::string spatial_params(const SpatialDecl &d) {
    std::vector<std::string> p;
    for (size_t i = 0; i < d.in.size(); i++)
        p.insert(p.end(), {d.in[i], d.kernel[i], d.out[i]});
    return join(p, ", ");
}

bool present(const GraphNode &n, size_t i) {
    return n.inputs.size() > i && !n.inputs[i].empty();
}

// The op text of a grouped convolution `name` (both Conv and ConvTranspose): X [N, G, CG, in...]
// zero-padded, read at `reads`; weights Wt of dims `wt_dims` (G first), read at `wt_index`; an
// optional bias per output channel; Y [N, G, FG, out...]. `what` is the comment line's text
// before the bias clause.
std::string grouped_convolution_text(const std::string &name, const std::string &what, const SpatialDecl &d,
                                     bool bias, const std::string &wt_dims, const std::vector<std::string> &reads,
                                     const std::string &wt_index) {
    const std::string y = "[n, g, f, " + join(d.ov, ", ") + "]";
    std::string text = std::string(kGeneratedHeader) + what + (bias ? ", plus a bias per output channel" : "") + ".\n";
    text += "op " + name + "\nparam N, G, CG, FG, " + spatial_params(d) + "\nattr " + join(d.attrs, ", ") + "\n";
    text += "input  X: f32[N, G, CG, " + join(d.in, ", ") + "] zero_pad\n";
    text += "input  Wt: f32[" + wt_dims + ", " + join(d.kernel, ", ") + "]\n";
    if (bias)
        text += "input  bias: f32[G, FG]\nlocal  Z: f32[N, G, FG, " + join(d.out, ", ") + "]\n";
    text += "output Y: f32[N, G, FG, " + join(d.out, ", ") + "]\n";
    text += std::string(bias ? "Z" : "Y") + y + " = sum(c: CG, " + join(d.reducers, ", ") + ") X[n, g, c, " +
            join(reads, ", ") + "] * Wt[" + wt_index + "]\n";
    if (bias)
        text += "Y" + y + " = Z" + y + " + bias[g, f]\n";
    return text;
}

// A convolution node's kernel arguments: X, Wt, the bias when there is one, Y.
std::vector<std::pair<std::string, std::string>> convolution_args(const GraphNode &n, bool bias) {
    std::vector<std::pair<std::string, std::string>> args = {{"X", n.inputs[0]}, {"Wt", n.inputs[1]}};
    if (bias)
        args.push_back({"bias", n.inputs[2]});
    args.push_back({"Y", n.outputs[0]});
    return args;
}

// Conv: X [N, C, S...] viewed as [N, G, C/G, S...], W [F, C/G, K...] as [G, F/G, C/G, K...], Y
// [N, F, O...] as [N, G, F/G, O...]; X read with zero padding.
SubgraphKernel convolution(const ModelGraph &g, const GraphNode &n) {
    const std::string &x = n.inputs[0], &w = n.inputs[1];
    require_float(g, x), require_float(g, w);
    const Dims &xd = g.tensor(x).dims, &wd = g.tensor(w).dims;
    if (xd.size() < 3 || xd.size() > 5 || wd.size() != xd.size())
        throw Unsupported{"not a 1-D, 2-D or 3-D convolution"};
    const int64_t groups = n.int_attr("group", 1);
    if (groups <= 0 || xd[1] % groups != 0 || wd[0] % groups != 0 || wd[1] * groups != xd[1])
        throw Unsupported{"channels that do not divide into the groups"};
    const SpatialDecl d = spatial(window_axes(g, n, Dims(wd.begin() + 2, wd.end())));
    const bool bias = present(n, 2);
    if (bias)
        require_float(g, n.inputs[2]);
    const std::string s = std::to_string(xd.size() - 2);
    const std::string name = "convolution_" + s + "d" + (bias ? "_bias" : "");
    std::vector<std::string> kv;
    for (const std::string &r : d.reducers)
        kv.push_back(r.substr(0, r.find(':')));
    const std::string text = grouped_convolution_text(
        name, "# " + s + "-D grouped convolution (cross-correlation; reads outside X are zero), NC... layout, "
                         "channels in G groups",
        d, bias, "G, FG, CG", d.reads, "g, f, c, " + join(kv, ", "));
    const std::vector<std::pair<std::string, std::string>> args = convolution_args(n, bias);
    const std::string shape = window_shape(
        {{"N", xd[0]}, {"G", groups}, {"CG", xd[1] / groups}, {"FG", wd[0] / groups}}, d);
    return generated_kernel("conv", name, text, shape, args);
}

// A strided ConvTranspose adds X[i] W[k] to output o = i * stride + k * dilation - pad: o's input
// i is a fraction of o, which affine reads cannot say, so it is a masked sum over every input
// position, the one product per (i, k) that lands on o kept. It does the input's positions times a
// convolution's work, so it is taken only up to this many input positions.
constexpr int64_t kMaxMaskedPositions = 1024;

std::string strided_transpose_text(const std::string &name, const SpatialDecl &d, bool bias,
                                   const std::vector<AxisText> &t) {
    std::vector<std::string> iv, lands, kv;
    std::vector<std::string> reducers = {"c: CG"};
    for (size_t i = 0; i < t.size(); i++) {
        iv.push_back("x" + std::to_string(i));
        kv.push_back(t[i].kv);
        reducers.push_back(d.reducers[i]);
        reducers.push_back(iv.back() + ": " + t[i].in);
        lands.push_back(iv.back() + "*" + t[i].stride + " + " + t[i].kv + "*" + t[i].dilation + " == " + t[i].ov + " + " + t[i].pad);
    }
    const std::string y = "[n, g, f, " + join(d.ov, ", ") + "]";
    std::string text = std::string(kGeneratedHeader) + "# " + std::to_string(t.size()) +
                       "-D transposed convolution at any stride, as a masked sum over the input's positions" +
                       (bias ? ", plus a bias per output channel" : "") + ".\n";
    text += "op " + name + "\nparam N, G, CG, FG, " + spatial_params(d) + "\nattr " + join(d.attrs, ", ") + "\n";
    text += "input  X: f32[N, G, CG, " + join(d.in, ", ") + "]\n";
    text += "input  Wt: f32[G, CG, FG, " + join(d.kernel, ", ") + "]\n";
    if (bias) text += "input  bias: f32[G, FG]\nlocal  Z: f32[N, G, FG, " + join(d.out, ", ") + "]\n";
    text += "output Y: f32[N, G, FG, " + join(d.out, ", ") + "]\n";
    text += std::string(bias ? "Z" : "Y") + y + " = sum(" + join(reducers, ", ") + ") select(" + join(lands, " && ") +
            ", X[n, g, c, " + join(iv, ", ") + "] * Wt[g, c, f, " + join(kv, ", ") + "], 0.0)\n";
    if (bias) text += "Y" + y + " = Z" + y + " + bias[g, f]\n";
    return text;
}

// ConvTranspose at stride 1: a convolution reading X at o + pad - k * dilation (zero outside), W
// [C, F/G, K...] viewed as [G, CG, FG, K...]. A larger stride would read X at a fraction of the
// output index, which the op language's affine reads cannot say.
SubgraphKernel transposed_convolution(const ModelGraph &g, const GraphNode &n) {
    const std::string &x = n.inputs[0], &w = n.inputs[1];
    require_float(g, x), require_float(g, w);
    const Dims &xd = g.tensor(x).dims, &wd = g.tensor(w).dims, &yd = g.tensor(n.outputs[0]).dims;
    if (xd.size() < 3 || xd.size() > 5 || wd.size() != xd.size())
        throw Unsupported{"not a 1-D, 2-D or 3-D convolution"};
    const size_t s = xd.size() - 2;
    const int64_t groups = n.int_attr("group", 1);
    if (groups <= 0 || xd[1] != wd[0] || xd[1] % groups != 0)
        throw Unsupported{"channels that do not divide into the groups"};
    const Dims strides = n.ints_attr("strides", Dims(s, 1)),
               dilations = n.ints_attr("dilations", Dims(s, 1));
    const bool strided = std::any_of(strides.begin(), strides.end(), [](int64_t v) { return v != 1; });
    if (strided && product(xd, 2, xd.size()) > kMaxMaskedPositions)
        throw Unsupported{"a stride above 1 over more than " + std::to_string(kMaxMaskedPositions) + " input positions"};
    const std::string mode = n.has("auto_pad") ? n.attrs.at("auto_pad").s : "NOTSET";
    if (mode != "NOTSET" && mode != "VALID" && mode != "SAME_UPPER" && mode != "SAME_LOWER")
        throw Unsupported{"auto_pad " + mode};
    Dims pads = mode == "NOTSET" ? n.ints_attr("pads", Dims(2 * s, 0)) : Dims(2 * s, 0);
    if (dilations.size() != s || pads.size() != 2 * s)
        throw Unsupported{"dilations or pads not one per spatial axis"};
    if (mode == "SAME_UPPER" || mode == "SAME_LOWER") {
        // ONNX's total padding for the output shape inference gave, split as its spec says.
        const Dims out_pad = n.ints_attr("output_padding", Dims(s, 0));
        for (size_t i = 0; i < s && out_pad.size() == s; i++) {
            const int64_t total = strides[i] * (xd[i + 2] - 1) + out_pad[i] + (wd[i + 2] - 1) * dilations[i] + 1 - yd[i + 2];
            pads[i] = mode == "SAME_UPPER" ? total / 2 : total - total / 2;
            pads[i + s] = total - pads[i];
        }
    }
    std::vector<WindowAxis> axes(s);
    for (size_t i = 0; i < s; i++)
        axes[i] = {xd[i + 2], wd[i + 2], yd[i + 2], strides[i], dilations[i], pads[i], pads[i + s]};
    const SpatialDecl d = spatial(axes);
    const std::vector<AxisText> t = axis_texts(s);
    std::vector<std::string> reads, kv;
    for (const AxisText &a : t)
        reads.push_back(a.ov + " + " + a.pad + " - " + a.kv + "*" + a.dilation), kv.push_back(a.kv);
    const bool bias = present(n, 2);
    if (bias)
        require_float(g, n.inputs[2]);
    const std::string dim = std::to_string(s);
    const std::string name = "convolution_transpose_" + dim + "d" + (strided ? "_strided" : "") + (bias ? "_bias" : "");
    const std::string text =
        strided ? strided_transpose_text(name, d, bias, t)
                : grouped_convolution_text(
                      name, "# " + dim + "-D transposed convolution at stride 1 (reads outside X are zero), channels in G groups",
                      d, bias, "G, CG, FG", reads, "g, c, f, " + join(kv, ", "));
    const std::vector<std::pair<std::string, std::string>> args = convolution_args(n, bias);
    const std::string shape =
        window_shape({{"N", xd[0]}, {"G", groups}, {"CG", xd[1] / groups}, {"FG", wd[1]}}, d);
    return generated_kernel("conv", name, text, shape, args);
}

// MaxPool and AveragePool (and the global pools: one window over every spatial position). A max
// takes the positions inside X; an average divides by the positions counted: inside X, or inside
// the padded X with count_include_pad.
SubgraphKernel pool_kernel(const ModelGraph &g, const GraphNode &n, bool indices);

SubgraphKernel pool(const ModelGraph &g, const GraphNode &n) {
    const std::string &x = n.inputs[0];
    require_float(g, x);
    const Dims &xd = g.tensor(x).dims;
    if (xd.size() < 3 || xd.size() > 5)
        throw Unsupported{"not 1-D, 2-D or 3-D pooling"};
    if (n.outputs.size() > 1 && !n.outputs[1].empty())
        throw Unsupported{"indices output"};
    return pool_kernel(g, n, false);
}

// MaxPool's Indices output: per window the first position holding its maximum, as an index of
// X flattened (the padding not counted; the spatial axes in reverse with storage_order 1), int64.
SubgraphKernel max_pool_indices(const ModelGraph &g, const GraphNode &n) {
    require_float(g, n.inputs[0]);
    return pool_kernel(g, n, true);
}

// The pooling kernel of `n` (require_float and the output checks done): its values, or with
// `indices` MaxPool's positions of them.
SubgraphKernel pool_kernel(const ModelGraph &g, const GraphNode &n, bool indices) {
    const std::string &x = n.inputs[0];
    const Dims &xd = g.tensor(x).dims;
    const bool global = n.op_type.rfind("Global", 0) == 0,
               max = n.op_type.find("Max") != std::string::npos;
    const SpatialDecl d = spatial(
        global ? window_axes(g, GraphNode{n.index, n.name, n.op_type, n.inputs, n.outputs, {}},
                             Dims(xd.begin() + 2, xd.end()))
               : window_axes(g, n, n.ints_attr("kernel_shape", {})));
    const bool include_pad = !max && n.int_attr("count_include_pad", 0) != 0;
    const std::vector<AxisText> t = axis_texts(xd.size() - 2);
    std::vector<std::string> inside;
    for (const AxisText &a : t)
        inside.push_back(include_pad
                             ? a.position() + " < " + a.in + " + " + a.pad + " + " + a.pad_end
                             : a.position() + " >= " + a.pad + " && " + a.position() + " < " +
                                   a.in + " + " + a.pad);
    const std::string cond = join(inside, " && "), read = "X[n, c, " + join(d.reads, ", ") + "]";
    const std::string s = std::to_string(xd.size() - 2), at = "[n, c, " + join(d.ov, ", ") + "]";
    const std::string name = std::string(indices ? "max_pool_indices_" : max ? "max_pool_" : "avg_pool_") + s + "d" +
                             (indices && n.int_attr("storage_order", 0) != 0 ? "_column_major" : "") +
                             (include_pad ? "_include_pad" : "");
    std::string text = std::string(kGeneratedHeader) + "# " + s + "-D " +
                       (max ? "max" : "average") +
                       " pooling with per-axis strides, dilations and pads" +
                       (max           ? ""
                        : include_pad ? ", dividing by the window inside the padded X"
                                      : ", dividing by the window inside X") +
                       ".\n";
    text += "op " + name + "\nparam N, C, " + spatial_params(d) + "\nattr " + join(d.attrs, ", ") +
            "\n";
    text += "input  X: f32[N, C, " + join(d.in, ", ") + "] zero_pad\n";
    const std::string out = "f32[N, C, " + join(d.out, ", ") + "]";
    const std::string over = "(" + join(d.reducers, ", ") + ") ";
    if (indices) {
        // The flattened position of the window's element along every axis.
        std::string flat = "n * C + c";
        const bool column_major = n.int_attr("storage_order", 0) != 0;
        for (size_t i = 0; i < t.size(); i++) {
            const AxisText &a = t[column_major ? t.size() - 1 - i : i];
            flat = "(" + flat + ") * " + a.in + " + " + a.position() + " - " + a.pad;
        }
        text += "local  M: " + out + "\noutput I: i64[N, C, " + join(d.out, ", ") + "]\n";
        text += "M" + at + " = max" + over + "select(" + cond + ", " + read + ", -3.4e38)\n";
        text += "I" + at + " = min" + over + "select(" + cond + " && " + read + " == M" + at + ", " + flat +
                ", 2147483647)\n";
    } else if (max) {
        text += "output Y: " + out + "\nY" + at + " = max" + over + "select(" + cond + ", " + read +
                ", -3.4e38)\n";
    } else {
        const std::string cat = "[" + join(d.ov, ", ") + "]";
        text += "local  total: " + out + "\nlocal  count: f32[" + join(d.out, ", ") +
                "]\noutput Y: " + out + "\n";
        text += "total" + at + " = sum" + over + read + "\n";
        text += "count" + cat + " = sum" + over + "select(" + cond + ", 1.0, 0.0)\n";
        text += "Y" + at + " = total" + at + " / count" + cat + "\n";
    }
    return generated_kernel("pool", name, text, window_shape({{"N", xd[0]}, {"C", xd[1]}}, d),
                            {{"X", x}, indices ? std::pair<std::string, std::string>{"I", n.outputs[1]}
                                               : std::pair<std::string, std::string>{"Y", n.outputs[0]}});
}

// A zero point or scale of a quantized convolution read per output channel ([G, FG]) or as one
// value ([1]); its declaration goes to `decls`.
std::string per_channel_read(const ModelGraph &g, const std::string &t, const std::string &name, int64_t channels,
                             const std::string &type, std::string &decls) {
    const int64_t count = g.tensor(t).elements();
    if (count != 1 && count != channels) throw Unsupported{"a zero point or scale of neither 1 nor the channels' values"};
    decls += "input  " + name + ": " + type + (count == 1 ? "[1]\n" : "[G, FG]\n");
    return name + (count == 1 ? "[0]" : "[g, f]");
}

// Ones over X's spatial extents (uint8), zero-padded like X in the kernel: 1 where a window's
// position is inside X.
GraphTensor inside_mask(const std::string &y, const Dims &spatial) {
    GraphTensor ones;
    ones.name = y + "#inside";
    ones.dims = spatial;
    ones.elem_type = 2;  // uint8
    ones.kind = TensorKind::Weight;
    ones.raw.assign(size_t(product(spatial, 0, spatial.size())), '\1');
    return ones;
}

// QLinearConv's scales, zero point and bias as the kernel's inputs (into `decls` and `args`), and
// its requantizing statements over the int32 `sum`.
std::string requantized_conv_body(const ModelGraph &g, const GraphNode &n, int64_t channels, const std::string &sum,
                                  const std::string &dims, const std::string &at, std::string &decls,
                                  std::vector<std::pair<std::string, std::string>> &args) {
    decls += "input  XS: f32[1]\n";
    args.push_back({"XS", n.inputs[1]});
    const std::string scale = "XS[0] * " + per_channel_read(g, n.inputs[4], "WS", channels, "f32", decls) + " / YS[0]";
    args.push_back({"WS", n.inputs[4]});
    decls += "input  YS: f32[1]\n";
    args.push_back({"YS", n.inputs[6]});
    std::string zero = "0.0", bias;
    if (present(n, 7)) {
        decls += "input  YZ: " + type_name(g, n.inputs[7]) + "[1]\n";
        args.push_back({"YZ", n.inputs[7]});
        zero = "YZ[0]";
    }
    if (present(n, 8)) {
        decls += "input  bias: i32[G, FG]\n";
        args.push_back({"bias", n.inputs[8]});
        bias = "bias[g, f]";
    }
    return requantized_text(sum, bias, scale, zero, "Y", type_name(g, n.outputs[0]), dims, at);
}

// ConvInteger and QLinearConv: Conv's grouped form over u8 or i8 tensors, products of
// (x - x_zero_point)(w - w_zero_point) summed in int32. Padding contributes nothing: X's zero
// point is subtracted only inside X, where a ones mask the kernel carries (ONE, zero-padded like
// X) reads 1. QLinearConv adds the bias and requantizes: scaled by x_scale w_scale / y_scale,
// rounded half to even, y_zero_point added, saturated.
SubgraphKernel integer_convolution(const ModelGraph &g, const GraphNode &n) {
    const bool requant = n.op_type == "QLinearConv";
    const std::string &x = n.inputs[0], &w = n.inputs[requant ? 3 : 1], &y = n.outputs[0];
    const Dims &xd = g.tensor(x).dims, &wd = g.tensor(w).dims;
    if (xd.size() < 3 || xd.size() > 5 || wd.size() != xd.size()) throw Unsupported{"not a 1-D, 2-D or 3-D convolution"};
    const int64_t groups = n.int_attr("group", 1);
    if (groups <= 0 || xd[1] % groups != 0 || wd[0] % groups != 0 || wd[1] * groups != xd[1])
        throw Unsupported{"channels that do not divide into the groups"};
    const SpatialDecl d = spatial(window_axes(g, n, Dims(wd.begin() + 2, wd.end())));
    const std::string xzp = requant ? n.inputs[2] : (present(n, 2) ? n.inputs[2] : "");
    const std::string wzp = requant ? n.inputs[5] : (present(n, 3) ? n.inputs[3] : "");
    std::string decls = "input  X: " + type_name(g, x) + "[N, G, CG, " + join(d.in, ", ") + "] zero_pad\n" +
                        "input  ONE: u8[" + join(d.in, ", ") + "] zero_pad\n" + "input  Wt: " + type_name(g, w) +
                        "[G, FG, CG, " + join(d.kernel, ", ") + "]\n";
    const GraphTensor ones = inside_mask(y, Dims(xd.begin() + 2, xd.end()));
    std::vector<std::pair<std::string, std::string>> args = {{"X", x}, {"ONE", ones.name}, {"Wt", w}};
    std::vector<std::string> kv;
    for (const std::string &r : d.reducers) kv.push_back(r.substr(0, r.find(':')));
    std::string x_read = "X[n, g, c, " + join(d.reads, ", ") + "]", w_read = "Wt[g, f, c, " + join(kv, ", ") + "]";
    if (!xzp.empty()) {
        if (g.tensor(xzp).elements() != 1) throw Unsupported{"an input zero point of more than one value"};
        decls += "input  XZ: " + type_name(g, xzp) + "[1]\n";
        args.push_back({"XZ", xzp});
        x_read = "(" + x_read + " - XZ[0] * ONE[" + join(d.reads, ", ") + "])";
    }
    if (!wzp.empty()) {
        w_read = "(" + w_read + " - " + per_channel_read(g, wzp, "WZ", wd[0], type_name(g, wzp), decls) + ")";
        args.push_back({"WZ", wzp});
    }
    const std::string y_at = "[n, g, f, " + join(d.ov, ", ") + "]", out_dims = "[N, G, FG, " + join(d.out, ", ") + "]";
    const std::string sum = "sum(c: CG, " + join(d.reducers, ", ") + ") " + x_read + " * " + w_read;
    std::string name = std::string(requant ? "qlinear_conv_" : "conv_integer_") + std::to_string(xd.size() - 2) + "d" +
                       type_suffix(g, {x, w, y});
    const std::string body = requant ? requantized_conv_body(g, n, wd[0], sum, out_dims, y_at, decls, args)
                                     : "output Y: i32" + out_dims + "\nY" + y_at + " = " + sum + "\n";
    args.push_back({"Y", y});
    std::string text = std::string(kGeneratedHeader) + "# An ONNX " + n.op_type +
                       ": (X - x_zero_point)(W - w_zero_point) summed in int32 over grouped windows" +
                       (requant ? ", requantized" : "") + ".\n";
    text += "op " + name + "\nparam N, G, CG, FG, " + spatial_params(d) + "\nattr " + join(d.attrs, ", ") + "\n" + decls + body;
    SubgraphKernel k = generated_kernel("conv", name, text,
                                        window_shape({{"N", xd[0]}, {"G", groups}, {"CG", xd[1] / groups}, {"FG", wd[0] / groups}}, d),
                                        args);
    k.constants = {ones};
    return k;
}

} // namespace

std::vector<SubgraphKernel> window_kernels(const ModelGraph &g, const GraphNode &n) {
    if (n.op_type == "MaxPool" && n.outputs.size() > 1 && !n.outputs[1].empty()) {
        GraphNode values = n;
        values.outputs.resize(1);
        return {pool(g, values), max_pool_indices(g, n)};
    }
    if (n.op_type == "ConvInteger" || n.op_type == "QLinearConv")
        return {integer_convolution(g, n)};
    if (n.op_type == "Conv")
        return {convolution(g, n)};
    if (n.op_type == "ConvTranspose")
        return {transposed_convolution(g, n)};
    return {pool(g, n)};
}

} // namespace opgen::onnx_import
