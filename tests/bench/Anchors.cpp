#include "tests/bench/Anchors.h"

#include <cblas.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <iterator>
#include <sstream>
#include <unordered_map>

namespace opgen::bench {

namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using Clock = std::chrono::steady_clock;

dnnl::engine &cpu_engine() {
    static dnnl::engine e(dnnl::engine::kind::cpu, 0);
    return e;
}

dnnl::stream &cpu_stream() {
    static dnnl::stream s(cpu_engine());
    return s;
}

float *ptr(const Problem &p, const char *name) {
    // oneDNN takes non-const handles; inputs are only read.
    return const_cast<float *>(p.inputs.at(name).data.data());
}

memory::desc plain(const memory::dims &dims, Tag tag) {
    return memory::desc(dims, memory::data_type::f32, tag);
}

// A oneDNN contender is a list of (primitive, arguments) steps run in order on one stream, plus
// optional steps that bring a blocked output back for the check.
class OnednnSteps : public Contender {
public:
    using Step = std::pair<dnnl::primitive, std::unordered_map<int, memory>>;

    explicit OnednnSteps(HostTensor out) : out_(std::move(out)) {}
    void run() override { execute(steps); }
    void sync_output() override { execute(sync); }
    HostTensor &output() override { return out_; }

    std::vector<Step> steps, sync;
    std::vector<memory> keep; // memories the steps use (weights, blocked buffers)

private:
    void execute(std::vector<Step> &list) {
        for (auto &s : list)
            s.first.execute(cpu_stream(), s.second);
        cpu_stream().wait();
    }
    HostTensor out_;
};

Entrant onednn_entrant(const std::string &name, const std::string &detail,
                       std::unique_ptr<OnednnSteps> c, bool own_layout, double setup_s) {
    Entrant e;
    e.name = name;
    e.family = "oneDNN";
    e.detail = detail;
    e.counts_as_onednn = own_layout;
    e.setup_s = setup_s;
    e.contender = std::move(c);
    return e;
}

double since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// oneDNN's matmul primitive on A, B and C in place, with these descriptions.
Entrant matmul_primitive(const Problem &p, const memory::desc &src, const memory::desc &wei,
                         const memory::desc &dst, const std::string &what, Clock::time_point t0) {
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, wei, dst), cpu_engine());
    auto c = std::make_unique<OnednnSteps>(p.make_output());
    memory ms(src, cpu_engine(), ptr(p, "A")), mw(wei, cpu_engine(), ptr(p, "B"));
    memory md(dst, cpu_engine(), c->output().data.data());
    c->steps.push_back(
        {dnnl::matmul(pd), {{DNNL_ARG_SRC, ms}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_DST, md}}});
    return onednn_entrant("oneDNN", what + " (" + std::string(pd.impl_info_str()) + ")",
                          std::move(c), true, since(t0));
}

Entrant matmul(const Problem &p) {
    auto t0 = Clock::now();
    const memory::dim M = p.value("M"), N = p.value("N"), K = p.value("K");
    return matmul_primitive(p, plain({M, K}, Tag::ab), plain({K, N}, Tag::ab),
                            plain({M, N}, Tag::ab), "matmul primitive, row-major A, B, C", t0);
}

// C = gelu(A B + bias) (exact GELU): oneDNN's matmul with a bias and an eltwise gelu_erf post-op.
Entrant matmul_bias_gelu(const Problem &p) {
    auto t0 = Clock::now();
    const memory::dim M = p.value("M"), N = p.value("N"), K = p.value("K");
    auto src = plain({M, K}, Tag::ab), wei = plain({K, N}, Tag::ab), dst = plain({M, N}, Tag::ab);
    auto bias = plain({1, N}, Tag::ab);
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, wei, bias, dst), attr, cpu_engine());
    auto c = std::make_unique<OnednnSteps>(p.make_output());
    memory ms(src, cpu_engine(), ptr(p, "A")), mw(wei, cpu_engine(), ptr(p, "B"));
    memory mb(bias, cpu_engine(), ptr(p, "bias"));
    memory md(dst, cpu_engine(), c->output().data.data());
    c->steps.push_back({dnnl::matmul(pd),
                        {{DNNL_ARG_SRC, ms}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_BIAS, mb}, {DNNL_ARG_DST, md}}});
    return onednn_entrant(
        "oneDNN", "matmul primitive with bias and gelu_erf post-op (" + std::string(pd.impl_info_str()) + ")",
        std::move(c), true, since(t0));
}

