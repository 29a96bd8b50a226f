// A synthetic tuning problem for the cost-model tests: candidates of 3 stage groups, 8 features
// per group row, and a throughput that is a known nonlinear function of the rows plus 1% noise.
//
// Time is additive over groups (as in a real kernel, where stages run one after another) but each
// group's time is nonlinear in its features, with an interaction, a threshold and a periodic term,
// so a model has to learn more than a linear fit. Each task has its own absolute speed, which the
// per-task label normalisation must remove. Everything is drawn from one seeded std::mt19937_64
// with hand-scaled bits, so the data is the same on every platform.
#ifndef OPGEN_TESTS_COSTMODEL_SYNTHETIC_H
#define OPGEN_TESTS_COSTMODEL_SYNTHETIC_H

#include <cmath>
#include <random>

#include "costmodel/CostModel.h"

namespace opgen::costmodel::testing {

constexpr int synthetic_features = 8;
constexpr int synthetic_groups = 3;

inline double uniform(std::mt19937_64 &rng) {
    return double(rng() >> 11) * 0x1.0p-53;
}

inline double group_time(const float *row) {
    const double threshold = row[2] > 0.5f ? 1.5 : 0.2;
    const double wave = std::sin(6.0 * row[3]);
    return 0.2 + 3.0 * row[0] * row[1] + threshold + 0.5 * wave * wave + row[4] * row[4] * row[7];
}

// Tasks are numbered first_task, first_task + 1, ...; features 5 and 6 are pure noise, feature 7
// is constant within a task (like a shape parameter).
inline TrainingSet make_synthetic_set(int num_tasks, int candidates_per_task, uint64_t seed,
                                      int first_task = 0) {
    std::mt19937_64 rng(seed);
    TrainingSet set;
    set.batch.num_features = synthetic_features;
    for (int t = 0; t < num_tasks; t++) {
        const double task_speed = 0.5 + 2.0 * uniform(rng);
        const float task_feature = float(uniform(rng));
        for (int c = 0; c < candidates_per_task; c++) {
            float rows[synthetic_groups * synthetic_features];
            double time = 0;
            for (int g = 0; g < synthetic_groups; g++) {
                float *row = rows + g * synthetic_features;
                for (int k = 0; k < synthetic_features - 1; k++) {
                    row[k] = float(uniform(rng));
                }
                row[synthetic_features - 1] = task_feature;
                time += group_time(row);
            }
            const double noise = 1.0 + 0.02 * (uniform(rng) - 0.5);
            set.batch.add_candidate(rows, synthetic_groups);
            set.task.push_back(first_task + t);
            set.throughput.push_back(task_speed / time * noise);
        }
    }
    return set;
}

} // namespace opgen::costmodel::testing

#endif
