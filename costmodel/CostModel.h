// The cost model: ranks candidate schedules from their per-stage-group feature rows.
//
// Following docs/design.md §2.6, every stage group of a candidate is described by a
// fixed-length feature row; a candidate's score is the sum of its groups' predictions (the
// "pack-sum" of Ansor). costmodel/ sees only feature rows and measured throughputs, never Halide.
// Scores are "higher is faster": labels are throughputs normalised per task (best of task = 1).
// A second formulation, "concat", gives the trees a candidate's group rows side by side as one
// wide row (slot k = the candidate's k-th group), so a split can weigh one group's tile against
// another's; it ranked held-out tasks better than the pack-sum (docs/cost-model.md).
#ifndef OPGEN_COSTMODEL_COST_MODEL_H
#define OPGEN_COSTMODEL_COST_MODEL_H

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace opgen::costmodel {

class ModelError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Candidates of one batch: `rows` holds every group row of every candidate, row-major with
// `num_features` columns; candidate i owns rows [row_begin[i], row_begin[i+1]).
struct FeatureBatch {
    int num_features = 0;
    std::vector<float> rows;
    std::vector<int32_t> row_begin{0};

    size_t num_candidates() const { return row_begin.size() - 1; }
    // Appends one candidate made of `num_rows` rows of `num_features` floats each.
    void add_candidate(const float *data, int num_rows);
};

// Measured candidates: the batch plus, for each candidate, its task id (shape) and throughput.
struct TrainingSet {
    FeatureBatch batch;
    std::vector<int32_t> task;     // candidates with the same task id are normalised together
    std::vector<double> throughput;  // measured GFLOP/s (or 1/time); > 0
};

struct TrainOptions {
    int rounds = 100;
    int max_depth = 6;
    double eta = 0.2;
    int threads = 0;  // 0: all cores
    uint64_t seed = 0;
    // What the pack-sum is fitted to. Regression: squared error against the throughput over the
    // task's best, weighted by that label. Pairwise: a logistic loss on every pair of candidates of
    // a task whose throughputs differ by more than `pair_margin` (relative), which asks only for
    // the order the tuner needs, and ignores pairs closer than the measurement noise.
    enum class Objective { Regression, Pairwise };
    Objective objective = Objective::Regression;
    double pair_margin = 0.03;
    // Pairwise only: weight each pair by the log of its throughput ratio, so that confusing a
    // catastrophic candidate with a fast one costs more than swapping two near-equals.
    bool weight_by_gap = false;
    // Pairwise only: also weight each pair by (faster's throughput / task's best)^top_emphasis, so
    // that the order among the fast candidates, the ones the tuner picks from, counts most.
    double top_emphasis = 0;
    // How group rows become the trees' rows. PackSum: one tree row per group, the candidate's
    // score is their sum. Concat: one tree row per candidate, its groups' rows concatenated in
    // order into as many slots as the training set's widest candidate has groups (fewer groups
    // leave missing values; a candidate with more groups than slots loses its extra rows).
    enum class Formulation { PackSum, Concat };
    // Bagging inside each round: `parallel_trees` trees per round, each on a `subsample` share of
    // the rows and a `colsample` share of the features per split, averaged (xgboost's
    // num_parallel_tree, subsample, colsample_bynode). 1, 1, 1: plain boosting.
    int parallel_trees = 1;
    double subsample = 1.0;
    double colsample = 1.0;
    Formulation formulation = Formulation::PackSum;
};

class CostModel {
public:
    virtual ~CostModel() = default;
    virtual std::string name() const = 0;
    // Fits (or refits from scratch) on the given set. Raises ModelError on an empty set or a
    // feature-count mismatch.
    virtual void train(const TrainingSet &set, const TrainOptions &options) = 0;
    // One score per candidate, higher is faster. An untrained model returns all zeros.
    virtual std::vector<double> predict(const FeatureBatch &batch) const = 0;
    virtual bool trained() const = 0;
    // Cores predict (and a later train) may use; 0: all. A model inside someone else's process
    // (the lookup library) keeps to one, since OpenMP's threads wait for each other on a busy core.
    virtual void set_threads(int threads) { (void)threads; }
    // Serialises to / restores from bytes (xgboost's UBJSON or JSON model format).
    virtual std::vector<uint8_t> save() const = 0;
    virtual void load(const std::vector<uint8_t> &bytes) = 0;
};

// The XGBoost model (xgboost's C API, tree_method=hist, pack-sum objective through
// XGBoosterBoostOneIter with per-row gradients).
std::unique_ptr<CostModel> make_xgboost_model(int num_features);
// A model that scores uniformly at random with a seed: the baseline for evaluations.
std::unique_ptr<CostModel> make_random_model(int num_features, uint64_t seed);

// Ranking quality on held-out data: pairwise accuracy within each task, Kendall's tau, and
// top-k regret (best measured time / time of the model's top-k best measured, per task, averaged).
struct RankingQuality {
    double pairwise_accuracy = 0;
    double kendall_tau = 0;
    double top1_regret = 0;  // >= 1; 1 means the model's pick is the best measured
    double top5_regret = 0;
};
RankingQuality evaluate_ranking(const std::vector<double> &scores, const TrainingSet &set);

}  // namespace opgen::costmodel

#endif
