// Timing two kernels against each other in alternating single calls: the loop that both the
// tuner's paired measurements (tuner/Measurer.h, JIT kernels) and the stored-code timer
// (tuner/StoredCodeTimer.h, kernels loaded from a cache) take. Knows nothing of how a kernel is
// called, so the timer links it without the Halide compiler.
#ifndef OPGEN_TUNER_PAIRED_STEPS_H
#define OPGEN_TUNER_PAIRED_STEPS_H

#include <functional>
#include <vector>

namespace opgen::tuner {

// Each step's times in milliseconds, and the median of the per-step candidate/reference ratios.
struct PairedSteps {
    std::vector<double> candidate_ms, reference_ms;
    double ratio = 0;
};

// Calls `candidate` and `reference` (each runs one call and returns its milliseconds) alternately,
// one call each per step, which of them goes first alternating too, until the candidate's calls
// add up to `min_total_ms` (at least `min_runs`, at most `max_runs` steps). A step's ratio is 0
// when the reference took no time. Exceptions from the calls propagate.
PairedSteps alternate_calls(const std::function<double()> &candidate, const std::function<double()> &reference,
                            double min_total_ms, int min_runs, int max_runs);

}  // namespace opgen::tuner

#endif
