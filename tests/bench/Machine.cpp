#include "tests/bench/Machine.h"

#include "base/Error.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>

namespace opgen::bench {

const MachineFigure &MachineFigures::at(int threads) const {
    for (const auto &f : figures) {
        if (f.threads == threads)
            return f;
    }
    throw InternalError("no machine figure for " + std::to_string(threads) + " threads");
}

namespace {

using Clock = std::chrono::steady_clock;

// 16 independent accumulators: enough to cover FMA latency (4 cycles) times two FMA pipes on every
// x86 core with AVX-512, with registers to spare. acc = acc * a + b converges, so no overflow.
constexpr int kAccumulators = 16;

__attribute__((target("avx512f"))) float fma_loop_avx512(int64_t iters) {
    __m512 acc[kAccumulators];
    for (int j = 0; j < kAccumulators; j++)
        acc[j] = _mm512_set1_ps(float(j));
    const __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(0.001f);
    for (int64_t i = 0; i < iters; i++) {
        for (int j = 0; j < kAccumulators; j++)
            acc[j] = _mm512_fmadd_ps(acc[j], a, b);
    }
    __m512 s = acc[0];
    for (int j = 1; j < kAccumulators; j++)
        s = _mm512_add_ps(s, acc[j]);
    // Summed by hand: GCC 12's _mm512_reduce_add_ps trips -Wuninitialized inside its own header.
    alignas(64) float out[16];
    _mm512_store_ps(out, s);
    float t = 0;
    for (float v : out)
        t += v;
    return t;
}

__attribute__((target("avx2,fma"))) float fma_loop_avx2(int64_t iters) {
    __m256 acc[kAccumulators];
    for (int j = 0; j < kAccumulators; j++)
        acc[j] = _mm256_set1_ps(float(j));
    const __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(0.001f);
    for (int64_t i = 0; i < iters; i++) {
        for (int j = 0; j < kAccumulators; j++)
            acc[j] = _mm256_fmadd_ps(acc[j], a, b);
    }
    __m256 s = acc[0];
    for (int j = 1; j < kAccumulators; j++)
        s = _mm256_add_ps(s, acc[j]);
    alignas(32) float out[8];
    _mm256_store_ps(out, s);
    float t = 0;
    for (float v : out)
        t += v;
    return t;
}

bool has_avx512() {
    return __builtin_cpu_supports("avx512f");
}

// Runs `work(thread_index)` on `threads` threads released together; returns the wall seconds from
// the release to the last finish.
template <typename Work> double run_parallel(int threads, Work work) {
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; t++) {
        pool.emplace_back([&, t] {
            ready++;
            while (!go.load(std::memory_order_acquire)) {
            }
            work(t);
        });
    }
    while (ready.load() < threads - 1) {
    }
    auto t0 = Clock::now();
    go.store(true, std::memory_order_release);
    work(0);
    for (auto &th : pool)
        th.join();
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

volatile float sink = 0;

double fma_gflops(int threads, int64_t iters) {
    const bool wide = has_avx512();
    const double lanes = wide ? 16 : 8;
    double s = run_parallel(threads, [&](int) {
        sink = sink + (wide ? fma_loop_avx512(iters) : fma_loop_avx2(iters));
    });
    return double(threads) * double(iters) * kAccumulators * lanes * 2 / s / 1e9;
}

struct TriadArrays {
    std::vector<float> a, b, c;
    explicit TriadArrays(int64_t n) : a(size_t(n)), b(size_t(n)), c(size_t(n)) {}
};

double triad_gbs(TriadArrays &t, int threads) {
    const int64_t n = int64_t(t.a.size());
    const float scalar = 3.0f;
    double s = run_parallel(threads, [&](int i) {
        int64_t lo = n * i / threads, hi = n * (i + 1) / threads;
        float *a = t.a.data();
        const float *b = t.b.data(), *c = t.c.data();
        for (int64_t k = lo; k < hi; k++)
            a[k] = b[k] + scalar * c[k];
    });
    return 3.0 * 4.0 * double(n) / s / 1e9;
}

double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("model name", 0) == 0) {
            auto colon = line.find(':');
            if (colon != std::string::npos)
                return line.substr(line.find_first_not_of(' ', colon + 1));
        }
    }
    return "unknown";
}

} // namespace

MachineFigures measure_machine(const std::vector<int> &thread_counts, int repeats,
                               int64_t triad_elements) {
    MachineFigures m;
    m.cpu = cpu_model();
    m.fma_isa = has_avx512() ? "AVX-512" : "AVX2";
    m.triad_bytes = 3 * 4 * triad_elements;
    TriadArrays arrays(triad_elements);
    std::fill(arrays.b.begin(), arrays.b.end(), 1.0f);
    std::fill(arrays.c.begin(), arrays.c.end(), 2.0f);
    // About 5 ms of FMAs per repetition on a 100 GFLOP/s core.
    const int64_t iters = int64_t(1e6) / (has_avx512() ? 1 : 2);
    std::vector<std::vector<double>> peak(thread_counts.size()), triad(thread_counts.size());
    for (int i = 0; i < 10; i++)
        fma_gflops(1, iters); // wake the clock up
    triad_gbs(arrays, 1);     // touch every page once
    for (int r = 0; r < repeats; r++) {
        for (size_t i = 0; i < thread_counts.size(); i++) {
            peak[i].push_back(fma_gflops(thread_counts[i], iters));
            triad[i].push_back(triad_gbs(arrays, thread_counts[i]));
        }
    }
    for (size_t i = 0; i < thread_counts.size(); i++) {
        MachineFigure f;
        f.threads = thread_counts[i];
        f.peak_gflops = *std::max_element(peak[i].begin(), peak[i].end());
        f.peak_gflops_median = median_of(peak[i]);
        f.triad_gbs = *std::max_element(triad[i].begin(), triad[i].end());
        f.triad_gbs_median = median_of(triad[i]);
        m.figures.push_back(f);
    }
    return m;
}

double roofline_ms(double flops, double bytes, const MachineFigure &m) {
    double compute = m.peak_gflops > 0 ? flops / (m.peak_gflops * 1e6) : 0;
    double memory = m.triad_gbs > 0 ? bytes / (m.triad_gbs * 1e6) : 0;
    return std::max(compute, memory);
}

} // namespace opgen::bench
