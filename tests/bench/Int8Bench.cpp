// opgen_int8_bench (docs/design.md §8.2): opgen's int8 matmul (matmul_u8s8: u8 A x s8 B pre-packed
// in groups of 4 -> s32) against oneDNN 2.6's int8 matmul (u8 x s8 -> s32, weights reordered into
// its own layout before timing, as a deployed model's are) and against opgen's own float32 matmul
// of the same shape; likewise opgen's bf16 matmul (matmul_bf16, f32 sums) against oneDNN's bf16
// matmul; with the host's measured int8 (vpdpbusd, and AMX tdpbusd where the host has it) and fp32
// (FMA) peaks, in one interleaved run.
// opgen's kernels are the winners the cache holds (`opgen tune` puts them there;
// scripts/bench/int8.sh does), or the heuristic point where it holds none. Every output is
// checked before timing: opgen's int8 against the reference exactly, oneDNN's int8 against opgen's
// exactly, the float32 ones against the reference. Then the requantizing int8 kernels (u8
// outputs, per-channel scales, a zero point): opgen's matmul_u8s8_requant at the same shapes and
// conv2d_nhwc_u8s8_requant at ResNet-50's layers, each against oneDNN's int8 matmul / convolution
// with the same output scales, zero point and s32 bias, timed in pairs interleaved round by round.
// Built with -DOPGEN_BUILD_BENCH=ON.
#include "tests/bench/DotPeak.h"
#include "tests/bench/Machine.h"
#include "tests/bench/Threads.h"

#include "codegen/KernelKeys.h"
#include "core/Kernel.h"
#include "core/OpLibrary.h"
#include "core/Schedule.h"
#include "store/KernelCache.h"

#include <CLI/CLI.hpp>
#include <dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <unordered_map>

using namespace opgen;

namespace {

using Clock = std::chrono::steady_clock;

struct MatmulShape {
    int64_t m, n, k;
    std::string text() const {
        return "M=" + std::to_string(m) + ",N=" + std::to_string(n) + ",K=" + std::to_string(k);
    }
};

// A cached winner (or the heuristic point) of an op at a shape, compiled and bound to seeded inputs.
struct OpgenRun {
    ComputeDef def;
    BoundShape shape;
    std::map<std::string, HostTensor> inputs;
    HostTensor out;
    std::string source;  // "cache: <summary>" or "heuristic: <summary>"
    std::unique_ptr<LoweredOp> op;
    std::unique_ptr<JitKernel> kernel;
};

std::unique_ptr<OpgenRun> opgen_run(const std::string &op, const std::string &shape,
                                    const Target &host, int threads, db::KernelCache *cache) {
    auto r = std::make_unique<OpgenRun>();
    r->def = OpLibrary::standard().load(op);
    r->shape = bind_shape(r->def, shape);
    std::optional<db::KernelRecord> rec;
    if (cache) rec = cache->lookup(kernel_key(r->def, r->shape, host, threads));
    SchedulePoint p = rec ? SchedulePoint::from_json(nlohmann::json::parse(rec->schedule_json))
                          : heuristic_point(r->def, r->shape, host);
    r->source = (rec ? "cache: " : "heuristic: ") + p.summary();
    r->inputs = random_inputs(r->def, r->shape, 1);
    r->out = make_host_tensor(r->def.output().dtype, r->shape.dims.at(r->def.output().name));
    r->op = std::make_unique<LoweredOp>(lower_for_point(r->def, r->shape, &p));
    apply_schedule(*r->op, p, host);
    r->kernel = std::make_unique<JitKernel>(*r->op, host);
    r->kernel->bind(r->inputs, r->out);
    return r;
}

// oneDNN's matmul of `src` x `wei` -> `dst` types on plain row-major A and C; the weights given
// row-major and reordered into the layout the primitive picks (format_tag::any) before any call.
struct OnednnRun {
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};
    dnnl::matmul prim;
    dnnl::memory a, b, c;
    std::string impl;

