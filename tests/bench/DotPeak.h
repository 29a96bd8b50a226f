// The host's dot-product peaks, measured in the same invocation as the kernels: a loop of
// independent AVX512-VNNI vpdpbusd instructions held in registers (each does 64 u8 x s8 products
// and their 64 additions into 16 i32 lanes), one of AVX512-BF16 vdpbf16ps (32 bf16 products
// and additions into 16 f32 lanes), and one of AMX tdpbusd, as Machine.h measures the fp32 FMA
// peak.
#ifndef OPGEN_BENCH_DOT_PEAK_H
#define OPGEN_BENCH_DOT_PEAK_H

namespace opgen::bench {

// Whether the CPU has AVX512-VNNI.
bool has_vnni();

// Giga-operations per second (a product and an add count two) of `threads` threads each running
// the vpdpbusd loop; the best of `repeats` short repetitions (a repetition the scheduler left
// alone). 0 without AVX512-VNNI.
double vnni_peak_gops(int threads, int repeats = 20);

// Whether the CPU has AVX512-BF16.
bool has_bf16_dot();

// GFLOP/s of `threads` threads each running the vdpbf16ps loop, best of `repeats`; 0 without
// AVX512-BF16.
double bf16_peak_gflops(int threads, int repeats = 20);

// Whether the CPU has AMX tiles with int8 products and this process may use them (asking the
// operating system for the permission, base/AmxPermission.h).
bool has_amx_int8();

// Giga-operations per second of `threads` threads each running a loop of tdpbusd on four
// independent accumulator tiles at the full depth (16 x 16 i32 += 16 x 64 u8 . 64 x 16 s8: 16,384
// products and additions each), best of `repeats`; 0 without AMX.
double amx_peak_gops(int threads, int repeats = 10);

}  // namespace opgen::bench

#endif
