// Timing a kernel loaded from a cache (runtime/CodeLoader.h) in the cache benchmarks
// (opgen_generic_bench, opgen_choice_bench): its tensors, per-call times, medians.
#pragma once

#include "runtime/CodeLoader.h"
#include "tuner/LoadedKernelTensors.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace opgen::bench {

// One kernel's tensors: seeded inputs in [-1, 1) (the same for every kernel of a shape), an output
// of its own.
struct KernelTensors : tuner::LoadedKernelTensors {
    explicit KernelTensors(const db::LoadedKernel &k) : tuner::LoadedKernelTensors(k, 5) {}
};

// Per-call milliseconds of calls (at least 3) until `min_ms` have passed. Exits with an `error:`
// line when a call fails.
inline double time_calls(const db::LoadedKernel &k, KernelTensors &t, double min_ms) {
    using Clock = std::chrono::steady_clock;
    int calls = 0;
    Clock::time_point t0 = Clock::now();
    double ms = 0;
    while (ms < min_ms || calls < 3) {
        if (k.call(t.pointers.data(), t.pointers.size()) != 0) {
            std::fprintf(stderr, "error: a kernel call failed\n");
            std::exit(1);
        }
        calls++;
        ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    }
    return ms / calls;
}

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace opgen::bench