    OnednnRun(const MatmulShape &s, dnnl::memory::data_type src, dnnl::memory::data_type wei,
              dnnl::memory::data_type dst, void *a_data, void *b_plain, void *c_data) {
        using dnnl::memory;
        memory::desc a_md({s.m, s.k}, src, memory::format_tag::ab);
        memory::desc b_md({s.k, s.n}, wei, memory::format_tag::any);
        memory::desc c_md({s.m, s.n}, dst, memory::format_tag::ab);
        dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), engine);
        impl = pd.impl_info_str();
        prim = dnnl::matmul(pd);
        a = memory(a_md, engine, a_data);
        c = memory(c_md, engine, c_data);
        memory plain({{s.k, s.n}, wei, memory::format_tag::ab}, engine, b_plain);
        b = memory(pd.weights_desc(), engine);
        dnnl::reorder(plain, b).execute(stream, plain, b);
        stream.wait();
    }
    void run() {
        prim.execute(stream, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
        stream.wait();
    }
};

// The logical K x N matrix of a packed B[K/g, N, g] (matmul_u8s8: g = 4 s8; matmul_bf16: g = 2
// bf16), element by element in its own width.
template <typename T>
std::vector<T> unpacked_b(const HostTensor &packed, const MatmulShape &s, int64_t g) {
    std::vector<T> b(size_t(s.k * s.n));
    const T *p = static_cast<const T *>(packed.host());
    for (int64_t k = 0; k < s.k; k++) {
        for (int64_t n = 0; n < s.n; n++) b[size_t(k * s.n + n)] = p[(k / g) * s.n * g + n * g + k % g];
    }
    return b;
}

// A timed call with its per-round medians.
struct Contender {
    std::string name;
    std::function<void()> call;
    std::vector<double> round_ms;
};

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// The median call of `c` over calls adding up to at least `min_ms` (at least 3), after a warm-up.
double time_window(Contender &c, double min_ms) {
    c.call();
    std::vector<double> calls;
    double total = 0;
    while (total < min_ms || calls.size() < 3) {
        auto t0 = Clock::now();
        c.call();
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        calls.push_back(ms);
        total += ms;
    }
    return median(calls);
}

// Median over rounds of the per-round ratio a / b (each round's windows are side by side).
double round_ratio(const Contender &a, const Contender &b) {
    std::vector<double> r;
    for (size_t i = 0; i < a.round_ms.size(); i++) r.push_back(a.round_ms[i] / b.round_ms[i]);
    return median(r);
}

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

// One shape's medians (ms) and ratios, for the tables.
struct Row {
    MatmulShape s;
    double i8 = 0, dnnl8 = 0, f32 = 0, dnnlf = 0, bf = 0, dnnlbf = 0;
    double i8_vs_dnnl = 0, i8_vs_f32 = 0, bf_vs_dnnl = 0, bf_vs_f32 = 0;
    bool exact = false, bf_ok = false;
};