// Batched matmul with B given as BATCH x N x K (attention scores Q K^T): oneDNN's matmul with the
// weights' strides transposed (format acb), as a framework hands it K without copying.
Entrant batch_matmul_nt(const Problem &p) {
    auto t0 = Clock::now();
    const memory::dim L = p.value("BATCH"), M = p.value("M"), N = p.value("N"), K = p.value("K");
    return matmul_primitive(p, plain({L, M, K}, Tag::abc), plain({L, K, N}, Tag::acb),
                            plain({L, M, N}, Tag::abc), "matmul primitive, batched, B transposed",
                            t0);
}

// BlockedWithReorders times every reorder the NCHW op's contract needs (input, weights, output:
// the op takes OIHW weights on every call, and opgen's kernels pack theirs inside the timed call);
// BlockedWeightsUntimed reorders the weights once, untimed, as a framework does at model load.
enum class ConvVariant { BlockedWithReorders, BlockedWeightsUntimed, Plain, BlockedConvOnly };

Entrant convolution(const Problem &p, bool depthwise, ConvVariant v) {
    auto t0 = Clock::now();
    const memory::dim N = p.value("N"), C = p.value("C"), H = p.value("H"), W = p.value("W");
    const memory::dim F = depthwise ? C : p.value("F"), KH = p.value("KH"), KW = p.value("KW");
    const memory::dim OH = p.value("OH"), OW = p.value("OW");
    const memory::dim s = p.value("stride"), pad = p.value("pad"), d = p.value("dilation");
    memory::dims src_dims{N, C, H, W}, dst_dims{N, F, OH, OW};
    memory::dims wei_dims = depthwise ? memory::dims{C, 1, 1, KH, KW} : memory::dims{F, C, KH, KW};
    Tag wei_tag = depthwise ? Tag::goihw : Tag::oihw;
    // The right padding that gives exactly OH x OW outputs.
    memory::dim pad_b = (OH - 1) * s + (KH - 1) * d + 1 - H - pad;
    memory::dim pad_r = (OW - 1) * s + (KW - 1) * d + 1 - W - pad;
    bool blocked = v != ConvVariant::Plain;
    auto user_src = plain(src_dims, Tag::nchw), user_wei = plain(wei_dims, wei_tag);
    auto user_dst = plain(dst_dims, Tag::nchw);
    auto any = [&](const memory::dims &dims) { return plain(dims, Tag::any); };
    dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
        blocked ? any(src_dims) : user_src, blocked ? any(wei_dims) : user_wei,
        blocked ? any(dst_dims) : user_dst, {s, s}, {d - 1, d - 1}, {pad, pad}, {pad_b, pad_r});
    dnnl::convolution_forward::primitive_desc pd(desc, cpu_engine());

    auto c = std::make_unique<OnednnSteps>(p.make_output());
    memory x(user_src, cpu_engine(), ptr(p, "X"));
    memory wt(user_wei, cpu_engine(), ptr(p, "Wt"));
    memory y(user_dst, cpu_engine(), c->output().data.data());
    // Weights: reordered when the primitive wants another layout; once, here, except in the
    // variant that times it on every call.
    memory conv_w = wt;
    bool reorder_w = pd.weights_desc() != user_wei;
    if (reorder_w) {
        conv_w = memory(pd.weights_desc(), cpu_engine());
        dnnl::reorder(wt, conv_w).execute(cpu_stream(), wt, conv_w);
        cpu_stream().wait();
    }
    auto step_w =
        OnednnSteps::Step{dnnl::reorder(wt, conv_w), {{DNNL_ARG_FROM, wt}, {DNNL_ARG_TO, conv_w}}};
    memory conv_x = x, conv_y = y;
    bool reorder_x = pd.src_desc() != user_src, reorder_y = pd.dst_desc() != user_dst;
    if (reorder_x)
        conv_x = memory(pd.src_desc(), cpu_engine());
    if (reorder_y)
        conv_y = memory(pd.dst_desc(), cpu_engine());
    auto step_x =
        OnednnSteps::Step{dnnl::reorder(x, conv_x), {{DNNL_ARG_FROM, x}, {DNNL_ARG_TO, conv_x}}};
    auto step_y =
        OnednnSteps::Step{dnnl::reorder(conv_y, y), {{DNNL_ARG_FROM, conv_y}, {DNNL_ARG_TO, y}}};
    auto step_conv = OnednnSteps::Step{
        dnnl::convolution_forward(pd),
        {{DNNL_ARG_SRC, conv_x}, {DNNL_ARG_WEIGHTS, conv_w}, {DNNL_ARG_DST, conv_y}}};
    if (v == ConvVariant::BlockedConvOnly) {
        if (reorder_x) {
            step_x.first.execute(cpu_stream(), step_x.second);
            cpu_stream().wait();
        }
        c->steps.push_back(step_conv);
        if (reorder_y)
            c->sync.push_back(step_y);
    } else {
        if (reorder_w && v == ConvVariant::BlockedWithReorders)
            c->steps.push_back(step_w);
        if (reorder_x)
            c->steps.push_back(step_x);
        c->steps.push_back(step_conv);
        if (reorder_y)
            c->steps.push_back(step_y);
    }
    c->keep = {conv_w, conv_x, conv_y};
    std::ostringstream detail;
    detail << (depthwise ? "grouped convolution, groups=C; " : "") << "impl " << pd.impl_info_str();
    if (blocked) {
        detail << "; layouts: src " << (reorder_x ? "blocked" : "nchw") << ", dst "
               << (reorder_y ? "blocked" : "nchw") << ", weights "
               << (reorder_w ? (v == ConvVariant::BlockedWithReorders ? "blocked, reordered every call"
                                                                      : "blocked, reordered once")
                             : "oihw");
    }
    switch (v) {
    case ConvVariant::BlockedWithReorders:
        return onednn_entrant("oneDNN blocked+reorders", detail.str(), std::move(c), true,
                              since(t0));
    case ConvVariant::BlockedWeightsUntimed:
        return onednn_entrant("oneDNN blocked+reorders, weights untimed", detail.str(),
                              std::move(c), false, since(t0));
    case ConvVariant::Plain:
        return onednn_entrant("oneDNN NCHW", detail.str(), std::move(c), true, since(t0));
    case ConvVariant::BlockedConvOnly:
        break;
    }
    return onednn_entrant("oneDNN blocked (conv only)", detail.str(), std::move(c), false,
                          since(t0));
}

