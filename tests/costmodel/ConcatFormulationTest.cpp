// The concatenated formulation of the XGBoost model: one tree row per candidate, its group rows
// side by side. It learns the synthetic problem, keeps its slot count through save/load, pads
// short candidates and cuts long ones, and older pack-sum files (format version 1) still load.
#include "costmodel/CostModel.h"

#include <gtest/gtest.h>

#include "Synthetic.h"

namespace opgen::costmodel {
namespace {

using testing::make_synthetic_set;
using testing::synthetic_features;
using testing::synthetic_groups;

TrainOptions concat_options() {
    TrainOptions options;
    options.rounds = 60;
    options.threads = 2;
    options.seed = 1;
    options.objective = TrainOptions::Objective::Pairwise;
    options.formulation = TrainOptions::Formulation::Concat;
    return options;
}

TEST(ConcatFormulation, RanksHeldOutTasksFarBetterThanRandom) {
    const TrainingSet train = make_synthetic_set(20, 40, 7);
    const TrainingSet test = make_synthetic_set(8, 40, 8, 20);
    auto model = make_xgboost_model(synthetic_features);
    model->train(train, concat_options());
    const RankingQuality q = evaluate_ranking(model->predict(test.batch), test);
    RecordProperty("pairwise_accuracy", std::to_string(q.pairwise_accuracy));
    EXPECT_GT(q.pairwise_accuracy, 0.75);
    EXPECT_LT(q.top1_regret, 1.3);
}

TEST(ConcatFormulation, SaveLoadKeepsTheSlotsAndThePredictions) {
    const TrainingSet train = make_synthetic_set(5, 30, 11);
    auto model = make_xgboost_model(synthetic_features);
    model->train(train, concat_options());
    const std::vector<uint8_t> bytes = model->save();
    auto loaded = make_xgboost_model(synthetic_features);
    loaded->load(bytes);
    EXPECT_EQ(loaded->predict(train.batch), model->predict(train.batch));
    EXPECT_EQ(loaded->save(), bytes);
    // A model of other features refuses the file by its header, before xgboost sees it.
    auto other = make_xgboost_model(synthetic_features + 1);
    EXPECT_THROW(other->load(bytes), ModelError);
}

TEST(ConcatFormulation, PadsShortCandidatesAndCutsLongOnes) {
    const TrainingSet train = make_synthetic_set(5, 30, 13);
    auto model = make_xgboost_model(synthetic_features);
    model->train(train, concat_options());
    const float *first = train.batch.rows.data();
    FeatureBatch batch;
    batch.num_features = synthetic_features;
    batch.add_candidate(first, synthetic_groups);      // as trained
    std::vector<float> longer(first, first + (synthetic_groups + 1) * synthetic_features);
    batch.add_candidate(longer.data(), synthetic_groups + 1);  // an extra group: cut
    batch.add_candidate(first, 1);                      // one group: the rest missing
    const std::vector<double> scores = model->predict(batch);
    ASSERT_EQ(scores.size(), 3u);
    EXPECT_EQ(scores[0], scores[1]);
    EXPECT_TRUE(std::isfinite(scores[2]));
}

TEST(ConcatFormulation, FormatVersionOnePackSumFilesStillLoad) {
    const TrainingSet train = make_synthetic_set(5, 30, 17);
    auto model = make_xgboost_model(synthetic_features);
    TrainOptions packsum = concat_options();
    packsum.formulation = TrainOptions::Formulation::PackSum;
    model->train(train, packsum);
    // Version 2 is version 1 with the slot count (0 for pack-sum) after the 33-byte header.
    std::vector<uint8_t> v1 = model->save();
    ASSERT_GT(v1.size(), 37u);
    EXPECT_EQ(v1[8], 2);
    v1[8] = 1;
    v1.erase(v1.begin() + 33, v1.begin() + 37);
    auto loaded = make_xgboost_model(synthetic_features);
    loaded->load(v1);
    EXPECT_EQ(loaded->predict(train.batch), model->predict(train.batch));
    v1[8] = 3;  // a version from the future
    EXPECT_THROW(loaded->load(v1), ModelError);
}

} // namespace
} // namespace opgen::costmodel