// Checks every output, then times the six contenders of one shape interleaved.
Row bench_shape(const MatmulShape &s, const Target &host, int threads, db::KernelCache *cache, int rounds,
                double window_ms) {
    auto i8 = opgen_run("matmul_u8s8", s.text(), host, threads, cache);
    auto f32 = opgen_run("matmul", s.text(), host, threads, cache);
    auto bf = opgen_run("matmul_bf16", s.text(), host, threads, cache);
    std::vector<int8_t> b8 = unpacked_b<int8_t>(i8->inputs.at("B"), s, 4);
    std::vector<uint16_t> bbf = unpacked_b<uint16_t>(bf->inputs.at("B"), s, 2);
    std::vector<int32_t> dnnl_c(size_t(s.m * s.n));
    std::vector<float> dnnl_f(size_t(s.m * s.n)), dnnl_bf(size_t(s.m * s.n));
    using dt = dnnl::memory::data_type;
    OnednnRun dnnl8(s, dt::u8, dt::s8, dt::s32, i8->inputs.at("A").host(), b8.data(), dnnl_c.data());
    OnednnRun dnnlf(s, dt::f32, dt::f32, dt::f32, f32->inputs.at("A").host(), f32->inputs.at("B").host(), dnnl_f.data());
    OnednnRun dnnlbf(s, dt::bf16, dt::bf16, dt::f32, bf->inputs.at("A").host(), bbf.data(), dnnl_bf.data());

    for (auto *r : {i8.get(), f32.get(), bf.get()}) r->kernel->run();
    dnnl8.run();
    Verification v8 = verify_output(i8->def, i8->shape, i8->inputs, i8->out);
    Verification v32 = verify_output(f32->def, f32->shape, f32->inputs, f32->out);
    Verification vbf = verify_output(bf->def, bf->shape, bf->inputs, bf->out);
    int64_t dnnl_mismatch = 0;
    for (int64_t i = 0; i < s.m * s.n; i++) dnnl_mismatch += i8->out.at(i) != double(dnnl_c[size_t(i)]);
    std::cerr << s.text() << ": opgen int8 " << (v8.ok ? "exact" : "WRONG " + v8.first_mismatch) << " at "
              << v8.points_checked << " points; oneDNN int8 " << dnnl_mismatch << " of " << s.m * s.n
              << " points differ from opgen's; opgen f32 " << (v32.ok ? "ok" : "WRONG " + v32.first_mismatch)
              << "; opgen bf16 " << (vbf.ok ? "ok" : "WRONG " + vbf.first_mismatch) << "\n"
              << "  opgen int8 " << i8->source << "\n  opgen f32  " << f32->source << "\n  opgen bf16 "
              << bf->source << "\n  oneDNN int8 " << dnnl8.impl << ", f32 " << dnnlf.impl << ", bf16 "
              << dnnlbf.impl << "\n";

    std::vector<Contender> cs{{"opgen int8", [&] { i8->kernel->run(); }, {}},
                              {"oneDNN int8", [&] { dnnl8.run(); }, {}},
                              {"opgen f32", [&] { f32->kernel->run(); }, {}},
                              {"oneDNN f32", [&] { dnnlf.run(); }, {}},
                              {"opgen bf16", [&] { bf->kernel->run(); }, {}},
                              {"oneDNN bf16", [&] { dnnlbf.run(); }, {}}};
    for (int r = 0; r < rounds; r++) {
        for (auto &c : cs) c.round_ms.push_back(time_window(c, window_ms));
    }
    Row row{s};
    row.i8 = median(cs[0].round_ms);
    row.dnnl8 = median(cs[1].round_ms);
    row.f32 = median(cs[2].round_ms);
    row.dnnlf = median(cs[3].round_ms);
    row.bf = median(cs[4].round_ms);
    row.dnnlbf = median(cs[5].round_ms);
    row.i8_vs_dnnl = 1.0 / round_ratio(cs[0], cs[1]);
    row.i8_vs_f32 = 1.0 / round_ratio(cs[0], cs[2]);
    row.bf_vs_dnnl = 1.0 / round_ratio(cs[4], cs[5]);
    row.bf_vs_f32 = 1.0 / round_ratio(cs[4], cs[2]);
    row.exact = v8.ok && dnnl_mismatch == 0;
    row.bf_ok = vbf.ok;
    return row;
}

// The host's peaks measured in the run (tests/bench/DotPeak.h): int8 on vpdpbusd and on AMX tiles
// (GOP/s), bf16 on vdpbf16ps (GFLOP/s); 0 where the host lacks the instruction.
struct Peaks {
    double int8 = 0, amx = 0, bf16 = 0;
};

double gops(const MatmulShape &s, double ms) {
    return 2.0 * double(s.m) * double(s.n) * double(s.k) / ms / 1e6;
}

// "n%" of `peak`, or "n/a" without one.
std::string percent_of(double gops, double peak) {
    return peak > 0 ? fixed(100 * gops / peak, 0) + "%" : "n/a";
}

