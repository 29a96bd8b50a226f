// Blending the default cost model with the online one by rank: percentiles with ties shared, and
// the online model's weight growing with the task's measurements.
#include "tuner/ModelBlend.h"

#include <gtest/gtest.h>

#include <stdexcept>

using namespace opgen::tuner;

TEST(ModelBlend, PercentilesShareTiesAndIgnoreScale) {
    EXPECT_TRUE(rank_percentiles({}).empty());
    EXPECT_EQ(rank_percentiles({7.0}), std::vector<double>({0.5}));
    EXPECT_EQ(rank_percentiles({3.0, -1e9, 1e9}), std::vector<double>({0.5, 0.0, 1.0}));
    // Two equal lowest scores share ranks 0 and 1 of 0..3.
    EXPECT_EQ(rank_percentiles({5.0, 2.0, 2.0, 9.0}), std::vector<double>({2.0 / 3, 0.5 / 3, 0.5 / 3, 1.0}));
    // Only the order matters: a monotone transform gives the same percentiles.
    EXPECT_EQ(rank_percentiles({0.1, 0.3, 0.2}), rank_percentiles({1e3, 1e9, 1e6}));
}

TEST(ModelBlend, OnlineWeightGrowsWithMeasurements) {
    EXPECT_EQ(online_weight(0, 48), 0.0);
    EXPECT_EQ(online_weight(48, 48), 0.5);
    EXPECT_GT(online_weight(200, 48), 0.8);
    EXPECT_LT(online_weight(200, 48), 1.0);
    EXPECT_EQ(online_weight(5, 0), 1.0);
}

TEST(ModelBlend, BlendFollowsTheWeight) {
    std::vector<double> prior = {1, 2, 3}, online = {30, 20, 10};
    EXPECT_EQ(blend_by_rank(prior, online, 0), std::vector<double>({0.0, 0.5, 1.0}));
    EXPECT_EQ(blend_by_rank(prior, online, 1), std::vector<double>({1.0, 0.5, 0.0}));
    EXPECT_EQ(blend_by_rank(prior, online, 0.5), std::vector<double>({0.5, 0.5, 0.5}));
    EXPECT_EQ(blend_by_rank(prior, online, 7), blend_by_rank(prior, online, 1));
    EXPECT_THROW(blend_by_rank({1, 2}, {1}, 0.5), std::invalid_argument);
}

TEST(ModelBlend, ShortlistKeepsTheBestTwentiethButAtLeast200) {
    EXPECT_EQ(shortlist_size(0), 0u);
    EXPECT_EQ(shortlist_size(150), 150u);
    EXPECT_EQ(shortlist_size(1000), 200u);
    EXPECT_EQ(shortlist_size(20000), 1000u);
    // Scores 1..1000 in scrambled order: the 200 best are 801..1000.
    std::vector<double> scores;
    for (int i = 0; i < 1000; i++) scores.push_back(double((i * 7919) % 1000 + 1));
    EXPECT_EQ(shortlist_threshold(scores), 801.0);
    EXPECT_EQ(shortlist_threshold({3, 1, 2}), 1.0);
    EXPECT_EQ(shortlist_threshold({}), 0.0);
}
