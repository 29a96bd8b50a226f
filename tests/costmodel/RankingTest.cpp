// evaluate_ranking on hand-made scores whose figures are computed by hand in the comments.
#include "costmodel/CostModel.h"

#include <gtest/gtest.h>

namespace opgen::costmodel {
namespace {

// One feature row per candidate; only task ids and throughputs matter to the ranking.
TrainingSet make_set(const std::vector<int32_t> &task, const std::vector<double> &throughput) {
    TrainingSet set;
    set.batch.num_features = 1;
    for (size_t i = 0; i < task.size(); i++) {
        const float row = float(i);
        set.batch.add_candidate(&row, 1);
    }
    set.task = task;
    set.throughput = throughput;
    return set;
}

TEST(Ranking, PerfectRankingScoresOne) {
    const TrainingSet set = make_set({0, 0, 0, 0, 0, 0}, {1, 2, 3, 4, 5, 6});
    const RankingQuality q = evaluate_ranking({10, 20, 30, 40, 50, 60}, set);
    EXPECT_DOUBLE_EQ(q.pairwise_accuracy, 1.0);
    EXPECT_DOUBLE_EQ(q.kendall_tau, 1.0);
    EXPECT_DOUBLE_EQ(q.top1_regret, 1.0);
    EXPECT_DOUBLE_EQ(q.top5_regret, 1.0);
}

TEST(Ranking, ReversedRankingScoresZero) {
    const TrainingSet set = make_set({0, 0, 0, 0, 0, 0}, {1, 2, 3, 4, 5, 6});
    const RankingQuality q = evaluate_ranking({6, 5, 4, 3, 2, 1}, set);
    EXPECT_DOUBLE_EQ(q.pairwise_accuracy, 0.0);
    EXPECT_DOUBLE_EQ(q.kendall_tau, -1.0);
    // The pick is the slowest (1): regret 6/1. Top 5 are throughputs 1..5: regret 6/5.
    EXPECT_DOUBLE_EQ(q.top1_regret, 6.0);
    EXPECT_DOUBLE_EQ(q.top5_regret, 1.2);
}

TEST(Ranking, HandComputedCase) {
    // Throughputs 4, 8, 2, 1; by score the order is 2 (0.9), 8 (0.8), 4 (0.7), 1 (0.1).
    const TrainingSet set = make_set({0, 0, 0, 0}, {4, 8, 2, 1});
    const RankingQuality q = evaluate_ranking({0.7, 0.8, 0.9, 0.1}, set);
    // Pairs (by throughput): (4,8) right, (4,2) wrong, (4,1) right, (8,2) wrong, (8,1) right,
    // (2,1) right: 4 of 6 right, tau = (4 - 2) / 6.
    EXPECT_DOUBLE_EQ(q.pairwise_accuracy, 4.0 / 6.0);
    EXPECT_DOUBLE_EQ(q.kendall_tau, 2.0 / 6.0);
    // The pick has throughput 2, the best is 8; top 5 holds everything.
    EXPECT_DOUBLE_EQ(q.top1_regret, 4.0);
    EXPECT_DOUBLE_EQ(q.top5_regret, 1.0);
}

TEST(Ranking, TasksWeighEqually) {
    // Task 7 (two candidates) is ranked right, task 3 (four candidates) exactly backwards: the
    // averages are the plain means of the two tasks, whatever their sizes.
    const TrainingSet set = make_set({3, 3, 7, 3, 7, 3}, {1, 2, 5, 3, 10, 4});
    const RankingQuality q = evaluate_ranking({4, 3, 1, 2, 2, 1}, set);
    EXPECT_DOUBLE_EQ(q.pairwise_accuracy, 0.5);
    EXPECT_DOUBLE_EQ(q.kendall_tau, 0.0);
    // Task 3 picks throughput 1 of best 4 (regret 4), task 7 picks the best (1).
    EXPECT_DOUBLE_EQ(q.top1_regret, 2.5);
    EXPECT_DOUBLE_EQ(q.top5_regret, 1.0);
}

TEST(Ranking, TopFiveRegret) {
    // Seven candidates; the five highest scores go to throughputs 1..5, the best (7) is ranked
    // last: top-5 regret 7/5.
    const TrainingSet set = make_set({0, 0, 0, 0, 0, 0, 0}, {1, 2, 3, 4, 5, 6, 7});
    const RankingQuality q = evaluate_ranking({9, 8, 7, 6, 5, 2, 1}, set);
    EXPECT_DOUBLE_EQ(q.top1_regret, 7.0);
    EXPECT_DOUBLE_EQ(q.top5_regret, 7.0 / 5.0);
}

TEST(Ranking, ConstantScoresAreChanceAndPickTheSlowest) {
    const TrainingSet set = make_set({0, 0, 0, 0}, {4, 3, 2, 1});
    const RankingQuality q = evaluate_ranking({0, 0, 0, 0}, set);
    EXPECT_DOUBLE_EQ(q.pairwise_accuracy, 0.5);
    EXPECT_DOUBLE_EQ(q.kendall_tau, 0.0);
    EXPECT_DOUBLE_EQ(q.top1_regret, 4.0);
}

TEST(Ranking, TiedThroughputsAreNotJudged) {
    // Candidates 0 and 1 tie at throughput 2, so only their pairs with candidate 2 are judged.
    const TrainingSet set = make_set({0, 0, 0}, {2, 2, 1});
    const RankingQuality q = evaluate_ranking({1, 3, 2}, set);
    // Judged pairs: (c0, c2) has scores 1 < 2, wrong; (c1, c2) has 3 > 2, right. Tau-b:
    // (1 - 1) / sqrt(3 * 2) = 0.
    EXPECT_DOUBLE_EQ(q.pairwise_accuracy, 0.5);
    EXPECT_DOUBLE_EQ(q.kendall_tau, 0.0);
    EXPECT_DOUBLE_EQ(q.top1_regret, 1.0);
}

TEST(Ranking, RejectsMismatchedScores) {
    const TrainingSet set = make_set({0, 0}, {1, 2});
    try {
        evaluate_ranking({1.0}, set);
        FAIL() << "expected ModelError";
    } catch (const ModelError &e) {
        EXPECT_STREQ(e.what(), "evaluate_ranking: 1 scores for 2 candidates");
    }
}

TEST(Ranking, RejectsEmptySet) {
    EXPECT_THROW(evaluate_ranking({}, TrainingSet{}), ModelError);
}

} // namespace
} // namespace opgen::costmodel
