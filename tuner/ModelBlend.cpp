#include "tuner/ModelBlend.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>

namespace opgen::tuner {

std::vector<double> rank_percentiles(const std::vector<double> &scores) {
    const size_t n = scores.size();
    std::vector<double> out(n, 0.5);
    if (n < 2) return out;
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] < scores[b]; });
    for (size_t lo = 0; lo < n;) {
        size_t hi = lo + 1;
        while (hi < n && !(scores[order[lo]] < scores[order[hi]])) hi++;
        // Ties take the mean of their ranks lo .. hi-1.
        double rank = 0.5 * double(lo + hi - 1);
        for (size_t k = lo; k < hi; k++) out[order[k]] = rank / double(n - 1);
        lo = hi;
    }
    return out;
}

double online_weight(int measured, int half_weight_trials) {
    if (half_weight_trials <= 0) return 1;
    if (measured <= 0) return 0;
    return double(measured) / double(measured + half_weight_trials);
}

std::vector<double> blend_by_rank(const std::vector<double> &prior, const std::vector<double> &online, double w) {
    if (prior.size() != online.size()) {
        throw std::invalid_argument("blend_by_rank: " + std::to_string(prior.size()) + " prior scores but " +
                                    std::to_string(online.size()) + " online scores");
    }
    w = std::clamp(w, 0.0, 1.0);
    std::vector<double> p = rank_percentiles(prior), o = rank_percentiles(online), out(prior.size());
    for (size_t i = 0; i < out.size(); i++) out[i] = w * o[i] + (1 - w) * p[i];
    return out;
}

size_t shortlist_size(size_t n) { return std::min(n, std::max<size_t>(200, n / 20)); }

double shortlist_threshold(std::vector<double> scores) {
    if (scores.empty()) return 0;
    const size_t keep = shortlist_size(scores.size());
    std::nth_element(scores.begin(), scores.begin() + long(keep - 1), scores.end(), std::greater<double>());
    return scores[keep - 1];
}

double sampled_shortlist_threshold(const TilingSpace &space, uint64_t seed,
                                   const std::function<double(const SchedulePoint &)> &score) {
    std::vector<double> scores;
    for (const auto &p : space.sample(20000, seed)) scores.push_back(score(p));
    return shortlist_threshold(std::move(scores));
}

}  // namespace opgen::tuner
