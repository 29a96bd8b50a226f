// The pairwise objective of the XGBoost pack-sum model: it learns the synthetic problem's order on
// held-out tasks, ignores pairs closer than the margin, and refuses a set with no pair to learn.
#include "costmodel/CostModel.h"

#include <gtest/gtest.h>

#include "Synthetic.h"

namespace opgen::costmodel {
namespace {

using testing::make_synthetic_set;
using testing::synthetic_features;

TrainOptions pairwise_options() {
    TrainOptions options;
    options.rounds = 60;
    options.threads = 2;
    options.seed = 1;
    options.objective = TrainOptions::Objective::Pairwise;
    return options;
}

TEST(PairwiseObjective, RanksHeldOutTasksFarBetterThanRandom) {
    const TrainingSet train = make_synthetic_set(20, 40, 7);
    const TrainingSet test = make_synthetic_set(8, 40, 8, 20);
    auto model = make_xgboost_model(synthetic_features);
    model->train(train, pairwise_options());
    const RankingQuality q = evaluate_ranking(model->predict(test.batch), test);
    RecordProperty("pairwise_accuracy", std::to_string(q.pairwise_accuracy));
    EXPECT_GT(q.pairwise_accuracy, 0.8);
    EXPECT_GT(q.kendall_tau, 0.6);
    EXPECT_LT(q.top1_regret, 1.2);
}

TEST(PairwiseObjective, RefusesASetWhoseThroughputsAreAllWithinTheMargin) {
    TrainingSet set = make_synthetic_set(2, 10, 9);
    for (size_t i = 0; i < set.throughput.size(); i++) {
        set.throughput[i] = 1.0 + 0.001 * double(i % 3);  // within 3% of each other
    }
    auto model = make_xgboost_model(synthetic_features);
    EXPECT_THROW(model->train(set, pairwise_options()), ModelError);
    EXPECT_FALSE(model->trained());
    TrainOptions wide = pairwise_options();
    wide.pair_margin = 0.0;
    model->train(set, wide);
    EXPECT_TRUE(model->trained());
}

TEST(PairwiseObjective, IsDeterministicForASeed) {
    const TrainingSet train = make_synthetic_set(5, 30, 11);
    auto a = make_xgboost_model(synthetic_features);
    auto b = make_xgboost_model(synthetic_features);
    a->train(train, pairwise_options());
    b->train(train, pairwise_options());
    EXPECT_EQ(a->predict(train.batch), b->predict(train.batch));
}

} // namespace
} // namespace opgen::costmodel
