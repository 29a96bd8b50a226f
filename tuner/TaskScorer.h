// How tune() scores the candidates of one task (docs/design.md §2.6: the cost model ranks the
// legal space). Per point it computes the feature rows and the roofline estimate once per round.
// Before the task has enough correct measurements for the online model, the target's default
// model ranks on its own, or the roofline when there is none; after, the default model and the
// online model are blended by rank (tuner/ModelBlend.h). Either model ranks only the roofline's
// shortlist: outside it, the roofline's order stands, lower than every shortlisted point.
#ifndef OPGEN_TUNER_TASK_SCORER_H
#define OPGEN_TUNER_TASK_SCORER_H

#include "tuner/OnlineModel.h"
#include "core/TilingSpace.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace opgen::tuner {

struct TaskScorer {
    struct Scored {
        std::vector<float> rows;  // feature rows, one per stage group
        int nrows = 0;
        double roofline = 0;      // minus the roofline's time: higher is better
    };

    // `space` and the task must outlive the scorer. `prior` (may be null) is the default model;
    // it weighs alike with the online model once the task has `prior_half_weight` correct
    // measurements. The shortlist is taken from a sample of the space drawn with `seed`.
    TaskScorer(const ComputeDef &def, const BoundShape &shape, const Target &target, const TilingSpace &space,
               int threads, uint64_t seed, std::unique_ptr<costmodel::CostModel> prior, int prior_half_weight);

    // Forgets the points scored so far: the memo lives for one round, so memory stays bounded.
    void begin_round() { memo_.clear(); }
    const Scored &features_of(const SchedulePoint &p);
    // Scores `points`, higher is better (see the header).
    std::vector<double> score(const std::vector<SchedulePoint> &points);
    // Retrains the online model on `set` (tuner/OnlineModel.h).
    void retrain(const costmodel::TrainingSet &set, uint64_t seed) { online_.retrain(set, seed); }

private:
    double roofline_of(const SchedulePoint &p) const;

    const ComputeDef &def_;
    const BoundShape &shape_;
    const Target &target_;
    const TilingSpace &space_;
    int threads_;
    std::unique_ptr<costmodel::CostModel> prior_;
    int prior_half_weight_;
    OnlineModel online_;
    double shortlist_ = 0;
    std::map<std::string, Scored> memo_;
};

}  // namespace opgen::tuner

#endif
