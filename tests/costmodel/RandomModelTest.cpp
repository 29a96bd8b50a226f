// The random model: deterministic from its seed, per-candidate stable, and at chance on ranking.
#include "costmodel/CostModel.h"

#include <gtest/gtest.h>

#include "Synthetic.h"

namespace opgen::costmodel {
namespace {

using testing::make_synthetic_set;
using testing::synthetic_features;

TEST(RandomModel, SameSeedSameScores) {
    const TrainingSet set = make_synthetic_set(2, 20, 1);
    const auto a = make_random_model(synthetic_features, 42);
    const auto b = make_random_model(synthetic_features, 42);
    const auto c = make_random_model(synthetic_features, 43);
    const std::vector<double> scores = a->predict(set.batch);
    EXPECT_EQ(scores, b->predict(set.batch));
    EXPECT_EQ(scores, a->predict(set.batch));
    EXPECT_NE(scores, c->predict(set.batch));
    for (double s : scores) {
        EXPECT_GE(s, 0.0);
        EXPECT_LT(s, 1.0);
    }
}

TEST(RandomModel, CandidateScoreDoesNotDependOnBatch) {
    const TrainingSet set = make_synthetic_set(1, 5, 2);
    const auto model = make_random_model(synthetic_features, 7);
    const std::vector<double> all = model->predict(set.batch);
    // The last candidate alone gets the score it had in the full batch.
    FeatureBatch single;
    single.num_features = synthetic_features;
    const int32_t begin = set.batch.row_begin[4];
    single.add_candidate(set.batch.rows.data() + begin * synthetic_features,
                         set.batch.row_begin[5] - begin);
    EXPECT_EQ(model->predict(single), std::vector<double>{all[4]});
}

TEST(RandomModel, SaveLoadKeepsSeed) {
    const TrainingSet set = make_synthetic_set(1, 10, 3);
    const auto saved = make_random_model(synthetic_features, 99);
    const auto loaded = make_random_model(synthetic_features, 1);
    loaded->load(saved->save());
    EXPECT_EQ(loaded->predict(set.batch), saved->predict(set.batch));
    const auto other = make_random_model(synthetic_features + 1, 99);
    EXPECT_THROW(other->load(saved->save()), ModelError);
    EXPECT_THROW(loaded->load({1, 2, 3}), ModelError);
}

TEST(RandomModel, TrainChecksInputLikeTheXGBoostModel) {
    const auto model = make_random_model(synthetic_features, 0);
    EXPECT_TRUE(model->trained());
    EXPECT_THROW(model->train(TrainingSet{}, TrainOptions{}), ModelError);
    const TrainingSet other = make_synthetic_set(1, 3, 0);
    EXPECT_THROW(make_random_model(4, 0)->train(other, TrainOptions{}), ModelError);
}

TEST(RandomModel, RanksAtChance) {
    const TrainingSet set = make_synthetic_set(20, 50, 5);
    const RankingQuality q = evaluate_ranking(make_random_model(8, 11)->predict(set.batch), set);
    EXPECT_NEAR(q.pairwise_accuracy, 0.5, 0.05);
    EXPECT_NEAR(q.kendall_tau, 0.0, 0.1);
}

} // namespace
} // namespace opgen::costmodel