void print_tables(const std::vector<Row> &rows, int threads, const Peaks &peaks) {
    std::cout << "\n| M x N x K | threads | opgen int8 ms | oneDNN int8 ms | opgen f32 ms | oneDNN f32 ms | "
                 "opgen int8 GOP/s | int8: oneDNN/opgen | int8: opgen f32/opgen int8 | % int8 peak | % AMX peak | "
                 "check |\n"
              << "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
    for (const Row &r : rows) {
        std::cout << "| " << r.s.m << "x" << r.s.n << "x" << r.s.k << " | " << threads << " | " << fixed(r.i8, 3)
                  << " | " << fixed(r.dnnl8, 3) << " | " << fixed(r.f32, 3) << " | " << fixed(r.dnnlf, 3) << " | "
                  << fixed(gops(r.s, r.i8), 0) << " | " << fixed(r.i8_vs_dnnl, 2) << "x | " << fixed(r.i8_vs_f32, 2)
                  << "x | " << percent_of(gops(r.s, r.i8), peaks.int8) << " | " << percent_of(gops(r.s, r.i8), peaks.amx)
                  << " | " << (r.exact ? "exact" : "MISMATCH") << " |\n";
    }
    std::cout << "\n| M x N x K | threads | opgen bf16 ms | oneDNN bf16 ms | opgen bf16 GFLOP/s | bf16: oneDNN/opgen "
                 "| bf16: opgen f32/opgen bf16 | % bf16 peak | check |\n"
              << "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
    for (const Row &r : rows) {
        std::cout << "| " << r.s.m << "x" << r.s.n << "x" << r.s.k << " | " << threads << " | " << fixed(r.bf, 3)
                  << " | " << fixed(r.dnnlbf, 3) << " | " << fixed(gops(r.s, r.bf), 0) << " | "
                  << fixed(r.bf_vs_dnnl, 2) << "x | " << fixed(r.bf_vs_f32, 2) << "x | "
                  << percent_of(gops(r.s, r.bf), peaks.bf16) << " | "
                  << (r.bf_ok ? "ok" : "MISMATCH") << " |\n";
    }
    std::cout << std::flush;
}

// --- Requantizing int8 kernels: u8 out, per-channel scales, a zero point (docs/design.md §8.2)
// -----

// oneDNN's int8 matmul or convolution with the same epilogue as opgen's requantizing ops: s32 bias,
// output scales per output channel (mask on the channel dimension) and a destination zero point,
// u8 destination; activations in the layout opgen's op reads (row-major A; NHWC), weights given
// plain and reordered into the primitive's own layout before any call.
struct OnednnRequant {
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};
    dnnl::primitive prim;
    std::unordered_map<int, dnnl::memory> args;
    std::string impl;

    // `primitive` made from `pd`; `wei_plain` in the plain layout of `wei_plain_md`.
    void finish(dnnl::primitive primitive, const dnnl::primitive_desc_base &pd,
                const dnnl::memory::desc &src, const dnnl::memory::desc &bias,
                const dnnl::memory::desc &dst, const dnnl::memory::desc &wei_plain_md,
                void *src_data, void *wei_plain, void *bias_data, void *dst_data) {
        impl = pd.impl_info_str();
        prim = std::move(primitive);
        dnnl::memory plain(wei_plain_md, engine, wei_plain);
        dnnl::memory wei(pd.weights_desc(), engine);
        dnnl::reorder(plain, wei).execute(stream, plain, wei);
        stream.wait();
        args = {{DNNL_ARG_SRC, dnnl::memory(src, engine, src_data)},
                {DNNL_ARG_WEIGHTS, wei},
                {DNNL_ARG_BIAS, dnnl::memory(bias, engine, bias_data)},
                {DNNL_ARG_DST, dnnl::memory(dst, engine, dst_data)}};
    }
    void run() {
        prim.execute(stream, args);
        stream.wait();
    }
};

dnnl::primitive_attr requant_attr(const HostTensor &scale, int channel_dim, int32_t zp) {
    dnnl::primitive_attr attr;
    std::vector<float> scales(size_t(scale.elements()));
    for (int64_t i = 0; i < scale.elements(); i++)
        scales[size_t(i)] = float(scale.at(i));
    attr.set_output_scales(1 << channel_dim, scales);
    attr.set_zero_points(DNNL_ARG_DST, 0, {zp});
    return attr;
}

std::unique_ptr<OnednnRequant> onednn_requant_matmul(OpgenRun &r, std::vector<int8_t> &b_plain,
                                                     void *dst) {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    const int64_t m = r.shape.values.at("M"), n = r.shape.values.at("N"),
                  k = r.shape.values.at("K");
    auto o = std::make_unique<OnednnRequant>();
    dnnl::memory::desc a({m, k}, dt::u8, tag::ab), b({k, n}, dt::s8, tag::any),
        bias({1, n}, dt::s32, tag::ab), c({m, n}, dt::u8, tag::ab);
    dnnl::matmul::primitive_desc pd(
        dnnl::matmul::desc(a, b, bias, c),
        requant_attr(r.inputs.at("scale"), 1, int32_t(r.inputs.at("zp").at(0))), o->engine);
    o->finish(dnnl::matmul(pd), pd, a, bias, c, {{k, n}, dt::s8, tag::ab}, r.inputs.at("A").host(),
              b_plain.data(), r.inputs.at("bias").host(), dst);
    return o;
}

