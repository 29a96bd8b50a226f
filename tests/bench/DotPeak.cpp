#include "tests/bench/DotPeak.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace opgen::bench {

namespace {

// Independent accumulators: vpdpbusd's latency (5 cycles) times two ports, with registers spare.
constexpr int kAccumulators = 16;
constexpr int64_t kIters = 200000;  // about 5 ms per repetition at this host's clock

__attribute__((target("avx512f,avx512bw,avx512vnni"))) int32_t vnni_loop(int64_t iters) {
    __m512i acc[kAccumulators];
    for (int j = 0; j < kAccumulators; j++) acc[j] = _mm512_set1_epi32(j);
    const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-1);
    for (int64_t i = 0; i < iters; i++) {
        for (int j = 0; j < kAccumulators; j++) acc[j] = _mm512_dpbusd_epi32(acc[j], a, b);
    }
    __m512i s = acc[0];
    for (int j = 1; j < kAccumulators; j++) s = _mm512_add_epi32(s, acc[j]);
    alignas(64) int32_t out[16];
    _mm512_store_si512(out, s);
    int32_t t = 0;
    for (int32_t v : out) t += v;
    return t;
}

__attribute__((target("avx512f,avx512bw,avx512bf16"))) int32_t bf16_loop(int64_t iters) {
    __m512 acc[kAccumulators];
    for (int j = 0; j < kAccumulators; j++) acc[j] = _mm512_set1_ps(float(j));
    const __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80), b = (__m512bh)_mm512_set1_epi16(0x3c00);
    for (int64_t i = 0; i < iters; i++) {
        for (int j = 0; j < kAccumulators; j++) acc[j] = _mm512_dpbf16_ps(acc[j], a, b);
    }
    __m512 s = acc[0];
    for (int j = 1; j < kAccumulators; j++) s = _mm512_add_ps(s, acc[j]);
    alignas(64) float out[16];
    _mm512_store_ps(out, s);
    return int32_t(out[0]);
}

volatile int32_t sink = 0;

// Operations per second (giga) of `threads` threads running `loop`, whose instructions do
// `ops_per_instruction` each.
double one_repetition(int threads, int32_t (*loop)(int64_t), double ops_per_instruction) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; t++) pool.emplace_back([loop] { sink = sink + loop(kIters); });
    sink = sink + loop(kIters);
    for (auto &th : pool) th.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return double(threads) * double(kIters) * kAccumulators * ops_per_instruction / s / 1e9;
}

double best_of(int threads, int repeats, int32_t (*loop)(int64_t), double ops_per_instruction) {
    double best = 0;
    for (int r = 0; r < repeats; r++) best = std::max(best, one_repetition(threads, loop, ops_per_instruction));
    return best;
}

}  // namespace

bool has_vnni() {
    return __builtin_cpu_supports("avx512vnni");
}

double vnni_peak_gops(int threads, int repeats) {
    return has_vnni() ? best_of(threads, repeats, vnni_loop, 64 * 2) : 0;
}

bool has_bf16_dot() {
    return __builtin_cpu_supports("avx512bf16");
}

double bf16_peak_gflops(int threads, int repeats) {
    return has_bf16_dot() ? best_of(threads, repeats, bf16_loop, 32 * 2) : 0;
}

}  // namespace opgen::bench
