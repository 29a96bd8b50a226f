// The XGBoost pack-sum model: it learns a nonlinear synthetic problem well enough to rank held-out
// tasks, round-trips through save/load exactly, and rejects bad input with ModelError.
#include "costmodel/CostModel.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>

#include <gtest/gtest.h>

#include "Synthetic.h"
#include "tests/support/SharedFixture.h"

namespace opgen::costmodel {
namespace {

using testing::make_synthetic_set;
using testing::synthetic_features;

TrainOptions quick_options() {
    TrainOptions options;
    options.rounds = 100;
    options.max_depth = 6;
    options.eta = 0.2;
    options.threads = 2;
    options.seed = 1;
    return options;
}

// The model trained on the synthetic set, saved once per test run and shared by every test
// process (tests/support/SharedFixture.h): training is the slow part. Made again when this test
// binary changes.
std::vector<uint8_t> trained_model_bytes(const TrainingSet &train) {
    namespace fs = std::filesystem;
    const fs::path dir = opgen::test::shared_fixture(
        "xgboost-trained", opgen::test::file_stamp("/proc/self/exe"), [&](const fs::path &d) {
            std::unique_ptr<CostModel> model = make_xgboost_model(synthetic_features);
            model->train(train, quick_options());
            const std::vector<uint8_t> bytes = model->save();
            std::ofstream out(d / "model.bin", std::ios::binary);
            out.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
            if (!out) throw std::runtime_error("cannot write " + (d / "model.bin").string());
        });
    std::ifstream in(dir / "model.bin", std::ios::binary);
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// One trained model shared by the tests that only read it.
class XGBoostModelTrained : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        train_set_ = new TrainingSet(make_synthetic_set(40, 50, 2024));
        test_set_ = new TrainingSet(make_synthetic_set(10, 50, 4242, 40));
        model_ = make_xgboost_model(synthetic_features).release();
        model_->load(trained_model_bytes(*train_set_));
    }
    static void TearDownTestSuite() {
        delete model_;
        delete test_set_;
        delete train_set_;
    }
    static TrainingSet *train_set_;
    static TrainingSet *test_set_;
    static CostModel *model_;
};
TrainingSet *XGBoostModelTrained::train_set_ = nullptr;
TrainingSet *XGBoostModelTrained::test_set_ = nullptr;
CostModel *XGBoostModelTrained::model_ = nullptr;

TEST_F(XGBoostModelTrained, RanksHeldOutTasksFarBetterThanRandom) {
    ASSERT_TRUE(model_->trained());
    const RankingQuality learned = evaluate_ranking(model_->predict(test_set_->batch), *test_set_);
    const auto random = make_random_model(synthetic_features, 3);
    const RankingQuality chance = evaluate_ranking(random->predict(test_set_->batch), *test_set_);
    RecordProperty("pairwise_accuracy", std::to_string(learned.pairwise_accuracy));
    EXPECT_GT(learned.pairwise_accuracy, 0.8);
    EXPECT_GT(learned.kendall_tau, 0.6);
    EXPECT_LT(learned.top1_regret, 1.15);
    EXPECT_LT(learned.top5_regret, 1.05);
    EXPECT_NEAR(chance.pairwise_accuracy, 0.5, 0.1);
    EXPECT_GT(learned.pairwise_accuracy, chance.pairwise_accuracy + 0.25);
    EXPECT_LT(learned.top1_regret, chance.top1_regret);
}

TEST_F(XGBoostModelTrained, ScoresAreSumsOfGroupScores) {
    // Predicting each group row as a one-row candidate and adding them up gives the candidate's
    // score: the pack-sum property that lets the tuner reason about groups separately.
    const FeatureBatch &batch = test_set_->batch;
    FeatureBatch groups;
    groups.num_features = synthetic_features;
    for (int32_t r = 0; r < batch.row_begin[3]; r++) {
        groups.add_candidate(batch.rows.data() + r * synthetic_features, 1);
    }
    const std::vector<double> whole = model_->predict(batch);
    const std::vector<double> parts = model_->predict(groups);
    for (size_t c = 0; c < 3; c++) {
        double sum = 0;
        for (int32_t r = batch.row_begin[c]; r < batch.row_begin[c + 1]; r++) {
            sum += parts[size_t(r)];
        }
        EXPECT_NEAR(whole[c], sum, 1e-9);
    }
}

TEST_F(XGBoostModelTrained, FitsTrainingLabels) {
    // Training-set scores approximate the normalised labels (best of task = 1).
    const std::vector<double> scores = model_->predict(train_set_->batch);
    double best = 0;
    for (size_t i = 0; i < 50; i++) {
        best = std::max(best, train_set_->throughput[i]);
    }
    double error = 0;
    for (size_t i = 0; i < 50; i++) {
        error += std::abs(scores[i] - train_set_->throughput[i] / best);
    }
    EXPECT_LT(error / 50, 0.1);
}

TEST_F(XGBoostModelTrained, SaveLoadGivesIdenticalPredictions) {
    const std::vector<uint8_t> bytes = model_->save();
    const auto loaded = make_xgboost_model(synthetic_features);
    loaded->load(bytes);
    EXPECT_TRUE(loaded->trained());
    EXPECT_EQ(loaded->predict(test_set_->batch), model_->predict(test_set_->batch));
    EXPECT_EQ(loaded->save(), bytes);
}

TEST_F(XGBoostModelTrained, LoadRejectsOtherFeatureCount) {
    const auto other = make_xgboost_model(synthetic_features + 1);
    try {
        other->load(model_->save());
        FAIL() << "expected ModelError";
    } catch (const ModelError &e) {
        EXPECT_STREQ(e.what(), "xgboost model: saved model has 8 features, this model expects 9");
    }
    EXPECT_FALSE(other->trained());
}

TEST_F(XGBoostModelTrained, LoadRejectsGarbageAndKeepsModel) {
    const auto loaded = make_xgboost_model(synthetic_features);
    loaded->load(model_->save());
    const std::vector<double> before = loaded->predict(test_set_->batch);
    EXPECT_THROW(loaded->load({}), ModelError);
    const std::string garbage = "not a model, just twenty-odd bytes";
    EXPECT_THROW(loaded->load(std::vector<uint8_t>(garbage.begin(), garbage.end())), ModelError);
    // Truncated and corrupted payloads behind a valid header are caught by the length and the
    // checksum (xgboost's own reader sometimes accepts a truncated model).
    std::vector<uint8_t> truncated = model_->save();
    truncated.resize(truncated.size() / 2);
    try {
        loaded->load(truncated);
        FAIL() << "expected ModelError";
    } catch (const ModelError &e) {
        EXPECT_NE(std::string(e.what()).find("model bytes but"), std::string::npos) << e.what();
    }
    std::vector<uint8_t> corrupted = model_->save();
    corrupted[corrupted.size() / 2] ^= 0x5a;
    try {
        loaded->load(corrupted);
        FAIL() << "expected ModelError";
    } catch (const ModelError &e) {
        EXPECT_STREQ(e.what(), "xgboost model: model bytes do not match their checksum");
    }
    EXPECT_EQ(loaded->predict(test_set_->batch), before);
}

TEST_F(XGBoostModelTrained, PredictRejectsOtherFeatureCount) {
    FeatureBatch batch;
    batch.num_features = 3;
    const float row[] = {1, 2, 3};
    batch.add_candidate(row, 1);
    try {
        model_->predict(batch);
        FAIL() << "expected ModelError";
    } catch (const ModelError &e) {
        EXPECT_STREQ(e.what(), "xgboost model: batch has 3 features, the model expects 8");
    }
}

TEST(XGBoostModel, UntrainedPredictsZeros) {
    const auto model = make_xgboost_model(synthetic_features);
    EXPECT_EQ(model->name(), "xgboost");
    EXPECT_FALSE(model->trained());
    const TrainingSet set = make_synthetic_set(2, 5, 9);
    EXPECT_EQ(model->predict(set.batch), std::vector<double>(10, 0.0));
}

TEST(XGBoostModel, UntrainedSaveLoadRoundTrips) {
    const auto model = make_xgboost_model(synthetic_features);
    const auto loaded = make_xgboost_model(synthetic_features);
    loaded->load(model->save());
    EXPECT_FALSE(loaded->trained());
}

TEST(XGBoostModel, SameSeedSameModel) {
    const TrainingSet set = make_synthetic_set(5, 20, 17);
    TrainOptions options = quick_options();
    options.rounds = 20;
    const auto a = make_xgboost_model(synthetic_features);
    const auto b = make_xgboost_model(synthetic_features);
    a->train(set, options);
    b->train(set, options);
    EXPECT_EQ(a->predict(set.batch), b->predict(set.batch));
    // Retraining starts from scratch rather than adding trees to the old model.
    a->train(set, options);
    EXPECT_EQ(a->predict(set.batch), b->predict(set.batch));
}

TEST(XGBoostModel, TrainRejectsEmptySet) {
    const auto model = make_xgboost_model(synthetic_features);
    TrainingSet empty;
    empty.batch.num_features = synthetic_features;
    try {
        model->train(empty, quick_options());
        FAIL() << "expected ModelError";
    } catch (const ModelError &e) {
        EXPECT_STREQ(e.what(), "xgboost model: training set is empty");
    }
    EXPECT_FALSE(model->trained());
}

TEST(XGBoostModel, TrainRejectsFeatureMismatch) {
    const auto model = make_xgboost_model(4);
    try {
        model->train(make_synthetic_set(1, 5, 0), quick_options());
        FAIL() << "expected ModelError";
    } catch (const ModelError &e) {
        EXPECT_STREQ(e.what(), "xgboost model: batch has 8 features, the model expects 4");
    }
}

TEST(XGBoostModel, TrainRejectsBadThroughputAndOptions) {
    const auto model = make_xgboost_model(synthetic_features);
    TrainingSet set = make_synthetic_set(1, 5, 0);
    TrainingSet bad = set;
    bad.throughput[2] = 0;
    try {
        model->train(bad, quick_options());
        FAIL() << "expected ModelError";
    } catch (const ModelError &e) {
        EXPECT_STREQ(e.what(), "xgboost model: candidate 2 has throughput 0, throughputs must be "
                               "positive and finite");
    }
    bad = set;
    bad.task.pop_back();
    EXPECT_THROW(model->train(bad, quick_options()), ModelError);
    TrainOptions options = quick_options();
    options.rounds = 0;
    try {
        model->train(set, options);
        FAIL() << "expected ModelError";
    } catch (const ModelError &e) {
        EXPECT_STREQ(e.what(), "xgboost model: rounds 0 must be positive");
    }
    EXPECT_FALSE(model->trained());
}

TEST(XGBoostModel, RejectsNonPositiveFeatureCount) {
    EXPECT_THROW(make_xgboost_model(0), ModelError);
}

} // namespace
} // namespace opgen::costmodel
