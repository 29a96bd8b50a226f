// Trials by share of a model's time (docs/design.md §3.3): a model compile tunes every kernel
// missing from the cache, and most of the model's time goes to a few of them (BERT-base's four
// dense layers take 95% of it; its layer norms, softmaxes and attention products a few percent
// together). A kernel whose estimated share of the model's time is under a quarter of the mean
// share gets a quarter of the trials: tuning it further could win at most a fraction of that
// share, while each of its trials costs as much compile time as a dense layer's.
//
// The estimate of a kernel's share: its uses in the model times the roofline estimate of its
// heuristic point (tuner/Features.h), which ranks a dense layer above a layer norm by the right
// order of magnitude without compiling anything.
#ifndef OPGEN_TUNER_TRIAL_BUDGET_H
#define OPGEN_TUNER_TRIAL_BUDGET_H

#include "core/ComputeDef.h"
#include "core/Shape.h"
#include "core/Target.h"

#include <vector>

namespace opgen::tuner {

// The fewest trials a task gets, however small its share.
constexpr int kMinShareTrials = 4;

// The roofline estimate, in seconds, of one call of `def` at `shape` on `target` at its heuristic
// schedule point with `threads` threads.
double estimated_call_seconds(const ComputeDef &def, const BoundShape &shape, const Target &target, int threads);

// Trials for tasks whose shares of the whole are proportional to `weights` (seconds x uses; any
// scale, each finite and not negative): `trials` for a task at or above a quarter of the mean
// share, else trials / 4, at least kMinShareTrials and at most `trials`. All zero weights: `trials`
// each.
std::vector<int> trials_by_share(const std::vector<double> &weights, int trials);

}  // namespace opgen::tuner

#endif
