#include "tests/bench/DotPeak.h"

#include "runtime/HostCpu.h"

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

// The AMX tile configuration (palette 1) of tdpbusd_loop: tiles 0-3 accumulators of 16 rows x 64
// bytes, tile 4 A (16 rows x 64 bytes), tile 5 B (16 rows x 64 bytes): K = 64, the full depth.
struct alignas(64) TileConfig {
    uint8_t palette = 1, start_row = 0;
    uint8_t reserved[14] = {};
    uint16_t colsb[16] = {64, 64, 64, 64, 64, 64};
    uint8_t rows[16] = {16, 16, 16, 16, 16, 16};
};

// kAccumulators tdpbusd per iteration, four independent accumulator tiles, operands in tiles.
__attribute__((target("amx-tile,amx-int8"))) int32_t tdpbusd_loop(int64_t iters) {
    static const TileConfig config;
    alignas(64) static int8_t operand[16 * 64] = {};
    alignas(64) int32_t out[16 * 16];
    _tile_loadconfig(&config);
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    _tile_loadd(4, operand, 64);
    _tile_loadd(5, operand, 64);
    for (int64_t i = 0; i < iters; i++) {
        for (int j = 0; j < kAccumulators / 4; j++) {
            _tile_dpbusd(0, 4, 5);
            _tile_dpbusd(1, 4, 5);
            _tile_dpbusd(2, 4, 5);
            _tile_dpbusd(3, 4, 5);
        }
    }
    _tile_stored(0, out, 64);
    _tile_release();
    return out[0];
}

volatile int32_t sink = 0;

// Operations per second (giga) of `threads` threads running `loop` for `iters` iterations of
// kAccumulators instructions, each of `ops_per_instruction`.
double one_repetition(int threads, int32_t (*loop)(int64_t), double ops_per_instruction, int64_t iters) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; t++) pool.emplace_back([loop, iters] { sink = sink + loop(iters); });
    sink = sink + loop(iters);
    for (auto &th : pool) th.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return double(threads) * double(iters) * kAccumulators * ops_per_instruction / s / 1e9;
}

double best_of(int threads, int repeats, int32_t (*loop)(int64_t), double ops_per_instruction,
               int64_t iters = kIters) {
    double best = 0;
    for (int r = 0; r < repeats; r++) best = std::max(best, one_repetition(threads, loop, ops_per_instruction, iters));
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

bool has_amx_int8() {
    return db::host_has_cpu_feature("amx_int8");
}

double amx_peak_gops(int threads, int repeats) {
    // A tdpbusd takes about 16 cycles: 1,000 iterations of 16 are about 80 ms.
    return has_amx_int8() ? best_of(threads, repeats, tdpbusd_loop, 16.0 * 16 * 64 * 2, 1000) : 0;
}

}  // namespace opgen::bench
