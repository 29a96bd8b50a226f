#include "tuner/Variants.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "base/Error.h"
#include "core/Lower.h"
#include "codegen/CodeStore.h"
#include "tuner/Contention.h"
#include "tuner/Features.h"
#include "tuner/Measurer.h"
#include "tuner/ModelBlend.h"
#include "tuner/ModelStore.h"
#include "tuner/OnlineModel.h"
#include "tuner/Search.h"

namespace opgen::tuner {

namespace {

// The upper-middle median (0 for none), as every timing in opgen is summarized.
double median(std::vector<double> v) { return summarize_samples(std::move(v)).median_ms; }

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

// Everything one level's search needs besides the level.
struct LevelSearchContext {
    const ComputeDef &def;
    const BoundShape &shape;
    const Target &target;
    const TilingSpace &space;
    TaskContext &task;
    JitKernel &winner;                      // the quiet winner, compiled
    const SchedulePoint &winner_point;
    const std::vector<SchedulePoint> &finalists;  // measured in the rounds anyway: not searched
    const costmodel::CostModel *prior;      // the default model; may be null
    const VariantOptions &vo;
    int threads;
    uint64_t seed;
    db::KernelCache &cache;
    const db::KernelKey &key;
    std::function<void(const std::string &)> log;
};

struct Screened {
    SearchedCandidate result;
    std::unique_ptr<CompiledCandidate> compiled;  // null when it failed
    std::vector<float> features;  // its group rows at the level searched
    int feature_rows = 0;
};

// How one level's search scores points: the contended roofline, blended by rank with the default
// model fed the level and, once trained, with the online model of the level's own ratios. Only the
// contended roofline's shortlist is ranked by the models, as in tune(): a model trained on a few
// measurements extrapolates wildly outside it.
struct LevelScorer {
    const LevelSearchContext &c;
    double level;
    const OnlineModel &online;
    double shortlist = 0;

