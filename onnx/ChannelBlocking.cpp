#include "onnx/ChannelBlocking.h"

#include "base/Error.h"
#include "core/Shape.h"
#include "onnx/HeldLayout.h"
#include "onnx/OpText.h"
#include "onnx/Winograd.h"

#include <map>
#include <sstream>

namespace opgen::onnx_import {

namespace {

constexpr int64_t kBlock = 16;

const char *const kHeader = kGeneratedHeader;

using Shape = std::map<std::string, int64_t>;

// The epilogue steps of a convolution op named "conv2d[_bias][_add][_relu|_relu6]" (Partition's
// names; conv2d_nchw is the bundled one without any); false for any other name.
bool conv_steps(const std::string &op, std::vector<std::string> &steps) {
    if (op == "conv2d_nchw") return true;
    if (op.rfind("conv2d", 0) != 0) return false;
    std::stringstream rest(op.substr(6));
    std::string part;
    while (std::getline(rest, part, '_')) {
        if (part.empty()) continue;
        if (part != "bias" && part != "add" && part != "relu" && part != "relu6") return false;
        steps.push_back(part);
    }
    return true;
}

// The blocked convolution's text: X blocked (or NCHW when `nchw_in`), Wt in OIhw16i16o (Oihw16o),
// the epilogue `steps` on Z, Y blocked.
std::string conv_text(const std::string &name, bool nchw_in, const std::vector<std::string> &steps) {
    std::string at = "n, fo, y, x, fi";
    std::string text = std::string(kHeader) + "# 2-D convolution writing channel-blocked Y (nChw16c: channel f at [n, f / fb, y, x, f % fb])\n";
    text += nchw_in ? "# from NCHW X, weights as Oihw16o (F/fb x C x KH x KW x fb)"
                    : "# from blocked X, weights as OIhw16i16o (F/fb x C/cb x KH x KW x cb x fb)";
    text += "; reads outside X are zero";
    text += blocked_epilogue_doc(steps);
    text += ".\nop " + name + "\n";
    text += nchw_in ? "param N, C, H, W, FB, KH, KW, fb = 16\n" : "param N, CB, H, W, FB, KH, KW, cb = 16, fb = 16\n";
    text += "attr stride = 1, pad = 0, dilation = 1\n";
    text += "let OH = (H + 2*pad - dilation*(KH - 1) - 1) / stride + 1\n";
    text += "let OW = (W + 2*pad - dilation*(KW - 1) - 1) / stride + 1\n";
    text += "view KH == 1 && KW == 1 && stride == 1 && pad == 0 && H > 1: H = 1, W = H*W  # a GEMM over pixels\n";
    text += nchw_in ? "input  X: f32[N, C, H, W] zero_pad\ninput  Wt: f32[FB, C, KH, KW, fb]\n"
                    : "input  X: f32[N, CB, H, W, cb] zero_pad\ninput  Wt: f32[FB, CB, KH, KW, cb, fb]\n";
    for (const auto &s : steps) {
        if (s == "bias") text += "input  bias: f32[FB, fb]\n";
        if (s == "add") text += "input  R: f32[N, FB, OH, OW, fb]\n";
    }
    std::string iy = "y*stride + ry*dilation - pad", ix = "x*stride + rx*dilation - pad";
    std::string sum = nchw_in ? "sum(c: C, ry: KH, rx: KW) X[n, c, " + iy + ", " + ix + "] * Wt[fo, c, ry, rx, fi]"
                              : "sum(co: CB, ry: KH, rx: KW, ci: cb) X[n, co, " + iy + ", " + ix + ", ci] * Wt[fo, co, ry, rx, ci, fi]";
    if (steps.empty()) return text + "output Y: f32[N, FB, OH, OW, fb]\nY[" + at + "] = " + sum + "\n";
    text += "local  Z: f32[N, FB, OH, OW, fb]\noutput Y: f32[N, FB, OH, OW, fb]\n";
    text += "Z[" + at + "] = " + sum + "\n";
    return text + "Y[" + at + "] = " + blocked_epilogue(at, steps) + "\n";
}

// Pooling on blocked X, as max_pool2d and avg_pool2d do on NCHW.
std::string pool_text(const std::string &name, bool max) {
    std::string text = std::string(kHeader) + "# 2-D " + (max ? "max" : "average") +
                       " pooling on channel-blocked tensors (nChw16c), windows `stride` apart; " +
                       (max ? "padding never wins" : "padding reads as zero and is counted") + ".\n";
    text += "op " + name + "\nparam N, CB, H, W, KH = 2, KW = 2, cb = 16\nattr stride = 2, pad = 0\n";
    text += "let OH = (H + 2*pad - KH) / stride + 1\nlet OW = (W + 2*pad - KW) / stride + 1\n";
    text += "input  X: f32[N, CB, H, W, cb] zero_pad\noutput Y: f32[N, CB, OH, OW, cb]\n";
    std::string x = "X[n, co, y*stride + ry - pad, x*stride + rx - pad, ci]";
    if (!max) return text + "Y[n, co, y, x, ci] = sum(ry: KH, rx: KW) " + x + " / (KH*KW)\n";
    return text + "Y[n, co, y, x, ci] = max(ry: KH, rx: KW) select(y*stride + ry >= pad && y*stride + ry < H + pad &&\n"
                  "    x*stride + rx >= pad && x*stride + rx < W + pad, " + x + ", -3.4028234663852886e38)\n";
}

// NCHW viewed as N x CB x cb x H x W (the same bytes) to and from blocked N x CB x H x W x cb.
std::string reorder_text(const std::string &name, bool to_blocked) {
    std::string nchw = "f32[N, CB, cb, H, W]", blocked = "f32[N, CB, H, W, cb]";
    std::string text = std::string(kHeader) + "# Reorder " + (to_blocked ? "from NCHW to nChw16c" : "from nChw16c to NCHW") +
                       " (NCHW seen as N x CB x cb x H x W).\nop " + name + "\nparam N, CB, H, W, cb = 16\n";
    text += "input  X: " + (to_blocked ? nchw : blocked) + "\noutput Y: " + (to_blocked ? blocked : nchw) + "\n";
    return text + (to_blocked ? "Y[n, co, y, x, ci] = X[n, co, ci, y, x]\n" : "Y[n, co, ci, y, x] = X[n, co, y, x, ci]\n");
}

class Blocker {
public:
    Blocker(ModelGraph &g, Partition &p, bool winograd)
        : g_(g), p_(p), winograd_(winograd), held_(g, p, "nChw16c", [this](const std::string &from, const std::string &to, bool to_blocked) {
              return reorder(from, to, to_blocked);
          }) {}