// The channel-blocked ops (conv2d_nchwc, depthwise_conv2d_nchwc) against oneDNN's primitive on
// the same layouts, forced: nChw16c (or nChw8c) data, OIhw16i16o weights (Goihw16g depthwise),
// which are the ops' own row-major layouts, so nothing is reordered and the output is checked as
// it comes. Block sizes oneDNN has no tag for (anything but 8 or 16, or cb != fb) are unsupported.
Entrant blocked_convolution(const Problem &p, bool depthwise) {
    auto t0 = Clock::now();
    const memory::dim cb = p.value("cb"), fb = depthwise ? cb : p.value("fb");
    if (cb != fb || (cb != 8 && cb != 16)) {
        throw dnnl::error(dnnl_unimplemented,
                          "the bench maps only cb = fb = 8 or 16 to oneDNN's blocked tags");
    }
    const bool b16 = cb == 16;
    const memory::dim N = p.value("N"), C = p.value("CB") * cb, H = p.value("H"), W = p.value("W");
    const memory::dim F = depthwise ? C : p.value("FB") * fb, KH = p.value("KH"),
                      KW = p.value("KW");
    const memory::dim OH = p.value("OH"), OW = p.value("OW");
    const memory::dim s = p.value("stride"), pad = p.value("pad"), d = p.value("dilation");
    memory::dim pad_b = (OH - 1) * s + (KH - 1) * d + 1 - H - pad;
    memory::dim pad_r = (OW - 1) * s + (KW - 1) * d + 1 - W - pad;
    Tag act = b16 ? Tag::nChw16c : Tag::nChw8c;
    Tag wtag =
        depthwise ? (b16 ? Tag::Goihw16g : Tag::Goihw8g) : (b16 ? Tag::OIhw16i16o : Tag::OIhw8i8o);
    auto src = plain({N, C, H, W}, act), dst = plain({N, F, OH, OW}, act);
    auto wei = plain(depthwise ? memory::dims{C, 1, 1, KH, KW} : memory::dims{F, C, KH, KW}, wtag);
    dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                         dnnl::algorithm::convolution_direct, src, wei, dst, {s, s},
                                         {d - 1, d - 1}, {pad, pad}, {pad_b, pad_r});
    dnnl::convolution_forward::primitive_desc pd(desc, cpu_engine());
    auto c = std::make_unique<OnednnSteps>(p.make_output());
    memory x(src, cpu_engine(), ptr(p, "X")), wt(wei, cpu_engine(), ptr(p, "Wt"));
    memory y(dst, cpu_engine(), c->output().data.data());
    c->steps.push_back({dnnl::convolution_forward(pd),
                        {{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, wt}, {DNNL_ARG_DST, y}}});
    std::string detail =
        std::string(depthwise ? "grouped convolution, groups=C; " : "") + "impl " +
        pd.impl_info_str() + "; layouts: src and dst " + (b16 ? "nChw16c" : "nChw8c") +
        ", weights " +
        (depthwise ? (b16 ? "Goihw16g" : "Goihw8g") : (b16 ? "OIhw16i16o" : "OIhw8i8o"));
    return onednn_entrant("oneDNN blocked", detail, std::move(c), true, since(t0));
}