// The plain OIHW filter of conv2d_nhwc_u8s8_requant's packed Wt[ry, rx, c / 4, f, c % 4].
std::vector<int8_t> oihw_filter(const OpgenRun &r) {
    const auto &v = r.shape.given;
    const int64_t F = v.at("F"), C = v.at("C"), KH = v.at("KH"), KW = v.at("KW");
    std::vector<int8_t> w(size_t(F * C * KH * KW));
    const int8_t *p = static_cast<const int8_t *>(r.inputs.at("Wt").host());
    for (int64_t f = 0; f < F; f++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t y = 0; y < KH; y++)
                for (int64_t x = 0; x < KW; x++)
                    w[size_t(((f * C + c) * KH + y) * KW + x)] =
                        p[(((y * KW + x) * (C / 4) + c / 4) * F + f) * 4 + c % 4];
    return w;
}

std::unique_ptr<OnednnRequant> onednn_requant_conv(OpgenRun &r, std::vector<int8_t> &w_plain,
                                                   void *dst) {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    const auto &v = r.shape.given;
    const int64_t N = v.at("N"), C = v.at("C"), H = v.at("H"), W = v.at("W"), F = v.at("F"),
                  KH = v.at("KH"), KW = v.at("KW"), st = v.at("stride"), pad = v.at("pad");
    const int64_t OH = (H + 2 * pad - KH) / st + 1, OW = (W + 2 * pad - KW) / st + 1;
    user_check(v.at("dilation") == 1) << "int8 bench: oneDNN's anchor takes dilation 1 only";
    auto o = std::make_unique<OnednnRequant>();
    dnnl::memory::desc src({N, C, H, W}, dt::u8, tag::nhwc), wei({F, C, KH, KW}, dt::s8, tag::any),
        bias({F}, dt::s32, tag::x), dst_md({N, F, OH, OW}, dt::u8, tag::nhwc);
    dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference,
                                      dnnl::algorithm::convolution_direct, src, wei, bias, dst_md,
                                      {st, st}, {pad, pad}, {pad, pad});
    dnnl::convolution_forward::primitive_desc pd(
        d, requant_attr(r.inputs.at("scale"), 1, int32_t(r.inputs.at("zp").at(0))), o->engine);
    o->finish(dnnl::convolution_forward(pd), pd, src, bias, dst_md,
              {{F, C, KH, KW}, dt::s8, tag::oihw}, r.inputs.at("X").host(), w_plain.data(),
              r.inputs.at("bias").host(), dst);
    return o;
}

// Scales that put the outputs mostly inside 0..255 around the zero point 128 (the sums of `terms`
// u8 x s8 products of uniform values have a standard deviation near 10,900 sqrt(terms)), varying
// by channel; small biases. Random scales in (-1, 1) would saturate nearly every output.
void in_range_requant_values(OpgenRun &r, int64_t terms) {
    HostTensor &scale = r.inputs.at("scale");
    for (int64_t i = 0; i < scale.elements(); i++)
        scale.set(i, 48.0 / (10900.0 * std::sqrt(double(terms))) * (0.75 + 0.125 * double(i % 5)));
    r.inputs.at("zp").set(0, 128);
}

struct RequantRow {
    std::string label;
    double opgen_ms = 0, dnnl_ms = 0, vs_dnnl = 0, ops = 0;
    bool exact = false;
    int64_t off_by_one = 0, worse = 0, inside = 0, points = 0;
};

