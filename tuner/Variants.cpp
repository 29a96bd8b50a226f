#include "tuner/Variants.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "opgen/Error.h"
#include "opgen/Lower.h"
#include "tuner/Contention.h"
#include "tuner/Measurer.h"

namespace opgen::tuner {

namespace {

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

// The quiet run's best distinct correct candidates, the winner first.
std::vector<SchedulePoint> pick_finalists(const TuneResult &r, int count) {
    std::vector<const Trial *> ok;
    for (const Trial &t : r.trials) {
        if (t.result.ok()) ok.push_back(&t);
    }
    std::stable_sort(ok.begin(), ok.end(),
                     [](const Trial *a, const Trial *b) { return a->result.gflops > b->result.gflops; });
    std::vector<SchedulePoint> out = {r.best};
    std::set<std::string> seen = {r.best.to_json().dump()};
    for (const Trial *t : ok) {
        if (static_cast<int>(out.size()) >= count) break;
        if (seen.insert(t->point.to_json().dump()).second) out.push_back(t->point);
    }
    return out;
}

}  // namespace

std::vector<double> parse_contention_levels(const std::string &text, const std::string &flag) {
    std::vector<double> levels;
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) {
        double v = 0;
        size_t used = 0;
        try {
            v = std::stod(item, &used);
        } catch (const std::exception &) {
            used = 0;
        }
        user_check(used == item.size() && !item.empty()) << flag << ": '" << item << "' is not a number";
        user_check(v > 0 && v <= 64) << flag << ": contention level " << item
                                     << " must be above 0 and at most 64 (load threads x intensity)";
        levels.push_back(v);
    }
    user_check(!levels.empty()) << flag << ": no contention levels given (e.g. 0.5,1)";
    std::sort(levels.begin(), levels.end());
    levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
    return levels;
}

VariantRun tune_variants(const ComputeDef &def, const BoundShape &shape, const Target &target,
                         const TuneOptions &options, const VariantOptions &vo, db::KernelCache &cache,
                         const std::string &cache_path) {
    user_check(target.measurable) << "target '" << target.name
                                  << "' cannot be measured on this machine; use 'opgen space' to inspect its legal space";
    auto log = [&](const std::string &line) {
        if (options.log) options.log(line);
    };
    VariantRun run;
    db::KernelKey key = kernel_key(def, shape, target, options.threads);
    // Step 1: the quiet winner, as `opgen tune` finds it (recorded measurements are reused).
    run.tune = tune(def, shape, target, options, &cache, &key);
    user_check(run.tune.found) << "op '" << def.name << "' at " << shape.canonical
                               << ": no candidate produced a correct result";
    cache.put_kernel(winner_record(key, run.tune));
    run.quiet = cache.lookup(key).value_or(winner_record(key, run.tune));

    // Step 2: the finalists, compiled once here and bound to one task's tensors.
    std::vector<SchedulePoint> points = pick_finalists(run.tune, std::max(1, vo.finalists));
    TaskContext task(def, shape, target, options.seed);
    std::vector<std::unique_ptr<CompiledCandidate>> compiled;
    std::vector<SchedulePoint> kept;
    for (const SchedulePoint &p : points) {
        MeasureResult mr;
        auto c = compile_and_verify(task, p, mr);
        if (!c) {
            log("variants: finalist " + p.summary() + " skipped: " + mr.status);
            continue;
        }
        compiled.push_back(std::move(c));
        kept.push_back(p);
        run.finalists.push_back(p.summary());
    }
    user_check(!compiled.empty() && run.finalists.front() == run.tune.best.summary())
        << "op '" << def.name << "' at " << shape.canonical << ": the quiet winner no longer compiles here";

    // Step 3: every finalist timed with the load off and at every level, interleaved per round.
    std::vector<double> levels = {0};
    levels.insert(levels.end(), vo.levels.begin(), vo.levels.end());
    std::vector<std::vector<std::vector<double>>> samples(
        levels.size(), std::vector<std::vector<double>>(compiled.size()));
    for (int round = 0; round < std::max(1, vo.rounds); round++) {
        for (size_t l = 0; l < levels.size(); l++) {
            std::optional<Contention> load;
            if (levels[l] > 0) load.emplace(contention_for_level(levels[l], vo.load_bytes));
            for (size_t k = 0; k < compiled.size(); k++) {
                size_t f = (k + round) % compiled.size();  // rotate who goes first
                samples[l][f].push_back(compiled[f]->kernel->time(vo.min_time_ms, 2).median_ms);
            }
        }
        log("variants: round " + std::to_string(round + 1) + " of " + std::to_string(vo.rounds) + " timed");
    }
    run.medians.assign(levels.size(), std::vector<double>(compiled.size()));
    for (size_t l = 0; l < levels.size(); l++) {
        for (size_t f = 0; f < compiled.size(); f++) run.medians[l][f] = median(samples[l][f]);
    }

    // Step 4: each level's variant. A finalist replaces the quiet winner (finalist 0) at a level
    // only when the median over rounds of its time paired with the winner's in the same round is
    // at least `margin` below 1: on a noisy machine a lower median alone picked schedules that
    // were slower under the same load when measured again.
    for (size_t l = 0; l < levels.size(); l++) {
        size_t best = 0;
        double best_ratio = 1 - vo.margin;
        for (size_t f = 1; l > 0 && f < compiled.size(); f++) {
            std::vector<double> paired;
            for (size_t r = 0; r < samples[l][f].size(); r++) paired.push_back(samples[l][f][r] / samples[l][0][r]);
            double ratio = median(paired);
            if (ratio < best_ratio) {
                best_ratio = ratio;
                best = f;
            }
        }
        db::VariantRecord v;
        v.key = key;
        v.level = levels[l];
        v.load = l == 0 ? "none" : contention_for_level(levels[l], vo.load_bytes).describe();
        v.schedule_json = kept[best].to_json().dump();
        LoweredOp fresh = lower_to_halide(def, shape);
        v.schedule_source = apply_schedule(fresh, kept[best], target).source();
        v.time_ms = run.medians[l][best];
        v.quiet_time_ms = run.medians[0][best];
        v.trials = static_cast<int64_t>(compiled.size());
        char line[256];
        std::snprintf(line, sizeof line, "variants: level %.2f -> finalist %zu (%.3f ms there; quiet winner %.3f ms)",
                      levels[l], best, v.time_ms, run.medians[l][0]);
        log(line);
        db::put_variant(cache_path, v);
        run.variants.push_back(std::move(v));
    }
    return run;
}

}  // namespace opgen::tuner