Entrant softmax(const Problem &p) {
    auto t0 = Clock::now();
    const memory::dim M = p.value("M"), N = p.value("N");
    auto md = plain({M, N}, Tag::ab);
    dnnl::softmax_forward::primitive_desc pd(
        dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, md, 1), cpu_engine());
    auto c = std::make_unique<OnednnSteps>(p.make_output());
    memory x(md, cpu_engine(), ptr(p, "X")), y(md, cpu_engine(), c->output().data.data());
    c->steps.push_back({dnnl::softmax_forward(pd), {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}}});
    return onednn_entrant("oneDNN",
                          "softmax primitive over axis 1 (" + std::string(pd.impl_info_str()) + ")",
                          std::move(c), true, since(t0));
}

Entrant layernorm(const Problem &p) {
    auto t0 = Clock::now();
    const memory::dim M = p.value("M"), N = p.value("N");
    auto md = plain({M, N}, Tag::ab);
    auto flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
    dnnl::layer_normalization_forward::primitive_desc pd(
        dnnl::layer_normalization_forward::desc(dnnl::prop_kind::forward_inference, md, 1e-5f,
                                                flags),
        cpu_engine());
    auto c = std::make_unique<OnednnSteps>(p.make_output());
    auto vec = plain({N}, Tag::a);
    memory x(md, cpu_engine(), ptr(p, "X")), y(md, cpu_engine(), c->output().data.data());
    memory scale(vec, cpu_engine(), ptr(p, "gamma")), shift(vec, cpu_engine(), ptr(p, "beta"));
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}, {DNNL_ARG_SCALE, scale}, {DNNL_ARG_SHIFT, shift}};
    if (pd.mean_desc().get_size() > 0) {
        args[DNNL_ARG_MEAN] = memory(pd.mean_desc(), cpu_engine());
        args[DNNL_ARG_VARIANCE] = memory(pd.variance_desc(), cpu_engine());
    }
    c->steps.push_back({dnnl::layer_normalization_forward(pd), args});
    return onednn_entrant("oneDNN",
                          "layer_normalization primitive, scale and shift (" +
                              std::string(pd.impl_info_str()) + ")",
                          std::move(c), true, since(t0));
}

// Runs one factory, turning oneDNN's refusal into data.
Entrant guarded(const std::string &name, const std::function<Entrant()> &make) {
    try {
        return make();
    } catch (const dnnl::error &e) {
        return Entrant::failed(name, "oneDNN", "unsupported", std::string("oneDNN: ") + e.what());
    }
}

class Sgemm : public Contender {
public:
    explicit Sgemm(const Problem &p)
        : out_(p.make_output()), M_(int(p.value("M"))), N_(int(p.value("N"))),
          K_(int(p.value("K"))), A_(p.inputs.at("A").data.data()),
          B_(p.inputs.at("B").data.data()) {}
    void run() override {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M_, N_, K_, 1.0f, A_, K_, B_, N_,
                    0.0f, out_.data.data(), N_);
    }
    HostTensor &output() override { return out_; }

