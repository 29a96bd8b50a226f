#include "tuner/TrialBudget.h"

#include "core/Schedule.h"
#include "core/TilingRules.h"
#include "tuner/Features.h"

#include <algorithm>
#include <numeric>

namespace opgen::tuner {

double estimated_call_seconds(const ComputeDef &def, const BoundShape &shape, const Target &target, int threads) {
    TilingRules space = make_tiling_rules(def, shape, target, threads);
    return roofline_seconds(def, shape, target, space, heuristic_point(def, shape, target), threads);
}

std::vector<int> trials_by_share(const std::vector<double> &weights, int trials) {
    std::vector<int> out(weights.size(), trials);
    const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
    if (!(total > 0)) return out;
    const double small = total / double(weights.size()) / 4;
    const int few = std::min(trials, std::max(kMinShareTrials, trials / 4));
    for (size_t i = 0; i < weights.size(); i++) {
        if (weights[i] < small) out[i] = few;
    }
    return out;
}

}  // namespace opgen::tuner
