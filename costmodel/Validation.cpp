#include "costmodel/Validation.h"

#include <cmath>
#include <sstream>

namespace opgen::costmodel {

void check_batch(const FeatureBatch &batch, int num_features, const std::string &who) {
    if (batch.num_features != num_features) {
        std::ostringstream message;
        message << who << ": batch has " << batch.num_features << " features, the model expects "
                << num_features;
        throw ModelError(message.str());
    }
    if (batch.row_begin.empty() || batch.row_begin.front() != 0) {
        throw ModelError(who + ": batch row_begin must start with 0");
    }
    for (size_t i = 0; i + 1 < batch.row_begin.size(); i++) {
        if (batch.row_begin[i + 1] < batch.row_begin[i]) {
            std::ostringstream message;
            message << who << ": batch row_begin decreases at candidate " << i << " ("
                    << batch.row_begin[i] << " then " << batch.row_begin[i + 1] << ")";
            throw ModelError(message.str());
        }
    }
    const size_t expected = size_t(batch.row_begin.back()) * size_t(num_features);
    if (batch.rows.size() != expected) {
        std::ostringstream message;
        message << who << ": batch holds " << batch.rows.size() << " floats, row_begin says "
                << batch.row_begin.back() << " rows of " << num_features << " features";
        throw ModelError(message.str());
    }
}

void check_training_set(const TrainingSet &set, int num_features, const std::string &who) {
    const size_t n = set.batch.num_candidates();
    if (n == 0) {
        throw ModelError(who + ": training set is empty");
    }
    check_batch(set.batch, num_features, who);
    if (set.task.size() != n || set.throughput.size() != n) {
        std::ostringstream message;
        message << who << ": training set has " << n << " candidates but " << set.task.size()
                << " task ids and " << set.throughput.size() << " throughputs";
        throw ModelError(message.str());
    }
    for (size_t i = 0; i < n; i++) {
        // Labels are throughput / best of task: zero, negative or infinite values would make
        // every label of the task meaningless rather than just this one.
        if (!(set.throughput[i] > 0) || !std::isfinite(set.throughput[i])) {
            std::ostringstream message;
            message << who << ": candidate " << i << " has throughput " << set.throughput[i]
                    << ", throughputs must be positive and finite";
            throw ModelError(message.str());
        }
    }
}

void check_train_options(const TrainOptions &options, const std::string &who) {
    std::ostringstream message;
    if (options.rounds <= 0) {
        message << who << ": rounds " << options.rounds << " must be positive";
    } else if (options.max_depth <= 0) {
        message << who << ": max_depth " << options.max_depth << " must be positive";
    } else if (!(options.eta > 0) || !std::isfinite(options.eta)) {
        message << who << ": eta " << options.eta << " must be positive";
    } else if (options.threads < 0) {
        message << who << ": threads " << options.threads << " must not be negative";
    } else if (options.parallel_trees < 1) {
        message << who << ": parallel_trees " << options.parallel_trees << " must be positive";
    } else if (!(options.subsample > 0 && options.subsample <= 1)) {
        message << who << ": subsample " << options.subsample << " must be in (0, 1]";
    } else if (!(options.colsample > 0 && options.colsample <= 1)) {
        message << who << ": colsample " << options.colsample << " must be in (0, 1]";
    } else if (!(options.top_emphasis >= 0) || !std::isfinite(options.top_emphasis)) {
        message << who << ": top_emphasis " << options.top_emphasis << " must not be negative";
    } else {
        return;
    }
    throw ModelError(message.str());
}

} // namespace opgen::costmodel
