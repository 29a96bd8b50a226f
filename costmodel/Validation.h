// Input checks shared by the cost models and the ranking evaluation (internal to costmodel/).
//
// Every model takes the same inputs (a FeatureBatch, a TrainingSet, TrainOptions) and must reject
// the same malformed ones with the same messages, so the checks live here once. Each function
// raises ModelError naming `who` (the model or function) and the offending values.
#ifndef OPGEN_COSTMODEL_VALIDATION_H
#define OPGEN_COSTMODEL_VALIDATION_H

#include "costmodel/CostModel.h"

namespace opgen::costmodel {

// The batch has `num_features` columns and a consistent row_begin (starts at 0, never decreases,
// ends at the row count).
void check_batch(const FeatureBatch &batch, int num_features, const std::string &who);

// The set is non-empty, its batch passes check_batch, it has one task id and one throughput per
// candidate, and every throughput is positive and finite.
void check_training_set(const TrainingSet &set, int num_features, const std::string &who);

// Rounds, depth and eta are positive; threads is not negative.
void check_train_options(const TrainOptions &options, const std::string &who);

} // namespace opgen::costmodel

#endif