private:
    HostTensor out_;
    int M_, N_, K_;
    const float *A_, *B_;
};

const char *isa_name(dnnl_cpu_isa_t isa) {
    switch (isa) {
    case dnnl_cpu_isa_sse41:
        return "sse41";
    case dnnl_cpu_isa_avx:
        return "avx";
    case dnnl_cpu_isa_avx2:
        return "avx2";
    case dnnl_cpu_isa_avx2_vnni:
        return "avx2_vnni";
    case dnnl_cpu_isa_avx512_core:
        return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni:
        return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16:
        return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx:
        return "avx512_core_amx";
    default:
        return "other";
    }
}

// OpenBLAS cores without AVX: what a build falls back to on a processor it does not know (0.3.21
// on an Intel model 207 host reports Prescott, its SSE3 kernels).
bool is_pre_avx_core(const std::string &core) {
    static const char *const old[] = {"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Atom", "Unknown"};
    return std::any_of(std::begin(old), std::end(old), [&](const char *c) { return core == c; });
}

} // namespace

std::vector<Entrant> make_onednn(const Problem &p) {
    const std::string &op = p.def->name;
    std::vector<Entrant> out;
    if (op == "matmul")
        out.push_back(guarded("oneDNN", [&] { return matmul(p); }));
    if (op == "matmul_bias_gelu")
        out.push_back(guarded("oneDNN", [&] { return matmul_bias_gelu(p); }));
    if (op == "batch_matmul_nt")
        out.push_back(guarded("oneDNN", [&] { return batch_matmul_nt(p); }));
    if (op == "conv2d_nchw" || op == "depthwise_conv2d") {
        bool dw = op == "depthwise_conv2d";
        out.push_back(guarded("oneDNN blocked+reorders", [&] {
            return convolution(p, dw, ConvVariant::BlockedWithReorders);
        }));
        out.push_back(guarded("oneDNN blocked+reorders, weights untimed", [&] {
            return convolution(p, dw, ConvVariant::BlockedWeightsUntimed);
        }));
        out.push_back(
            guarded("oneDNN NCHW", [&] { return convolution(p, dw, ConvVariant::Plain); }));
        out.push_back(guarded("oneDNN blocked (conv only)",
                              [&] { return convolution(p, dw, ConvVariant::BlockedConvOnly); }));
    }
    if (op == "conv2d_nchwc" || op == "depthwise_conv2d_nchwc") {
        bool dw = op == "depthwise_conv2d_nchwc";
        out.push_back(guarded("oneDNN blocked", [&] { return blocked_convolution(p, dw); }));
    }
    if (op == "softmax")
        out.push_back(guarded("oneDNN", [&] { return softmax(p); }));
    if (op == "layernorm")
        out.push_back(guarded("oneDNN", [&] { return layernorm(p); }));
    if (out.empty()) {
        out.push_back(Entrant::failed("oneDNN", "oneDNN", "unsupported",
                                      "the bench wires no oneDNN primitive to op '" + op + "'"));
    }
    return out;
}

std::vector<Entrant> make_openblas(const Problem &p) {
    if (p.def->name != "matmul")
        return {};
    Entrant e;
    e.name = "OpenBLAS";
    e.family = "OpenBLAS";
    e.detail = "cblas_sgemm, row-major";
    e.contender = std::make_unique<Sgemm>(p);
    std::vector<Entrant> out;
    out.push_back(std::move(e));
    return out;
}

std::string onednn_description() {
    const dnnl_version_t *v = dnnl_version();
    std::ostringstream s;
    s << "oneDNN " << v->major << "." << v->minor << "." << v->patch << " (" << v->hash << "), ISA "
      << isa_name(dnnl_get_effective_cpu_isa()) << ", OpenMP threading";
    return s.str();
}

std::string openblas_description() {
    std::ostringstream s;
    const std::string core = openblas_get_corename();
    s << openblas_get_config() << ", core " << core;
    if (is_pre_avx_core(core) && __builtin_cpu_supports("avx512f"))
        s << " (a fallback on this AVX-512 host: OpenBLAS runs below its best here; "
             "OPENBLAS_CORETYPE=SkylakeX gives it its AVX-512 kernels)";
    return s.str();
}

} // namespace opgen::bench
