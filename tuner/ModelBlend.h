// How the tuner ranks candidates when it has two cost models: the target's default model (trained
// offline on many tasks, tuner/ModelStore.h) and the online model (trained during the run on this
// task's own measurements). Their scores live on different scales (a pairwise-trained pack-sum and
// a regression one), so they are blended by rank, not by value: each model's scores become
// percentiles within the scored set, and the blend weighs the online model by how many of the
// task's measurements it has seen. Early in a run the default model leads (its picks fill the
// first round); once the task has as many correct measurements as `half_weight_trials` the two
// weigh alike, and the online model leads after that.
#ifndef OPGEN_TUNER_MODEL_BLEND_H
#define OPGEN_TUNER_MODEL_BLEND_H

#include "core/TilingSpace.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace opgen::tuner {

// Percentile of each score within `scores`, in [0, 1] (1: the highest). Equal scores share the mean
// of their ranks, so the result does not depend on the order of ties. A single score gets 0.5;
// an empty input gives an empty result.
std::vector<double> rank_percentiles(const std::vector<double> &scores);

// The online model's weight after `measured` correct measurements of the task:
// measured / (measured + half_weight_trials), 0 when nothing is measured, 1 when
// half_weight_trials <= 0 (no prior).
double online_weight(int measured, int half_weight_trials);

// w * percentile(online) + (1 - w) * percentile(prior), element by element, w clamped to [0, 1].
// Raises std::invalid_argument when the two score vectors differ in length.
std::vector<double> blend_by_rank(const std::vector<double> &prior, const std::vector<double> &online, double w);

// A model trained on few measurements extrapolates wildly across a large space, so the models rank
// only the roofline's shortlist: the best max(200, n / 20) of n scored points (all of them when
// n <= 200).
size_t shortlist_size(size_t n);

// The lowest score (higher is better) that is still inside the shortlist of `scores`; 0 when
// `scores` is empty.
double shortlist_threshold(std::vector<double> scores);

// shortlist_threshold of `score` (higher is better; an analytic estimate such as the negated
// roofline time) over a sample of up to 20000 points of `space` drawn with `seed`.
double sampled_shortlist_threshold(const TilingSpace &space, uint64_t seed,
                                   const std::function<double(const SchedulePoint &)> &score);

}  // namespace opgen::tuner

#endif
