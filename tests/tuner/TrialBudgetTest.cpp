// Trials by share of a model's time (tuner/TrialBudget.h): the split of the budget, and the
// estimate that orders a model's kernels by their time.
#include "core/OpLibrary.h"
#include "tuner/TrialBudget.h"

#include <gtest/gtest.h>

using namespace opgen;
using namespace opgen::tuner;

TEST(TrialBudget, KernelsUnderAQuarterOfTheMeanShareGetAQuarterOfTheTrials) {
    // Shares 0.45, 0.45, 0.06, 0.04 of 1: the mean is 0.25, a quarter of it 0.0625.
    EXPECT_EQ(trials_by_share({45, 45, 6, 4}, 24), (std::vector<int>{24, 24, 6, 6}));
    // A quarter of 8 trials is 2: at least kMinShareTrials.
    EXPECT_EQ(trials_by_share({45, 45, 6, 4}, 8), (std::vector<int>{8, 8, kMinShareTrials, kMinShareTrials}));
    // Never more than asked for.
    EXPECT_EQ(trials_by_share({1, 100}, 2), (std::vector<int>{2, 2}));
    // Even shares, and no estimate at all, leave every kernel its trials.
    EXPECT_EQ(trials_by_share({3, 3, 3}, 24), (std::vector<int>{24, 24, 24}));
    EXPECT_EQ(trials_by_share({0, 0}, 24), (std::vector<int>{24, 24}));
    EXPECT_TRUE(trials_by_share({}, 24).empty());
}

TEST(TrialBudget, TheEstimateRanksADenseLayerFarAboveItsLayerNorm) {
    OpLibrary lib = OpLibrary::standard();
    Target t = load_target("x86-64-avx512");
    ComputeDef dense = lib.load("matmul"), norm = lib.load("layernorm");
    const double dense_s = estimated_call_seconds(dense, bind_shape(dense, "M=128,N=3072,K=768"), t, 1);
    const double norm_s = estimated_call_seconds(norm, bind_shape(norm, "M=128,N=768"), t, 1);
    EXPECT_GT(norm_s, 0);
    EXPECT_GT(dense_s, 50 * norm_s) << dense_s << " s against " << norm_s << " s";
}