    double analytic(const SchedulePoint &p) const {
        return -contended_roofline_seconds(c.def, c.shape, c.target, c.space, p, c.threads, level);
    }
    std::vector<double> operator()(const std::vector<SchedulePoint> &pts) const {
        std::vector<double> base(pts.size());
        for (size_t i = 0; i < pts.size(); i++) base[i] = analytic(pts[i]);
        std::vector<double> out = base;
        if (c.prior || online.trained()) {
            costmodel::FeatureBatch fb = batch_features(c.def, c.shape, c.target, c.space, pts, c.threads, 1, level);
            if (c.prior) out = blend_by_rank(c.prior->predict(fb), base, 0.5);
            if (online.trained()) out = blend_by_rank(out, online.predict(fb), online_weight(online.correct(), 8));
        }
        for (size_t i = 0; i < pts.size(); i++) {
            if (base[i] < shortlist) out[i] -= 1e12;
        }
        return out;
    }
};

// The elite the evolution mutates: this level's best measured so far, then the quiet finalists.
std::vector<SchedulePoint> level_elite(const std::vector<Screened> &found,
                                       const std::vector<SchedulePoint> &finalists) {
    std::vector<const Screened *> ok;
    for (const auto &s : found) {
        if (s.compiled) ok.push_back(&s);
    }
    std::stable_sort(ok.begin(), ok.end(),
                     [](const Screened *a, const Screened *b) { return a->result.ratio < b->result.ratio; });
    std::vector<SchedulePoint> elite;
    for (const Screened *s : ok) elite.push_back(s->result.point);
    elite.insert(elite.end(), finalists.begin(), finalists.end());
    return elite;
}

// A batch's points compiled and verified with the load off (compiling is not what is measured).
std::vector<Screened> compile_batch(const LevelSearchContext &c, double level,
                                    const std::vector<SchedulePoint> &batch) {
    std::vector<Screened> out;
    for (const SchedulePoint &p : batch) {
        Screened s;
        s.result.point = p;
        s.result.dram_mb = dram_bytes(c.def, c.shape, c.target, c.space, p, c.threads) / 1e6;
        s.feature_rows = group_features(c.def, c.shape, c.target, c.space, p, c.threads, s.features, level);
        MeasureResult mr;
        s.compiled = compile_and_verify(c.task, p, mr);
        if (!s.compiled) s.result.status = mr.status;
        out.push_back(std::move(s));
    }
    return out;
}

// A measurement of the level's search as the cache records it, under the loaded key.
db::MeasurementRecord level_record(const LevelSearchContext &c, const db::KernelKey &key, const SchedulePoint &p,
                                   const std::vector<float> &features, int feature_rows, const std::string &status,
                                   double ms) {
    db::MeasurementRecord m;
    m.key = key;
    m.schedule_json = p.to_json().dump();
    m.features = features;
    m.feature_rows = feature_rows;
    m.status = status;
    m.time_ms = status == "ok" ? ms : std::nan("");
    m.gflops = status == "ok" ? c.task.flops / (ms * 1e6) : std::nan("");
    return m;
}

// Times each compiled candidate of `batch` under the level's load, paired call by call with the
// quiet winner, and records every timing (the winner's too: measured most often, it corrects the
// others for clock drift when they become training data).
void time_under_load(const LevelSearchContext &c, double level, std::vector<Screened> &batch,
                     const std::vector<float> &winner_features, int winner_rows) {
    const db::KernelKey key = loaded_key(c.key, level);
    std::vector<db::MeasurementRecord> records;
    {
        Contention load(contention_for_level(level, c.vo.load_bytes));
        for (Screened &s : batch) {
            if (!s.compiled) {
                records.push_back(level_record(c, key, s.result.point, s.features, s.feature_rows, s.result.status, 0));
                continue;
            }
            try {
                PairedTiming t = time_paired(*s.compiled->kernel, c.winner, c.vo.min_time_ms, 3);
                s.result.time_ms = t.candidate.median_ms;
                s.result.ratio = t.ratio;
                records.push_back(level_record(c, key, s.result.point, s.features, s.feature_rows, "ok",
                                               t.candidate.median_ms));
                records.push_back(level_record(c, key, c.winner_point, winner_features, winner_rows, "ok",
                                               t.reference.median_ms));
            } catch (const std::exception &) {
                s.result.status = "runtime_error";
                s.compiled.reset();
                records.push_back(level_record(c, key, s.result.point, s.features, s.feature_rows, s.result.status, 0));
            }
        }
    }
    c.cache.record_measurements(records);
}

void log_searched(const LevelSearchContext &c, double level, const std::vector<Screened> &found, size_t begin) {
    if (!c.log) return;
    for (size_t i = begin; i < found.size(); i++) {
        const SearchedCandidate &r = found[i].result;
        char line[320];
        std::snprintf(line, sizeof line,
                      "variants: level %.2f search %zu/%d  %s  %s  %.3f ms  x%.3f of the quiet winner  "
                      "%.1f MB from outside L2",
                      level, i + 1, c.vo.search, r.point.summary().c_str(), r.status.c_str(), r.time_ms, r.ratio,
                      r.dram_mb);
        c.log(line);
    }
}

// The online model learns the level from its ratios (throughput: 1 / ratio).
void retrain_on_ratios(OnlineModel &online, const std::vector<Screened> &found, uint64_t seed) {
    costmodel::TrainingSet training;
    training.batch.num_features = num_features();
    for (const auto &s : found) {
        if (s.compiled && s.result.ratio > 0) add_training_row(training, s.features, s.feature_rows, 1.0 / s.result.ratio);
    }
    online.retrain(training, seed);
}

// Searches the legal space for candidates that are fast under the load of `level` (see the
// header, step 2); returns every candidate measured, in order, with its compiled kernel.
std::vector<Screened> search_under_load(const LevelSearchContext &c, double level, size_t level_index) {
    std::vector<Screened> out;
    if (c.vo.search <= 0) return out;
    OnlineModel online;
    LevelScorer scorer{c, level, online};
    scorer.shortlist = sampled_shortlist_threshold(c.space, c.seed, [&](const SchedulePoint &p) { return scorer.analytic(p); });
    std::set<std::string> measured;
    for (const auto &p : c.finalists) measured.insert(point_key(p));
    MeasuredFn is_measured = [&](const SchedulePoint &p) { return measured.count(point_key(p)) > 0; };
    SearchOptions so;
    so.seed = c.seed + 1000 * (level_index + 1);
    std::unique_ptr<SearchStrategy> search = make_search(c.space, so);
    // The quiet winner's rows at this level, recorded beside every candidate it is paired with.
    std::vector<float> winner_features;
    const int winner_rows =
        group_features(c.def, c.shape, c.target, c.space, c.winner_point, c.threads, winner_features, level);
    for (bool first = true; int(out.size()) < c.vo.search; first = false) {
        int want = std::min(std::max(1, c.vo.search_batch), c.vo.search - int(out.size()));
        std::vector<SchedulePoint> batch = search->next_batch(want, scorer, is_measured, level_elite(out, c.finalists), first);
        if (batch.empty()) break;
        for (const SchedulePoint &p : batch) measured.insert(point_key(p));
        std::vector<Screened> screened = compile_batch(c, level, batch);
        time_under_load(c, level, screened, winner_features, winner_rows);
        const size_t begin = out.size();
        for (auto &s : screened) out.push_back(std::move(s));
        log_searched(c, level, out, begin);
        retrain_on_ratios(online, out, c.seed);
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

size_t pick_variant(const std::vector<std::vector<double>> &samples, double margin) {
    // On a noisy machine a lower median alone picked schedules that were slower under the same
    // load when measured again; the ratio to the winner in the same round cancels the drift.
    if (samples.empty()) return 0;
    auto positive = [](const std::vector<double> &v) {
        std::vector<double> out;
        for (double x : v) if (x > 0) out.push_back(x);
        return out;
    };
    const std::vector<double> winners = positive(samples[0]);
    size_t best = 0;
    double best_ratio = 1 - margin;
    for (size_t f = 1; f < samples.size(); f++) {
        std::vector<double> paired;
        for (size_t r = 0; r < samples[f].size() && r < samples[0].size(); r++) {
            if (samples[f][r] > 0 && samples[0][r] > 0) paired.push_back(samples[f][r] / samples[0][r]);
        }
        if (paired.empty()) continue;
        double ratio = median(paired);
        // The median times must agree: on 2026-11-21 a conv variant whose paired median was below
        // 0.95 but whose median time was only 2.5% below the winner's ran 7.6% slower in the
        // benchmark; a variant the load does not clearly favour is not worth a switch.
        const std::vector<double> mine = positive(samples[f]);
        if (mine.empty() || winners.empty() || median(mine) / median(winners) >= 1 - margin) continue;
        if (ratio < best_ratio) {
            best_ratio = ratio;
            best = f;
        }
    }
    return best;
}

namespace {

// The finalists compiled once here and bound to one task's tensors, the winner first; a finalist
// that no longer compiles is skipped with a line in the log.
struct Finalists {
    std::vector<SchedulePoint> points;
    std::vector<std::unique_ptr<CompiledCandidate>> compiled;
};

Finalists compile_quiet_finalists(TaskContext &task, const std::vector<SchedulePoint> &points, VariantRun &run,
                                  const std::function<void(const std::string &)> &log) {
    Finalists f;
    for (const SchedulePoint &p : points) {
        MeasureResult mr;
        auto c = compile_and_verify(task, p, mr);
        if (!c) {
            log("variants: finalist " + p.summary() + " skipped: " + mr.status);
            continue;
        }
        f.compiled.push_back(std::move(c));
        f.points.push_back(p);
        run.finalists.push_back(p.summary());
    }
    return f;
}

// Step 2: a search of its own under each level; each level's best few (by ratio to the quiet
// winner, at most vo.keep, none twice) join the finalists, and what it measured goes into `run`.
void search_levels(const LevelSearchContext &ctx, Finalists &f, VariantRun &run) {
    std::set<std::string> taken;
    for (const auto &p : f.points) taken.insert(point_key(p));
    for (size_t l = 0; l < ctx.vo.levels.size(); l++) {
        std::vector<Screened> found = search_under_load(ctx, ctx.vo.levels[l], l);
        std::vector<size_t> order;
        for (size_t i = 0; i < found.size(); i++) {
            if (found[i].compiled) order.push_back(i);
        }
        std::stable_sort(order.begin(), order.end(),
                         [&](size_t a, size_t b) { return found[a].result.ratio < found[b].result.ratio; });
        int added = 0;
        for (size_t i : order) {
            if (added >= ctx.vo.keep) break;
            if (!taken.insert(point_key(found[i].result.point)).second) continue;
            f.points.push_back(found[i].result.point);
            run.finalists.push_back(found[i].result.point.summary());
            f.compiled.push_back(std::move(found[i].compiled));
            added++;
        }
        std::vector<SearchedCandidate> results;
        for (auto &s : found) results.push_back(std::move(s.result));
        run.searched.push_back(std::move(results));
    }
}

// Step 3: every finalist timed with the load off and at every level, interleaved per round (who goes
// first rotates): samples[l][f][round].
std::vector<std::vector<std::vector<double>>> time_at_levels(const Finalists &f, const std::vector<double> &levels,
                                                             const VariantOptions &vo,
                                                             const std::function<void(const std::string &)> &log) {
    std::vector<std::vector<std::vector<double>>> samples(levels.size(),
                                                          std::vector<std::vector<double>>(f.compiled.size()));
    for (int round = 0; round < std::max(1, vo.rounds); round++) {
        for (size_t l = 0; l < levels.size(); l++) {
            std::optional<Contention> load;
            if (levels[l] > 0) load.emplace(contention_for_level(levels[l], vo.load_bytes));
            for (size_t k = 0; k < f.compiled.size(); k++) {
                size_t i = (k + round) % f.compiled.size();
                samples[l][i].push_back(f.compiled[i]->kernel->time(vo.min_time_ms, 2).median_ms);
            }
        }
        log("variants: round " + std::to_string(round + 1) + " of " + std::to_string(vo.rounds) + " timed");
    }
    return samples;
}

// Step 4: level l's variant (the quiet winner, finalist 0, at level 0) as the cache stores it.
db::VariantRecord level_variant(const ComputeDef &def, const BoundShape &shape, const Target &target,
                                const db::KernelKey &key, const VariantOptions &vo, const VariantRun &run,
                                const std::vector<SchedulePoint> &points, double level, size_t l, size_t best) {
    db::VariantRecord v;
    v.key = key;
    v.level = level;
    v.load = l == 0 ? "none" : contention_for_level(level, vo.load_bytes).describe();
    v.schedule_json = points[best].to_json().dump();
    LoweredOp fresh = lower_for_point(def, shape, &points[best]);
    v.schedule_source = apply_schedule(fresh, points[best], target).source();
    v.time_ms = run.medians[l][best];
    v.quiet_time_ms = run.medians[0][best];
    // Candidates weighed for this level: the quiet finalists and what its own search measured.
    v.trials = l > 0 && l - 1 < run.searched.size()
                   ? static_cast<int64_t>(run.quiet_finalists) + static_cast<int64_t>(run.searched[l - 1].size())
                   : static_cast<int64_t>(points.size());
    return v;
}

}  // namespace

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
    store_winner(def, shape, target, winner_record(key, run.tune), cache, options.log);  // with its code
    run.quiet = cache.lookup(key).value_or(winner_record(key, run.tune));
    TaskContext task(def, shape, target, options.seed);
    Finalists f = compile_quiet_finalists(task, pick_finalists(run.tune, std::max(1, vo.finalists)), run, log);
    user_check(!f.compiled.empty() && run.finalists.front() == run.tune.best.summary())
        << "op '" << def.name << "' at " << shape.canonical << ": the quiet winner no longer compiles here";
    run.quiet_finalists = int(f.points.size());
    if (vo.search > 0) {
        TilingSpace space = make_tiling_space(def, shape, target, options.threads);
        std::unique_ptr<costmodel::CostModel> prior;
        if (vo.default_model && options.default_model) prior = load_default_model(target);
        // Copies: the finalists grow in search_levels.
        const std::vector<SchedulePoint> quiet_finalists = f.points;
        const SchedulePoint winner = f.points.front();
        LevelSearchContext ctx{def, shape, target, space, task, *f.compiled.front()->kernel, winner, quiet_finalists,
                               prior.get(), vo, options.threads, options.seed, cache, key, options.log};
        search_levels(ctx, f, run);
    }
    std::vector<double> levels = {0};
    levels.insert(levels.end(), vo.levels.begin(), vo.levels.end());
    auto samples = time_at_levels(f, levels, vo, log);
    run.medians.assign(levels.size(), std::vector<double>(f.compiled.size()));
    for (size_t l = 0; l < levels.size(); l++) {
        for (size_t i = 0; i < f.compiled.size(); i++) run.medians[l][i] = median(samples[l][i]);
    }
    for (size_t l = 0; l < levels.size(); l++) {
        size_t best = l == 0 ? 0 : pick_variant(samples[l], vo.margin);
        db::VariantRecord v = level_variant(def, shape, target, key, vo, run, f.points, levels[l], l, best);
        char line[320];
        std::snprintf(line, sizeof line,
                      "variants: level %.2f -> finalist %zu%s (%.3f ms there; quiet winner %.3f ms) %s", levels[l],
                      best, int(best) >= run.quiet_finalists ? " (searched under load)" : "", v.time_ms,
                      run.medians[l][0], f.points[best].summary().c_str());
        log(line);
        db::put_variant(cache_path, v);
        run.variants.push_back(std::move(v));
    }
    return run;
}

}  // namespace opgen::tuner