// Checks opgen's output against the reference and oneDNN's against opgen's, then times the two
// interleaved.
RequantRow bench_requant(const std::string &label, OpgenRun &r, OnednnRequant &dnnl,
                         const std::vector<uint8_t> &dnnl_out, double ops, int rounds,
                         double window_ms) {
    r.kernel->run();
    dnnl.run();
    Verification v = verify_output(r.def, r.shape, r.inputs, r.out, 0.0);
    RequantRow row{label};
    row.points = r.out.elements();
    for (int64_t i = 0; i < row.points; i++) {
        const double d = std::fabs(r.out.at(i) - double(dnnl_out[size_t(i)]));
        row.off_by_one += d == 1;
        row.worse += d > 1;
        row.inside += r.out.at(i) > 0 && r.out.at(i) < 255;
    }
    row.exact = v.ok;
    std::cerr << label << ": opgen " << (v.ok ? "exact" : "WRONG " + v.first_mismatch) << " at "
              << v.points_checked << " points (" << row.inside << " of " << row.points
              << " outputs inside 1..254); oneDNN differs by 1 at " << row.off_by_one
              << ", by more at " << row.worse << "\n  opgen " << r.source << "\n  oneDNN "
              << dnnl.impl << "\n";
    std::vector<Contender> cs{{"opgen", [&] { r.kernel->run(); }, {}},
                              {"oneDNN", [&] { dnnl.run(); }, {}}};
    for (int i = 0; i < rounds; i++) {
        for (auto &c : cs)
            c.round_ms.push_back(time_window(c, window_ms));
    }
    row.opgen_ms = median(cs[0].round_ms);
    row.dnnl_ms = median(cs[1].round_ms);
    row.vs_dnnl = 1.0 / round_ratio(cs[0], cs[1]);
    row.ops = ops;
    return row;
}

RequantRow requant_matmul_row(const MatmulShape &s, const Target &host, int threads,
                              db::KernelCache *cache, int rounds, double window_ms) {
    auto r = opgen_run("matmul_u8s8_requant", s.text(), host, threads, cache);
    in_range_requant_values(*r, s.k);
    std::vector<int8_t> b = unpacked_b<int8_t>(r->inputs.at("B"), s, 4);
    std::vector<uint8_t> out(size_t(s.m * s.n));
    auto dnnl = onednn_requant_matmul(*r, b, out.data());
    const std::string label =
        "matmul " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
    return bench_requant(label, *r, *dnnl, out, 2.0 * double(s.m * s.n * s.k), rounds, window_ms);
}

RequantRow requant_conv_row(const std::string &shape, const Target &host, int threads,
                            db::KernelCache *cache, int rounds, double window_ms) {
    auto r = opgen_run("conv2d_nhwc_u8s8_requant", shape, host, threads, cache);
    const auto &v = r->shape.given;
    const int64_t terms = v.at("C") * v.at("KH") * v.at("KW");
    in_range_requant_values(*r, terms);
    std::vector<int8_t> w = oihw_filter(*r);
    std::vector<uint8_t> out(size_t(r->out.elements()));
    auto dnnl = onednn_requant_conv(*r, w, out.data());
    const std::string label = "conv " + std::to_string(v.at("KH")) + "x" +
                              std::to_string(v.at("KW")) + " " + std::to_string(v.at("C")) + "->" +
                              std::to_string(v.at("F")) + " at " + std::to_string(v.at("H")) + "x" +
                              std::to_string(v.at("W"));
    return bench_requant(label, *r, *dnnl, out, 2.0 * double(r->out.elements() * terms), rounds,
                         window_ms);
}

void print_requant_table(const std::vector<RequantRow> &rows, int threads, const Peaks &peaks) {
    std::cout << "\n| requantizing int8 (u8 out) | threads | opgen ms | oneDNN ms | opgen GOP/s | "
                 "oneDNN/opgen | "
                 "% int8 peak | % AMX peak | check | oneDNN off by 1 |\n"
              << "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
    for (const RequantRow &r : rows) {
        const double g = r.ops / r.opgen_ms / 1e6;
        std::cout << "| " << r.label << " | " << threads << " | " << fixed(r.opgen_ms, 3) << " | "
                  << fixed(r.dnnl_ms, 3) << " | " << fixed(g, 0) << " | " << fixed(r.vs_dnnl, 2)
                  << "x | " << percent_of(g, peaks.int8) << " | " << percent_of(g, peaks.amx)
                  << " | " << (r.exact && r.worse == 0 ? "exact" : "MISMATCH") << " | "
                  << r.off_by_one << " of " << r.points << " |\n";
    }
    std::cout << std::flush;
}

