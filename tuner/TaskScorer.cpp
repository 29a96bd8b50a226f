#include "tuner/TaskScorer.h"

#include "tuner/Features.h"
#include "tuner/ModelBlend.h"
#include "tuner/Search.h"

namespace opgen::tuner {

TaskScorer::TaskScorer(const ComputeDef &def, const BoundShape &shape, const Target &target,
                       const TilingSpace &space, int threads, uint64_t seed,
                       std::unique_ptr<costmodel::CostModel> prior, int prior_half_weight)
    : def_(def), shape_(shape), target_(target), space_(space), threads_(threads), prior_(std::move(prior)),
      prior_half_weight_(prior_half_weight) {
    // Only the roofline is needed for the threshold: the feature rows of the sample would be
    // thrown away with the first round's memo.
    shortlist_ = sampled_shortlist_threshold(space_, seed, [&](const SchedulePoint &p) { return roofline_of(p); });
}

double TaskScorer::roofline_of(const SchedulePoint &p) const {
    return -roofline_seconds(def_, shape_, target_, space_, p, threads_);
}

const TaskScorer::Scored &TaskScorer::features_of(const SchedulePoint &p) {
    std::string k = point_key(p);
    auto it = memo_.find(k);
    if (it != memo_.end()) return it->second;
    Scored s;
    s.nrows = group_features(def_, shape_, target_, space_, p, threads_, s.rows);
    s.roofline = roofline_of(p);
    return memo_.emplace(k, std::move(s)).first->second;
}

std::vector<double> TaskScorer::score(const std::vector<SchedulePoint> &pts) {
    std::vector<double> out(pts.size());
    if (!online_.trained() && !prior_) {
        for (size_t i = 0; i < pts.size(); i++) out[i] = features_of(pts[i]).roofline;
        return out;
    }
    costmodel::FeatureBatch fb;
    fb.num_features = num_features();
    for (const auto &p : pts) {
        const Scored &s = features_of(p);
        fb.add_candidate(s.rows.data(), s.nrows);
    }
    if (!online_.trained()) {
        out = prior_->predict(fb);
    } else {
        out = online_.predict(fb);
        if (prior_) out = blend_by_rank(prior_->predict(fb), out, online_weight(online_.correct(), prior_half_weight_));
    }
    for (size_t i = 0; i < pts.size(); i++) {
        if (features_of(pts[i]).roofline < shortlist_) out[i] -= 1e12;
    }
    return out;
}

}  // namespace opgen::tuner
