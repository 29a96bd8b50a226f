#include "tuner/OnlineModel.h"

#include "tuner/Features.h"

namespace opgen::tuner {

void add_training_row(costmodel::TrainingSet &set, const std::vector<float> &features, int rows,
                      double throughput) {
    set.batch.add_candidate(features.data(), rows);
    set.task.push_back(0);
    set.throughput.push_back(throughput);
}

OnlineModel::OnlineModel() : model_(costmodel::make_xgboost_model(num_features())) {}

void OnlineModel::retrain(const costmodel::TrainingSet &set, uint64_t seed) {
    correct_ = int(set.throughput.size());
    if (correct_ < kMinCandidates) return;
    costmodel::TrainOptions to;
    to.seed = seed;
    to.rounds = 60;
    // One thread: a few hundred rows train in milliseconds either way, and the same measurements
    // then give the same model on any machine, whatever its core count (STYLE rule 9; the replay
    // test depends on it).
    to.threads = 1;
    model_->train(set, to);
    trained_ = true;
}

}  // namespace opgen::tuner
