// opgen_int8_bench (docs/design.md §8.2): opgen's int8 matmul (matmul_u8s8: u8 A x s8 B pre-packed in groups
// of 4 -> s32) against oneDNN 2.6's int8 matmul (u8 x s8 -> s32, weights reordered into its own
// layout before timing, as a deployed model's are) and against opgen's own float32 matmul of the
// same shape; likewise opgen's bf16 matmul (matmul_bf16, f32 sums) against oneDNN's bf16 matmul; with the host's measured int8 (vpdpbusd) and fp32 (FMA) peaks, in one interleaved
// run. opgen's kernels are the winners the cache holds (`opgen tune` puts them there;
// scripts/bench/int8.sh does), or the heuristic point where it holds none. Every output is
// checked before timing: opgen's int8 against the reference exactly, oneDNN's int8 against opgen's
// exactly, the float32 ones against the reference. Built with -DOPGEN_BUILD_BENCH=ON.
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
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

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

std::unique_ptr<OpgenRun> opgen_run(const std::string &op, const MatmulShape &s, const Target &host, int threads,
                                    db::KernelCache *cache) {
    auto r = std::make_unique<OpgenRun>();
    r->def = OpLibrary::standard().load(op);
    r->shape = bind_shape(r->def, s.text());
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
    auto i8 = opgen_run("matmul_u8s8", s, host, threads, cache);
    auto f32 = opgen_run("matmul", s, host, threads, cache);
    auto bf = opgen_run("matmul_bf16", s, host, threads, cache);
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

double gops(const MatmulShape &s, double ms) {
    return 2.0 * double(s.m) * double(s.n) * double(s.k) / ms / 1e6;
}

void print_tables(const std::vector<Row> &rows, int threads, double int8_peak, double bf16_peak) {
    std::cout << "\n| M x N x K | threads | opgen int8 ms | oneDNN int8 ms | opgen f32 ms | oneDNN f32 ms | "
                 "opgen int8 GOP/s | int8: oneDNN/opgen | int8: opgen f32/opgen int8 | % int8 peak | check |\n"
              << "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
    for (const Row &r : rows) {
        std::cout << "| " << r.s.m << "x" << r.s.n << "x" << r.s.k << " | " << threads << " | " << fixed(r.i8, 3)
                  << " | " << fixed(r.dnnl8, 3) << " | " << fixed(r.f32, 3) << " | " << fixed(r.dnnlf, 3) << " | "
                  << fixed(gops(r.s, r.i8), 0) << " | " << fixed(r.i8_vs_dnnl, 2) << "x | " << fixed(r.i8_vs_f32, 2)
                  << "x | " << (int8_peak > 0 ? fixed(100 * gops(r.s, r.i8) / int8_peak, 0) + "%" : "n/a") << " | "
                  << (r.exact ? "exact" : "MISMATCH") << " |\n";
    }
    std::cout << "\n| M x N x K | threads | opgen bf16 ms | oneDNN bf16 ms | opgen bf16 GFLOP/s | bf16: oneDNN/opgen "
                 "| bf16: opgen f32/opgen bf16 | % bf16 peak | check |\n"
              << "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
    for (const Row &r : rows) {
        std::cout << "| " << r.s.m << "x" << r.s.n << "x" << r.s.k << " | " << threads << " | " << fixed(r.bf, 3)
                  << " | " << fixed(r.dnnlbf, 3) << " | " << fixed(gops(r.s, r.bf), 0) << " | "
                  << fixed(r.bf_vs_dnnl, 2) << "x | " << fixed(r.bf_vs_f32, 2) << "x | "
                  << (bf16_peak > 0 ? fixed(100 * gops(r.s, r.bf) / bf16_peak, 0) + "%" : "n/a") << " | "
                  << (r.bf_ok ? "ok" : "MISMATCH") << " |\n";
    }
    std::cout << std::flush;
}

std::vector<MatmulShape> parse_shapes(const std::string &text) {
    std::vector<MatmulShape> out;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ';')) {
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
    int rounds = 7;
    double window_ms = 60;
    app.add_option("--db", db_path, "kernel cache holding the tuned winners (default: none, heuristic points)");
    app.add_option("--shapes", shapes_text, "MxNxK;MxNxK;... (K a multiple of 4)");
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
            const double int8_peak = bench::vnni_peak_gops(threads);
            const double bf16_peak = bench::bf16_peak_gflops(threads);
            const bench::MachineFigures m = bench::measure_machine({threads}, 20, int64_t(1) << 22);
            std::cout << "\nhost: " << m.cpu << ", " << host.halide_target << "; features: " << features << "\n"
                      << threads << " thread(s): int8 VNNI peak " << fixed(int8_peak, 0) << " GOP/s, bf16 vdpbf16ps peak "
                      << fixed(bf16_peak, 0) << " GFLOP/s, fp32 FMA peak " << fixed(m.at(threads).peak_gflops, 0)
                      << " GFLOP/s\n" << std::flush;
            std::vector<Row> rows;
            for (const MatmulShape &s : parse_shapes(shapes_text)) {
                rows.push_back(bench_shape(s, host, threads, cache.get(), rounds, window_ms));
            }
            print_tables(rows, threads, int8_peak, bf16_peak);
            std::cout << "\nafter the rows: int8 VNNI peak " << fixed(bench::vnni_peak_gops(threads), 0)
                      << " GOP/s, bf16 peak " << fixed(bench::bf16_peak_gflops(threads), 0) << " GFLOP/s\n";
        }
    } catch (const std::exception &e) {
        std::cerr << "error: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
