#include "tuner/PairedSteps.h"

#include <algorithm>

namespace opgen::tuner {

PairedSteps alternate_calls(const std::function<double()> &candidate, const std::function<double()> &reference,
                            double min_total_ms, int min_runs, int max_runs) {
    PairedSteps p;
    std::vector<double> ratios;
    double total = 0;
    while ((total < min_total_ms || int(p.candidate_ms.size()) < min_runs) && int(p.candidate_ms.size()) < max_runs) {
        // Alternate which kernel goes first, so neither always runs on the other's warm caches.
        double r_ms, c_ms;
        if (p.candidate_ms.size() % 2 == 0) {
            r_ms = reference();
            c_ms = candidate();
        } else {
            c_ms = candidate();
            r_ms = reference();
        }
        p.candidate_ms.push_back(c_ms);
        p.reference_ms.push_back(r_ms);
        ratios.push_back(r_ms > 0 ? c_ms / r_ms : 0);
        total += c_ms;
    }
    std::sort(ratios.begin(), ratios.end());
    p.ratio = ratios.empty() ? 0 : ratios[ratios.size() / 2];
    return p;
}

}  // namespace opgen::tuner
