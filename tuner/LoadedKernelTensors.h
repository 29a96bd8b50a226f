// Tensors for a kernel loaded from a cache (runtime/CodeLoader.h), and the comparison of two such
// kernels' outputs: what the stored-code timer (tuner/StoredCodeTimer.cpp) and the cache benchmarks
// (tests/bench) check before they time one kernel against another. Header-only, on the lookup
// library alone.
#pragma once

#include "runtime/CodeLoader.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace opgen::tuner {

// One kernel's tensors in call order: inputs in [-1, 1) drawn from `seed` (the same for every
// kernel whose arguments have the same dims), an output of its own, zeroed.
struct LoadedKernelTensors {
    std::vector<std::vector<float>> data;
    std::vector<void *> pointers;
    LoadedKernelTensors(const db::LoadedKernel &k, uint32_t seed) {
        std::mt19937 rng(seed);
        std::uniform_real_distribution<float> uniform(-1.f, 1.f);
        for (const db::CodeArgument &a : k.arguments()) {
            data.emplace_back(size_t(a.elements()));
            if (!a.is_output) {
                for (float &x : data.back()) x = uniform(rng);
            }
        }
        for (auto &d : data) pointers.push_back(d.data());
    }
};

// The worst difference between the outputs (the last tensors) of `got` and `want`, each element's
// relative to 1 + |want|; infinity when their sizes differ or an element is NaN.
inline double worst_output_difference(const LoadedKernelTensors &got, const LoadedKernelTensors &want) {
    const std::vector<float> &x = got.data.back(), &y = want.data.back();
    if (x.size() != y.size()) return INFINITY;
    double worst = 0;
    for (size_t i = 0; i < x.size(); i++) {
        double d = std::fabs(double(x[i]) - double(y[i])) / (1 + std::fabs(double(y[i])));
        if (!(d <= worst)) worst = std::isnan(d) ? INFINITY : d;
    }
    return worst;
}

}  // namespace opgen::tuner