    void run() {
        for (SubgraphKernel &k : held_.take_kernels()) {
            std::vector<std::string> steps;
            if (k.kind == "conv" && conv_steps(k.op, steps) && blockable_conv(k)) {
                conv(std::move(k), steps);
            } else if (k.kind == "pool" && held_.held(k.args[0].second)) {
                pool(std::move(k));
            } else {
                for (size_t a = 0; a + 1 < k.args.size(); a++) k.args[a].second = held_.in_layout(k.args[a].second, false);
                held_.push(std::move(k));
            }
        }
    }

private:
    ModelGraph &g_;
    Partition &p_;
    bool winograd_;
    HeldLayout held_;
    std::map<std::string, std::string> texts_;  // generated op -> text, to add each once

    bool blockable_conv(const SubgraphKernel &k) const {
        Shape s = parse_shape_text(k.shape);
        return s.at("F") % kBlock == 0 && s.at("N") >= 1;
    }

    // The shape of a reorder or pool over NCHW dimensions `d`, channels in blocks.
    static std::vector<std::pair<std::string, int64_t>> blocked_shape(const std::vector<int64_t> &d) {
        return {{"N", d[0]}, {"CB", d[1] / kBlock}, {"H", d[2]}, {"W", d[3]}};
    }

    // `k` running generated op `name` of `text`.
    SubgraphKernel generated(SubgraphKernel k, const std::string &name, const std::string &text) {
        k.op = name;
        k.generated = true;
        k.text = text;
        auto [it, fresh] = texts_.try_emplace(name, text);
        internal_check(fresh || it->second == text) << "two texts for generated op '" << name << "'";
        return k;
    }

    SubgraphKernel reorder(const std::string &from, const std::string &to, bool to_blocked) {
        SubgraphKernel k;
        k.kind = "copy";
        k.shape = shape_text(blocked_shape(g_.tensor(from).dims));
        k.args = {{"X", from}, {"Y", to}};
        std::string name = to_blocked ? "reorder_nchw_nchwc" : "reorder_nchwc_nchw";
        return generated(k, name, reorder_text(name, to_blocked));
    }

    void conv(SubgraphKernel k, const std::vector<std::string> &steps) {
        Shape s = parse_shape_text(k.shape);
        if (winograd_ && winograd_applies(s)) return winograd_conv(std::move(k), steps, s);
        bool nchw_in = s.at("C") % kBlock != 0;
        std::string name = std::string(nchw_in ? "conv2d_nchw_nchwc" : "conv2d_nchwc");
        for (const auto &st : steps) name += "_" + st;
        std::vector<std::pair<std::string, int64_t>> shape = {{"N", s.at("N")}};
        if (nchw_in) shape.push_back({"C", s.at("C")});
        else shape.push_back({"CB", s.at("C") / kBlock});
        shape.insert(shape.end(), {{"H", s.at("H")}, {"W", s.at("W")}, {"FB", s.at("F") / kBlock}, {"KH", s.at("KH")},
                                   {"KW", s.at("KW")}, {"stride", s.at("stride")}, {"pad", s.at("pad")},
                                   {"dilation", s.at("dilation")}});
        k.shape = shape_text(shape);
        for (size_t a = 0; a + 1 < k.args.size(); a++) {
            auto &[op_tensor, t] = k.args[a];
            if (op_tensor == "X") t = held_.in_layout(t, !nchw_in);
            else if (op_tensor == "Wt") t = relaid(t, nchw_in ? "Oihw16o" : "OIhw16i16o");
            else if (op_tensor == "R") t = held_.in_layout(t, true);
        }
        held_.push_held_output(generated(std::move(k), name, conv_text(name, nchw_in, steps)));
    }

