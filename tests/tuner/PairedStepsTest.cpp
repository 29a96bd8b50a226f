// The alternating paired timing loop (tuner/PairedSteps.h), driven by fake calls that return fixed
// times: which call goes first alternates, the budget and the step bounds stop it, and the ratio is
// the median of the per-step ratios.
#include <gtest/gtest.h>

#include "tuner/PairedSteps.h"

#include <string>

namespace opgen::tuner {
namespace {

TEST(PairedSteps, AlternatesWhichCallGoesFirst) {
    std::string order;
    PairedSteps p = alternate_calls([&] { order += 'c'; return 1.0; }, [&] { order += 'r'; return 2.0; }, 0, 4, 100);
    EXPECT_EQ(order, "rccrrccr");
    EXPECT_EQ(p.candidate_ms.size(), 4u);
    EXPECT_EQ(p.reference_ms.size(), 4u);
    EXPECT_DOUBLE_EQ(p.ratio, 0.5);
}

TEST(PairedSteps, RunsUntilTheCandidatesTimeAddsUpWithinTheStepBounds) {
    // 3 ms a call: 30 ms needs 10 steps, more than min_runs 2.
    EXPECT_EQ(alternate_calls([] { return 3.0; }, [] { return 3.0; }, 30, 2, 100).candidate_ms.size(), 10u);
    // At most max_runs steps, whatever the budget.
    EXPECT_EQ(alternate_calls([] { return 3.0; }, [] { return 3.0; }, 1e9, 2, 7).candidate_ms.size(), 7u);
}

TEST(PairedSteps, RatioIsTheMedianOfTheStepsRatios) {
    const double candidate[] = {1, 9, 2, 2, 2}, reference[] = {1, 1, 1, 0, 4};  // ratios 1, 9, 2, 0, 0.5
    int c = 0, r = 0;
    PairedSteps p = alternate_calls([&] { return candidate[c++]; }, [&] { return reference[r++]; }, 0, 5, 5);
    EXPECT_DOUBLE_EQ(p.ratio, 1.0);
}

}  // namespace
}  // namespace opgen::tuner
