// The machine's own ceilings, measured in the same invocation as the kernels: fp32 FMA peak (a loop
// of independent vector FMAs held in registers, AVX-512 where the CPU has it, else AVX2) and memory
// bandwidth (McCalpin's STREAM triad, a[i] = b[i] + s * c[i], on arrays far larger than the last
// cache level), each on one core and on `threads` cores. Every kernel result is also given as a
// fraction of the roofline bound these make for its shape: max(flops / peak, bytes / bandwidth).
#ifndef OPGEN_BENCH_MACHINE_H
#define OPGEN_BENCH_MACHINE_H

#include <cstdint>
#include <string>
#include <vector>

namespace opgen::bench {

struct MachineFigure {
    int threads = 1;
    double peak_gflops = 0;        // best repetition: the ceiling
    double peak_gflops_median = 0; // median repetition: how the clock usually runs
    double triad_gbs = 0;          // best repetition, bytes as STREAM counts them (3 per element)
    double triad_gbs_median = 0;
};

struct MachineFigures {
    std::string cpu;                    // model name from /proc/cpuinfo
    std::string fma_isa;                // "AVX-512" or "AVX2"
    int64_t triad_bytes = 0;            // total size of the three triad arrays
    std::vector<MachineFigure> figures; // one per thread count asked for

    // The figure measured with `threads` threads; InternalError when there is none.
    const MachineFigure &at(int threads) const;
};

// Measures every figure, `repeats` times each, interleaved (1 thread, n threads, 1 thread, ...).
// Each repetition is short (about 5 ms of FMAs, one triad pass), like the kernels' calls, so that
// on a shared machine a best repetition is one the scheduler left alone, as a kernel's median call
// is. `triad_elements` per array (default 2^24 floats: 3 x 64 MiB, far beyond any L3 here).
MachineFigures measure_machine(const std::vector<int> &thread_counts, int repeats = 20,
                               int64_t triad_elements = int64_t(1) << 24);

// The roofline bound of a problem in milliseconds: the larger of its compute time at peak and its
// compulsory traffic at the triad bandwidth.
double roofline_ms(double flops, double bytes, const MachineFigure &m);

} // namespace opgen::bench

#endif
