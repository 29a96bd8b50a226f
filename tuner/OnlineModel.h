// The cost model a search trains online on its own measurements (docs/design.md §2.6: the
// measured candidates retrain the model that ranks the next ones). tune() trains it on the task's
// trials (throughput in GFLOP/s), the variant search on what one contention level measured
// (throughput: 1 / ratio to the quiet winner). Both retrain it from scratch after every batch, on
// everything measured so far, and trust it only once it has seen a handful of correct candidates.
#ifndef OPGEN_TUNER_ONLINE_MODEL_H
#define OPGEN_TUNER_ONLINE_MODEL_H

#include "costmodel/CostModel.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace opgen::tuner {

// Appends one candidate (its `rows` feature rows in `features`) with its measured throughput.
void add_training_row(costmodel::TrainingSet &set, const std::vector<float> &features, int rows,
                      double throughput);

class OnlineModel {
public:
    // A model of this build's feature set (tuner/Features.h), untrained.
    OnlineModel();
    // Fits the model afresh on `set` (60 rounds, `seed`) when it holds at least kMinCandidates
    // candidates; with fewer, it keeps what it had. `correct()` becomes the set's size either way.
    void retrain(const costmodel::TrainingSet &set, uint64_t seed);
    bool trained() const { return trained_; }
    // Candidates in the last training set.
    int correct() const { return correct_; }
    std::vector<double> predict(const costmodel::FeatureBatch &batch) const { return model_->predict(batch); }

    static constexpr int kMinCandidates = 4;

private:
    std::unique_ptr<costmodel::CostModel> model_;
    bool trained_ = false;
    int correct_ = 0;
};

}  // namespace opgen::tuner

#endif
