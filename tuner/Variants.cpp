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
#include "tuner/CodeStore.h"
#include "tuner/Contention.h"
#include "tuner/Features.h"
#include "tuner/Measurer.h"
#include "tuner/ModelBlend.h"
#include "tuner/ModelStore.h"
#include "tuner/Search.h"

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

// Searches the legal space for candidates that are fast under the load of `level` (see the
// header, step 2); returns every candidate measured, in order, with its compiled kernel.
std::vector<Screened> search_under_load(const LevelSearchContext &c, double level, size_t level_index) {
    std::vector<Screened> out;
    if (c.vo.search <= 0) return out;
    const db::KernelKey measured_key = loaded_key(c.key, level);
    // The contended roofline's best share of the space is the shortlist, as in tune(): a model
    // trained on a few measurements extrapolates wildly outside it.
    auto analytic = [&](const SchedulePoint &p) {
        return -contended_roofline_seconds(c.def, c.shape, c.target, c.space, p, c.threads, level);
    };
    double shortlist = 0;
    {
        std::vector<double> r;
        for (const auto &p : c.space.sample(20000, c.seed)) r.push_back(analytic(p));
        shortlist = shortlist_threshold(std::move(r));
    }
    auto online = costmodel::make_xgboost_model(num_features());
    bool trained = false;
    int correct = 0;
    ScoreFn score = [&](const std::vector<SchedulePoint> &pts) {
        std::vector<double> base(pts.size());
        for (size_t i = 0; i < pts.size(); i++) base[i] = analytic(pts[i]);
        std::vector<double> out_scores = base;
        if (c.prior || trained) {
            costmodel::FeatureBatch fb = batch_features(c.def, c.shape, c.target, c.space, pts, c.threads, 1, level);
            if (c.prior) out_scores = blend_by_rank(c.prior->predict(fb), base, 0.5);
            if (trained) out_scores = blend_by_rank(out_scores, online->predict(fb), online_weight(correct, 8));
        }
        for (size_t i = 0; i < pts.size(); i++) {
            if (base[i] < shortlist) out_scores[i] -= 1e12;
        }
        return out_scores;
    };
    std::set<std::string> measured;
    for (const auto &p : c.finalists) measured.insert(point_key(p));
    auto is_measured = [&](const SchedulePoint &p) { return measured.count(point_key(p)) > 0; };
    SearchOptions so;
    so.seed = c.seed + 1000 * (level_index + 1);
    std::unique_ptr<SearchStrategy> search = make_search(c.space, so);
    ContentionSpec spec = contention_for_level(level, c.vo.load_bytes);
    // The quiet winner's rows at this level, recorded beside every candidate it is paired with.
    std::vector<float> winner_features;
    const int winner_rows =
        group_features(c.def, c.shape, c.target, c.space, c.winner_point, c.threads, winner_features, level);
    bool first = true;
    while (int(out.size()) < c.vo.search) {
        // The elite the evolution mutates: this level's best measured so far, then the quiet
        // finalists.
        std::vector<const Screened *> ok;
        for (const auto &s : out) {
            if (s.compiled) ok.push_back(&s);
        }
        std::stable_sort(ok.begin(), ok.end(),
                         [](const Screened *a, const Screened *b) { return a->result.ratio < b->result.ratio; });
        std::vector<SchedulePoint> elite;
        for (const Screened *s : ok) elite.push_back(s->result.point);
        elite.insert(elite.end(), c.finalists.begin(), c.finalists.end());
        int want = std::min(std::max(1, c.vo.search_batch), c.vo.search - int(out.size()));
        std::vector<SchedulePoint> batch = search->next_batch(want, score, is_measured, elite, first);
        first = false;
        if (batch.empty()) break;
        // Compiled with the load off (compiling is not what is measured), timed under it.
        size_t begin = out.size();
        for (const SchedulePoint &p : batch) {
            measured.insert(point_key(p));
            Screened s;
            s.result.point = p;
            s.result.dram_mb = dram_bytes(c.def, c.shape, c.target, c.space, p, c.threads) / 1e6;
            s.feature_rows = group_features(c.def, c.shape, c.target, c.space, p, c.threads, s.features, level);
            MeasureResult mr;
            s.compiled = compile_and_verify(c.task, p, mr);
            if (!s.compiled) s.result.status = mr.status;
            out.push_back(std::move(s));
        }
        std::vector<db::MeasurementRecord> records;
        auto record = [&](const SchedulePoint &p, const std::vector<float> &features, int feature_rows,
                          const std::string &status, double ms) {
            db::MeasurementRecord m;
            m.key = measured_key;
            m.schedule_json = p.to_json().dump();
            m.features = features;
            m.feature_rows = feature_rows;
            m.status = status;
            m.time_ms = status == "ok" ? ms : std::nan("");
            m.gflops = status == "ok" ? c.task.flops / (ms * 1e6) : std::nan("");
            records.push_back(std::move(m));
        };
        {
            Contention load(spec);
            for (size_t i = begin; i < out.size(); i++) {
                Screened &s = out[i];
                if (!s.compiled) {
                    record(s.result.point, s.features, s.feature_rows, s.result.status, 0);
                    continue;
                }
                try {
                    PairedTiming t = time_paired(*s.compiled->kernel, c.winner, c.vo.min_time_ms, 3);
                    s.result.time_ms = t.candidate.median_ms;
                    s.result.ratio = t.ratio;
                    record(s.result.point, s.features, s.feature_rows, "ok", t.candidate.median_ms);
                    // The quiet winner is the reference of every pair: measured most often, it
                    // corrects the others for clock drift when they become training data.
                    record(c.winner_point, winner_features, winner_rows, "ok", t.reference.median_ms);
                } catch (const std::exception &) {
                    s.result.status = "runtime_error";
                    s.compiled.reset();
                    record(s.result.point, s.features, s.feature_rows, s.result.status, 0);
                }
            }
        }
        c.cache.record_measurements(records);
        for (size_t i = begin; i < out.size(); i++) {
            const SearchedCandidate &r = out[i].result;
            char line[320];
            std::snprintf(line, sizeof line,
                          "variants: level %.2f search %zu/%d  %s  %s  %.3f ms  x%.3f of the quiet winner  "
                          "%.1f MB from outside L2",
                          level, i + 1, c.vo.search, r.point.summary().c_str(), r.status.c_str(), r.time_ms, r.ratio,
                          r.dram_mb);
            if (c.log) c.log(line);
        }
        // The online model learns this level from its ratios (throughput: 1 / ratio).
        costmodel::TrainingSet training;
        training.batch.num_features = num_features();
        correct = 0;
        for (const auto &s : out) {
            if (!s.compiled || !(s.result.ratio > 0)) continue;
            training.batch.add_candidate(s.features.data(), s.feature_rows);
            training.task.push_back(0);
            training.throughput.push_back(1.0 / s.result.ratio);
            correct++;
        }
        if (correct >= 4) {
            costmodel::TrainOptions to;
            to.seed = c.seed;
            to.rounds = 60;
            online->train(training, to);
            trained = true;
        }
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

    // The quiet finalists, compiled once here and bound to one task's tensors.
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
    run.quiet_finalists = int(kept.size());

    // Step 2: a search of its own under each level; its best few join the finalists.
    if (vo.search > 0) {
        TilingSpace space = make_tiling_space(def, shape, target, options.threads);
        std::unique_ptr<costmodel::CostModel> prior;
        if (vo.default_model && options.default_model) prior = load_default_model(target);
        // Copies: `kept` grows below.
        const std::vector<SchedulePoint> quiet_finalists = kept;
        const SchedulePoint winner = kept.front();
        LevelSearchContext ctx{def,         shape,           target,          space,        task,
                               *compiled.front()->kernel,  winner,          quiet_finalists, prior.get(),
                               vo,          options.threads, options.seed,    cache,        key,
                               options.log};
        std::set<std::string> taken;
        for (const auto &p : kept) taken.insert(point_key(p));
        for (size_t l = 0; l < vo.levels.size(); l++) {
            std::vector<Screened> found = search_under_load(ctx, vo.levels[l], l);
            std::vector<size_t> order;
            for (size_t i = 0; i < found.size(); i++) {
                if (found[i].compiled) order.push_back(i);
            }
            std::stable_sort(order.begin(), order.end(),
                             [&](size_t a, size_t b) { return found[a].result.ratio < found[b].result.ratio; });
            int added = 0;
            for (size_t i : order) {
                if (added >= vo.keep) break;
                if (!taken.insert(point_key(found[i].result.point)).second) continue;
                kept.push_back(found[i].result.point);
                run.finalists.push_back(found[i].result.point.summary());
                compiled.push_back(std::move(found[i].compiled));
                added++;
            }
            std::vector<SearchedCandidate> results;
            for (auto &s : found) results.push_back(std::move(s.result));
            run.searched.push_back(std::move(results));
        }
    }

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

    // Step 4: each level's variant (the quiet winner, finalist 0, at level 0).
    for (size_t l = 0; l < levels.size(); l++) {
        size_t best = l == 0 ? 0 : pick_variant(samples[l], vo.margin);
        db::VariantRecord v;
        v.key = key;
        v.level = levels[l];
        v.load = l == 0 ? "none" : contention_for_level(levels[l], vo.load_bytes).describe();
        v.schedule_json = kept[best].to_json().dump();
        LoweredOp fresh = lower_to_halide(def, shape);
        v.schedule_source = apply_schedule(fresh, kept[best], target).source();
        v.time_ms = run.medians[l][best];
        v.quiet_time_ms = run.medians[0][best];
        // Candidates weighed for this level: the quiet finalists and what its own search measured.
        v.trials = l > 0 && l - 1 < run.searched.size()
                       ? static_cast<int64_t>(run.quiet_finalists) + static_cast<int64_t>(run.searched[l - 1].size())
                       : static_cast<int64_t>(compiled.size());
        char line[320];
        std::snprintf(line, sizeof line,
                      "variants: level %.2f -> finalist %zu%s (%.3f ms there; quiet winner %.3f ms) %s", levels[l],
                      best, int(best) >= run.quiet_finalists ? " (searched under load)" : "", v.time_ms,
                      run.medians[l][0], kept[best].summary().c_str());
        log(line);
        db::put_variant(cache_path, v);
        run.variants.push_back(std::move(v));
    }
    return run;
}

}  // namespace opgen::tuner