    // The convolution `k` of shape `s` as Winograd F(2x2, 3x3)'s input transform, 16 products
    // and output transform with the epilogue `steps` (Winograd.h), over two intermediates named
    // after its output.
    void winograd_conv(SubgraphKernel k, const std::vector<std::string> &steps, const Shape &s) {
        const int64_t C = s.at("C"), F = s.at("F"), H = s.at("H"), W = s.at("W"), T = (H / 2) * (W / 2);
        std::map<std::string, std::string> arg(k.args.begin(), k.args.end());
        const std::string y = k.args.back().second, v = y + "@winograd_v", m = y + "@winograd_m";
        add_winograd_constants(!g_.tensor(arg.at("Wt")).data.empty());
        add_intermediate(v, {16, T, C});
        add_intermediate(m, {16, T, F});

        SubgraphKernel in = k;
        in.kind = "copy";
        in.nodes.clear();
        in.shape = shape_text({{"CB", C / kBlock}, {"H", H}, {"W", W}});
        in.args = {{"X", held_.in_layout(arg.at("X"), true)}, {"B2", "winograd_f23_B2"}, {"V", v}};
        held_.push(generated(std::move(in), "winograd_f23_in", winograd_in_text()));

        SubgraphKernel product = k;
        product.kind = "dense";
        product.op = "batch_matmul";
        product.generated = false;
        product.text.clear();
        product.nodes.clear();
        product.shape = shape_text({{"BATCH", 16}, {"M", T}, {"N", F}, {"K", C}});
        product.args = {{"A", v}, {"B", relaid(arg.at("Wt"), "winograd_f23")}, {"C", m}};
        held_.push(std::move(product));

        std::string name = "winograd_f23_out";
        for (const auto &st : steps) name += "_" + st;
        k.shape = shape_text({{"TY", H / 2}, {"TX", W / 2}, {"FB", F / kBlock}});
        k.args = {{"M", m}, {"A2", "winograd_f23_A2"}};
        if (arg.count("bias")) k.args.push_back({"bias", arg.at("bias")});
        if (arg.count("R")) k.args.push_back({"R", held_.in_layout(arg.at("R"), true)});
        k.args.push_back({"Y", y});
        held_.push_held_output(generated(std::move(k), name, winograd_out_text(name, steps)));
    }

    void add_winograd_constants(bool with_data) {
        for (GraphTensor &t : winograd_constants(with_data))
            if (!g_.tensors.count(t.name)) g_.tensors[t.name] = std::move(t);
    }

    void add_intermediate(const std::string &name, const std::vector<int64_t> &dims) {
        GraphTensor t;
        t.name = name;
        t.dims = dims;
        g_.tensors[name] = std::move(t);
    }

    void pool(SubgraphKernel k) {
        Shape s = parse_shape_text(k.shape);
        bool max = k.op == "max_pool2d";
        std::string name = max ? "max_pool2d_nchwc" : "avg_pool2d_nchwc";
        k.shape = shape_text({{"N", s.at("N")}, {"CB", s.at("C") / kBlock}, {"H", s.at("H")}, {"W", s.at("W")},
                              {"KH", s.at("KH")}, {"KW", s.at("KW")}, {"stride", s.at("stride")}, {"pad", s.at("pad")}});
        const std::vector<int64_t> &yd = g_.tensor(k.args.back().second).dims;
        SubgraphKernel pooled = generated(std::move(k), name, pool_text(name, max));
        // A 1 x 1 output is the same bytes in both layouts: it stays NCHW for its readers.
        if (yd[2] * yd[3] == 1) return held_.push(std::move(pooled));
        held_.push_held_output(std::move(pooled));
    }

    std::string relaid(const std::string &w, const std::string &layout) {
        WeightRelayout r = make_relayout(w, g_.tensor(w).dims, layout);
        std::string name = r.tensor;
        for (const auto &have : p_.relayouts)
            if (have.tensor == name) return name;
        p_.relayouts.push_back(std::move(r));
        return name;
    }
};

}  // namespace

void block_channels(ModelGraph &g, Partition &p, bool winograd) { Blocker(g, p, winograd).run(); }

}  // namespace opgen::onnx_import