std::vector<std::string> split(const std::string &text, char sep) {
    std::vector<std::string> out;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, sep))
        if (!item.empty())
            out.push_back(item);
    return out;
}

std::vector<MatmulShape> parse_shapes(const std::string &text) {
    std::vector<MatmulShape> out;
    for (const std::string &item : split(text, ';')) {
        MatmulShape s{};
        if (std::sscanf(item.c_str(), "%ldx%ldx%ld", &s.m, &s.n, &s.k) != 3) {
            throw UserError("bad shape '" + item + "' (expected MxNxK)");
        }
        out.push_back(s);
    }
    return out;
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"opgen int8 matmul against oneDNN int8 and opgen f32, with the int8 peak"};
    std::string db_path, shapes_text = "1024x1024x1024;128x768x768;128x3072x768";
    std::vector<int> thread_counts{1};
    std::string convs_text = "N=1,H=56,W=56,C=64,F=64;N=1,H=56,W=56,C=256,F=64,KH=1,KW=1,pad=0;"
                             "N=1,H=14,W=14,C=256,F=256";
    bool requant_only = false;
    int rounds = 7;
    double window_ms = 60;
    app.add_option("--db", db_path, "kernel cache holding the tuned winners (default: none, heuristic points)");
    app.add_option("--shapes", shapes_text, "MxNxK;MxNxK;... (K a multiple of 4)");
    app.add_option("--convs", convs_text,
                   "int8 convolutions (conv2d_nhwc_u8s8_requant shapes), ';'-separated");
    app.add_flag("--requant-only", requant_only,
                 "only the requantizing rows (matmul at --shapes, the --convs)");
    app.add_option("--threads", thread_counts, "thread counts, each its own pass");
    app.add_option("--rounds", rounds, "interleaved timing rounds");
    app.add_option("--window-ms", window_ms, "milliseconds of calls per contender per round");
    CLI11_PARSE(app, argc, argv);
    try {
        Target host = host_target();
        std::unique_ptr<db::KernelCache> cache;
        if (!db_path.empty()) cache = db::open_kernel_cache(db_path, db::OpenMode::ReadOnly);
        std::string features;
        for (const auto &f : host.features) features += (features.empty() ? "" : " ") + f;
        for (int threads : thread_counts) {
            bench::set_threads(threads);
            const Peaks peaks{bench::vnni_peak_gops(threads), bench::amx_peak_gops(threads),
                              bench::bf16_peak_gflops(threads)};
            const bench::MachineFigures m = bench::measure_machine({threads}, 20, int64_t(1) << 22);
            std::cout << "\nhost: " << m.cpu << ", " << host.halide_target << "; features: " << features << "\n"
                      << threads << " thread(s): int8 VNNI peak " << fixed(peaks.int8, 0) << " GOP/s, int8 AMX peak "
                      << fixed(peaks.amx, 0) << " GOP/s, bf16 vdpbf16ps peak " << fixed(peaks.bf16, 0)
                      << " GFLOP/s, fp32 FMA peak " << fixed(m.at(threads).peak_gflops, 0) << " GFLOP/s\n"
                      << std::flush;
            std::vector<Row> rows;
            for (const MatmulShape &s : parse_shapes(shapes_text)) {
                if (!requant_only)
                    rows.push_back(bench_shape(s, host, threads, cache.get(), rounds, window_ms));
            }
            if (!rows.empty())
                print_tables(rows, threads, peaks);
            std::vector<RequantRow> requant;
            for (const MatmulShape &s : parse_shapes(shapes_text)) {
                requant.push_back(
                    requant_matmul_row(s, host, threads, cache.get(), rounds, window_ms));
            }
            for (const std::string &c : split(convs_text, ';')) {
                requant.push_back(
                    requant_conv_row(c, host, threads, cache.get(), rounds, window_ms));
            }
            print_requant_table(requant, threads, peaks);
            std::cout << "\nafter the rows: int8 VNNI peak " << fixed(bench::vnni_peak_gops(threads), 0)
                      << " GOP/s, int8 AMX peak " << fixed(bench::amx_peak_gops(threads), 0) << " GOP/s, bf16 peak "
                      << fixed(bench::bf16_peak_gflops(threads), 0) << " GFLOP/s\n";
        }
    } catch (const std::exception &e) {
        std::cerr << "error: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
