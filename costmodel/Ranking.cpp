// Ranking quality of a model's scores against measured throughputs, task by task.
//
// The tuner only ever compares candidates of one task (one shape), so every figure is computed
// within a task and the tasks are averaged with equal weight: a task with many measurements must
// not drown the others.
#include "costmodel/CostModel.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "costmodel/Validation.h"

namespace opgen::costmodel {

namespace {

struct TaskQuality {
    bool has_pairs = false; // at least two candidates with distinct throughputs
    double pairwise_accuracy = 0;
    double kendall_tau = 0;
    double top1_regret = 1;
    double top5_regret = 1;
};

TaskQuality evaluate_task(const std::vector<size_t> &members, const std::vector<double> &scores,
                          const std::vector<double> &throughput) {
    TaskQuality quality;
    // Pair counts, O(n^2): evaluation sets hold at most a few thousand candidates per task.
    double concordant = 0, discordant = 0, score_ties = 0, throughput_ties = 0;
    double score_ties_only = 0; // tied score, distinct throughputs
    for (size_t a = 0; a < members.size(); a++) {
        for (size_t b = a + 1; b < members.size(); b++) {
            const double ds = scores[members[a]] - scores[members[b]];
            const double dt = throughput[members[a]] - throughput[members[b]];
            if (ds == 0) {
                score_ties++;
            }
            if (dt == 0) {
                throughput_ties++;
                continue;
            }
            if (ds == 0) {
                score_ties_only++;
            } else if ((ds > 0) == (dt > 0)) {
                concordant++;
            } else {
                discordant++;
            }
        }
    }
    const double n = double(members.size());
    const double pairs = n * (n - 1) / 2;
    const double distinct_pairs = pairs - throughput_ties;
    if (distinct_pairs > 0) {
        quality.has_pairs = true;
        // A tie in score is half right: a constant model scores 0.5, the same as a coin.
        quality.pairwise_accuracy = (concordant + 0.5 * score_ties_only) / distinct_pairs;
        // Kendall's tau-b, which corrects for ties on either side; with no ties it equals tau-a.
        // All scores tied gives 0 (no information) rather than 0/0.
        const double denominator = std::sqrt((pairs - score_ties) * distinct_pairs);
        quality.kendall_tau = denominator > 0 ? (concordant - discordant) / denominator : 0.0;
    }

    // The model's pick order. Among equal scores assume the slowest comes first: a model that
    // cannot tell candidates apart must not be credited with the order the data arrived in.
    std::vector<size_t> order(members);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (scores[a] != scores[b]) {
            return scores[a] > scores[b];
        }
        if (throughput[a] != throughput[b]) {
            return throughput[a] < throughput[b];
        }
        return a < b;
    });
    double best = 0, best_of_top5 = 0;
    for (size_t i : members) {
        best = std::max(best, throughput[i]);
    }
    for (size_t k = 0; k < order.size() && k < 5; k++) {
        best_of_top5 = std::max(best_of_top5, throughput[order[k]]);
    }
    quality.top1_regret = best / throughput[order.front()];
    quality.top5_regret = best / best_of_top5;
    return quality;
}

} // namespace

RankingQuality evaluate_ranking(const std::vector<double> &scores, const TrainingSet &set) {
    check_training_set(set, set.batch.num_features, "evaluate_ranking");
    if (scores.size() != set.batch.num_candidates()) {
        std::ostringstream message;
        message << "evaluate_ranking: " << scores.size() << " scores for "
                << set.batch.num_candidates() << " candidates";
        throw ModelError(message.str());
    }
    for (size_t i = 0; i < scores.size(); i++) {
        if (std::isnan(scores[i])) {
            std::ostringstream message;
            message << "evaluate_ranking: score of candidate " << i << " is NaN";
            throw ModelError(message.str());
        }
    }

    // std::map: tasks in id order, so the averages add up in the same order on every run.
    std::map<int32_t, std::vector<size_t>> tasks;
    for (size_t i = 0; i < set.task.size(); i++) {
        tasks[set.task[i]].push_back(i);
    }
    RankingQuality result;
    int tasks_with_pairs = 0;
    for (const auto &[id, members] : tasks) {
        const TaskQuality quality = evaluate_task(members, scores, set.throughput);
        if (quality.has_pairs) {
            tasks_with_pairs++;
            result.pairwise_accuracy += quality.pairwise_accuracy;
            result.kendall_tau += quality.kendall_tau;
        }
        result.top1_regret += quality.top1_regret;
        result.top5_regret += quality.top5_regret;
    }
    // Pair figures average over the tasks that have a pair to judge; with none, report chance.
    if (tasks_with_pairs > 0) {
        result.pairwise_accuracy /= tasks_with_pairs;
        result.kendall_tau /= tasks_with_pairs;
    } else {
        result.pairwise_accuracy = 0.5;
        result.kendall_tau = 0;
    }
    result.top1_regret /= double(tasks.size());
    result.top5_regret /= double(tasks.size());
    return result;
}

} // namespace opgen::costmodel
