#include "tuner/Tuner.h"

#include "tuner/CodeStore.h"
#include "tuner/Features.h"
#include "tuner/ModelBlend.h"
#include "tuner/ModelStore.h"
#include "tuner/RunRecord.h"
#include "tuner/Search.h"
#include "tuner/Worker.h"

#include <Halide.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <sstream>
#include <thread>

namespace opgen::tuner {

const char *tuner_version() { return "opgen-tuner-2"; }

std::string halide_version() {
    // Halide 14's headers carry no version macros; CMake passes the package's version.
    return OPGEN_HALIDE_VERSION;
}

db::KernelKey kernel_key(const ComputeDef &def, const BoundShape &shape, const Target &target, int threads) {
    db::KernelKey k;
    k.op_name = def.name;
    k.op_hash = definition_hash(def.source);
    k.shape = shape.canonical;
    k.dtype = dtype_name(def.output().dtype);
    k.target = target.name + ":t" + std::to_string(threads);
    k.halide_version = halide_version();
    k.tuner_version = tuner_version();
    return k;
}

db::KernelKey loaded_key(const db::KernelKey &key, double level) {
    if (!(level > 0)) return key;
    char suffix[48];
    std::snprintf(suffix, sizeof suffix, ":load%g", level);
    db::KernelKey k = key;
    k.target += suffix;
    return k;
}

double contention_level_of(const std::string &target_key) {
    auto pos = target_key.rfind(":load");
    if (pos == std::string::npos) return 0;
    try {
        size_t used = 0;
        const std::string text = target_key.substr(pos + 5);
        double level = std::stod(text, &used);
        return used == text.size() && std::isfinite(level) && level > 0 ? level : 0;
    } catch (const std::exception &) {
        return 0;
    }
}

namespace {

void say(const TuneOptions &o, const std::string &line) {
    if (o.log) o.log(line);
}

db::MeasurementRecord to_record(const db::KernelKey &key, int64_t run_id, const Trial &t) {
    db::MeasurementRecord m;
    m.key = key;
    m.run_id = run_id;
    m.schedule_json = t.point.to_json().dump();
    m.features = t.features;
    m.feature_rows = t.feature_rows;
    m.time_ms = t.result.ok() ? t.result.timing.median_ms : std::nan("");
    m.gflops = t.result.gflops;
    m.status = t.result.status;
    m.error = t.result.error.substr(0, 2000);
    return m;
}

}  // namespace

TuneResult tune(const ComputeDef &def, const BoundShape &shape, const Target &target, const TuneOptions &o,
                db::KernelCache *cache, const db::KernelKey *key) {
    auto t0 = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
    TuneResult result;
    TilingSpace space = make_tiling_space(def, shape, target, o.threads);
    result.legal_size = int64_t(space.legal.size());
    result.flops = flop_count(def, shape);

    // Measurements a killed run already recorded under this key are reused, never taken again.
    std::map<std::string, db::MeasurementRecord> recorded;
    if (cache && key) {
        for (auto &m : cache->measurements_for(*key)) {
            try {
                recorded.emplace(point_key(SchedulePoint::from_json(nlohmann::json::parse(m.schedule_json))), m);
            } catch (const std::exception &) {
                // A row this version cannot read is training data for others, not a point to reuse.
            }
        }
    }

    SearchOptions so;
    so.seed = o.seed;
    so.epsilon = o.epsilon;
    so.exhaustive_limit = size_t(std::max(0, o.max_pool));
    std::unique_ptr<SearchStrategy> search = make_search(space, so);
    result.search = search->name();
    std::ostringstream head;
    head << def.name << " " << shape.canonical << ": legal space " << space.legal.size() << " of "
         << space.total_points << " points, " << space.groups.size() << " stage groups, " << result.search
         << " search";
    if (!recorded.empty()) head << ", " << recorded.size() << " measurements already recorded";
    say(o, head.str());

    // The reference kernel every timing is paired with, and the first candidate measured: the
    // hand-written heuristic point, so the tuner never does worse than it.
    SchedulePoint reference = heuristic_point(def, shape, target);
    if (o.threads <= 1) reference.parallel_loops = 0;

    std::unique_ptr<WorkerPool> own_pool;
    WorkerPool *pool = o.pool;
    if (!pool) {
        int jobs = o.jobs > 0 ? o.jobs : int(std::max(1u, std::thread::hardware_concurrency()));
        own_pool = std::make_unique<WorkerPool>(jobs);
        pool = own_pool.get();
    }
    int restarts_before = pool->restarts();
    WorkerTask wt;
    wt.def = &def;
    wt.shape = shape;
    wt.target = target;
    wt.seed = o.seed;
    wt.threads = o.threads;
    wt.reference = reference;
    pool->set_task(wt);
    PoolOptions po;
    po.min_time_ms = o.min_time_ms;
    po.timeout_s = o.timeout_s;

    // Features and roofline estimates, computed once per point.
    struct Scored {
        std::vector<float> rows;
        int nrows = 0;
        double roofline = 0;
    };
    // A memo for one round's scoring only: it is emptied before every round (see the loop), so the
    // tuner's memory is bounded by one round's work and does not grow with the trials.
    std::map<std::string, Scored> scored;
    auto features_of = [&](const SchedulePoint &p) -> const Scored & {
        std::string k = point_key(p);
        auto it = scored.find(k);
        if (it != scored.end()) return it->second;
        Scored s;
        s.nrows = group_features(def, shape, target, space, p, o.threads, s.rows);
        s.roofline = -roofline_seconds(def, shape, target, space, p, o.threads);
        return scored.emplace(k, std::move(s)).first->second;
    };
    // A model trained on a handful of measurements extrapolates wildly across a large space: it
    // orders the roofline's best share of the space first, the rest after.
    double shortlist_roofline;
    {
        std::vector<double> r;
        for (const auto &p : space.sample(20000, o.seed)) r.push_back(features_of(p).roofline);
        shortlist_roofline = shortlist_threshold(std::move(r));
    }
    // The default model, trained offline on many tasks, ranks the first round on its own. Both
    // models rank only the roofline's shortlist: the default model too has blind spots (held-out
    // top-1 regret 7x on matmul 384^3), and outside the shortlist the online model, which would
    // learn them from this task's measurements, has no say.
    std::unique_ptr<costmodel::CostModel> prior;
    if (o.default_model) {
        prior = load_default_model(target);
        const std::string path = default_model_path(target);
        if (prior) {
            result.prior_model = path;
            say(o, "cost model: starting from the default model " + path);
        } else if (std::ifstream(path)) {
            say(o, "cost model: the default model " + path +
                       " does not load (another feature set?); starting from the roofline estimate");
        } else {
            say(o, "cost model: no default model for target '" + target.name +
                       "'; starting from the roofline estimate");
        }
    }
    auto model = costmodel::make_xgboost_model(num_features());
    bool trained = false;
    int correct = 0;  // correct measurements of this task (the online model's training set)
    ScoreFn score = [&](const std::vector<SchedulePoint> &pts) {
        std::vector<double> out(pts.size());
        if (!trained && !prior) {
            for (size_t i = 0; i < pts.size(); i++) out[i] = features_of(pts[i]).roofline;
            return out;
        }
        costmodel::FeatureBatch fb;
        fb.num_features = num_features();
        for (const auto &p : pts) {
            const Scored &s = features_of(p);
            fb.add_candidate(s.rows.data(), s.nrows);
        }
        if (!trained) {
            out = prior->predict(fb);
        } else {
            out = model->predict(fb);
            if (prior) out = blend_by_rank(prior->predict(fb), out, online_weight(correct, o.prior_half_weight));
        }
        for (size_t i = 0; i < pts.size(); i++) {
            if (features_of(pts[i]).roofline < shortlist_roofline) out[i] -= 1e12;
        }
        return out;
    };

    // Halide's default schedule can be 100x slower than the candidates (a naive 1024^3 matmul runs
    // for seconds a call): one timed pair after the warm-up, and three steps' time, so that it is
    // measured rather than killed as a hang and the speedup over it can be reported.
    PoolOptions po_default = po;
    po_default.min_runs = 1;
    po_default.timeout_s = 3 * po.timeout_s;
    auto baseline = pool->measure({{std::nullopt, ""}}, po_default, result.flops);
    result.default_result = baseline[0];
    say(o, "default schedule: " + (result.default_result.ok()
                                       ? std::to_string(result.default_result.timing.median_ms) + " ms"
                                       : result.default_result.status + ": " + result.default_result.error));

    // Throughputs are scaled to one reference time, so that candidates timed in windows where the
    // clock ran at different speeds compare by their ratio to the reference in their own window.
    double ref_ms = 0;
    {
        auto it = recorded.find(point_key(reference));
        if (it != recorded.end() && it->second.status == "ok") ref_ms = it->second.time_ms;
    }
    auto corrected = [&](MeasureResult &r) {
        if (!r.ok()) return;
        if (ref_ms <= 0 && r.reference_ms > 0) ref_ms = r.reference_ms;
        if (r.ratio > 0 && ref_ms > 0) {
            r.timing.median_ms = r.ratio * ref_ms;
            r.gflops = result.flops / (r.timing.median_ms * 1e6);
        }
    };

    std::set<std::string> measured_keys;
    auto is_measured = [&](const SchedulePoint &p) { return measured_keys.count(point_key(p)) > 0; };
    double best_gflops = 0, best_at_last_round = 0;
    int stale_rounds = 0;
    auto report = [&](bool finished = false) {
        if (!o.progress) return;
        TuneProgress tp;
        tp.finished = finished;
        tp.done = int(result.trials.size());
        tp.planned = o.trials;
        tp.best_gflops = best_gflops;
        tp.elapsed_s = elapsed();
        if (result.measured > 0) {
            double per = tp.elapsed_s / std::max(1, tp.done);
            tp.eta_s = per * std::max(0, tp.planned - tp.done);
            if (o.time_budget_s > 0) tp.eta_s = std::min(tp.eta_s, std::max(0.0, o.time_budget_s - tp.elapsed_s));
        }
        o.progress(tp);
    };
    auto log_trial = [&](const Trial &t) {
        if (!o.trial_lines) return;
        std::ostringstream line;
        line << "trial " << result.trials.size() << "/" << o.trials << "  " << t.point.summary() << "  ";
        if (t.result.ok()) {
            line << t.result.timing.median_ms << " ms  " << t.result.gflops << " GFLOP/s  (best " << best_gflops
                 << ")";
        } else {
            line << t.result.status << ": " << t.result.error.substr(0, 160);
        }
        if (t.reused) line << "  [recorded]";
        say(o, line.str());
    };
    // This round's trials: the best among them is settled after the round (see settle()).
    std::vector<size_t> this_round;
    auto add_trial = [&](Trial t) {
        const Scored &s = features_of(t.point);
        t.features = s.rows;
        t.feature_rows = s.nrows;
        measured_keys.insert(point_key(t.point));
        if (t.result.ok()) {
            correct++;
            this_round.push_back(result.trials.size());
        } else {
            result.failed++;
        }
        (t.reused ? result.reused : result.measured)++;
        result.trials.push_back(std::move(t));
        log_trial(result.trials.back());
        report();
    };

    // The clock wanders by 15-25% between windows, and the ratio to the reference does not cancel
    // all of it (a compute-bound candidate and the slower, memory-bound reference respond to the
    // clock differently): a matmul 1024^3 trial with a 1.5% sample spread read 118 GFLOP/s and
    // 101 when re-measured later. So after each round the fastest trial that beats the best so far
    // is confirmed before it becomes the best: it is timed `confirm_rounds` times more interleaved
    // with the current best (A B A B ...), and each of the two then counts at the median of all
    // its corrected timings (of an even count, the slower middle one). Both figures so come from
    // the same windows, on the scale every other trial is on; the contender leads only if its
    // figure is still above the best's. Then the round's next fastest is considered, until none
    // beats the best. The database keeps the first timing: a resumed run must not measure
    // anything again.
    long best_index = -1;
    std::map<size_t, std::vector<double>> timings;  // trial -> every corrected time, confirmed trials only
    auto refigure = [&](size_t idx) {
        Trial &t = result.trials[idx];
        std::vector<double> v = timings[idx];
        std::sort(v.begin(), v.end());
        t.result.timing.median_ms = v[v.size() / 2];
        t.result.gflops = result.flops / (t.result.timing.median_ms * 1e6);
    };
    auto confirm = [&](size_t idx) {
        Trial &t = result.trials[idx];
        timings[idx].push_back(t.result.timing.median_ms);
        std::vector<PoolCandidate> cands = {{t.point, ""}};
        if (best_index >= 0) cands.push_back({result.trials[size_t(best_index)].point, ""});
        auto rounds = pool->measure_rounds(cands, po, o.confirm_rounds, result.flops);
        for (const auto &round : rounds) {
            for (size_t c = 0; c < cands.size(); c++) {
                MeasureResult r = round[c];
                if (!r.ok()) continue;
                corrected(r);
                size_t who = c == 0 ? idx : size_t(best_index);
                timings[who].push_back(r.timing.median_ms);
                result.trials[who].retimed++;
            }
        }
        double before = t.result.gflops, best_before = best_gflops;
        refigure(idx);
        if (best_index >= 0) {
            refigure(size_t(best_index));
            best_gflops = result.trials[size_t(best_index)].result.gflops;
        }
        result.retimed++;
        if (o.trial_lines) {
            std::ostringstream line;
            line << "  confirmed" << (best_index >= 0 ? " against the best" : "") << ": " << before << " -> "
                 << t.result.gflops << " GFLOP/s";
            if (best_index >= 0) line << " (best " << best_before << " -> " << best_gflops << ")";
            say(o, line.str());
        }
    };
    auto settle = [&] {
        std::set<size_t> settled;
        for (;;) {
            long top = -1;
            for (size_t i : this_round) {
                double g = result.trials[i].result.gflops;
                if (settled.count(i) || g <= best_gflops) continue;
                if (top < 0 || g > result.trials[size_t(top)].result.gflops) top = long(i);
            }
            if (top < 0) break;
            settled.insert(size_t(top));
            if (o.confirm_rounds > 0 && !result.trials[size_t(top)].reused) confirm(size_t(top));
            // The best's figure may have moved with its own re-timings, either way.
            if (best_index >= 0) best_gflops = result.trials[size_t(best_index)].result.gflops;
            if (result.trials[size_t(top)].result.gflops > best_gflops) {
                best_gflops = result.trials[size_t(top)].result.gflops;
                best_index = top;
            }
        }
        this_round.clear();
        report();
    };

    bool first = true;
    for (;;) {
        if (int(result.trials.size()) >= o.trials) {
            result.stop_reason = "trial budget";
            break;
        }
        // The budgets stop a run after its first round, so that there is always a winner to name.
        if (o.time_budget_s > 0 && !first && elapsed() >= o.time_budget_s) {
            result.stop_reason = "time budget";
            break;
        }
        if (o.patience > 0 && stale_rounds >= o.patience) {
            result.stop_reason = "no improvement";
            break;
        }
        int want = std::min<int>(o.batch, o.trials - int(result.trials.size()));
        std::vector<SchedulePoint> elite;
        {
            std::vector<size_t> ok;
            for (size_t i = 0; i < result.trials.size(); i++) {
                if (result.trials[i].result.ok()) ok.push_back(i);
            }
            std::stable_sort(ok.begin(), ok.end(), [&](size_t a, size_t b) {
                return result.trials[a].result.gflops > result.trials[b].result.gflops;
            });
            for (size_t k = 0; k < ok.size() && k < 16; k++) elite.push_back(result.trials[ok[k]].point);
        }
        scored.clear();
        std::vector<SchedulePoint> chosen;
        if (first && !is_measured(reference)) {
            chosen.push_back(reference);
            measured_keys.insert(point_key(reference));  // so the search does not pick it twice
        }
        for (auto &p : search->next_batch(want - int(chosen.size()), score, is_measured, elite, first)) {
            chosen.push_back(p);
        }
        first = false;
        if (chosen.empty()) {
            result.stop_reason = "space exhausted";
            break;
        }
        // Recorded points are taken as they are; the rest go to the workers.
        std::vector<PoolCandidate> todo;
        for (const auto &p : chosen) {
            auto it = recorded.find(point_key(p));
            if (it != recorded.end()) {
                Trial t;
                t.point = p;
                t.reused = true;
                t.result.status = it->second.status;
                t.result.error = it->second.error;
                if (t.result.ok()) {
                    t.result.timing.median_ms = it->second.time_ms;
                    t.result.gflops = it->second.gflops;
                }
                add_trial(std::move(t));
                continue;
            }
            int n = int(result.trials.size() + todo.size()) + 1;
            auto f = o.faults.find(n);
            todo.push_back({p, f == o.faults.end() ? "" : f->second});
        }
        pool->measure(todo, po, result.flops, [&](size_t i, const MeasureResult &r) {
            Trial t;
            t.point = *todo[i].point;
            t.result = r;
            corrected(t.result);
            add_trial(std::move(t));
            // Recorded the moment it is known: a run killed now loses no measurement.
            if (cache && key) cache->record_measurements({to_record(*key, o.run_id, result.trials.back())});
        });
        settle();
        stale_rounds = best_gflops > best_at_last_round * 1.01 ? 0 : stale_rounds + 1;
        best_at_last_round = std::max(best_at_last_round, best_gflops);
        // Retrain on everything measured so far (re-timed trials at their confirmed figure).
        costmodel::TrainingSet training;
        training.batch.num_features = num_features();
        for (const Trial &t : result.trials) {
            if (!t.result.ok()) continue;
            training.batch.add_candidate(t.features.data(), t.feature_rows);
            training.task.push_back(0);
            training.throughput.push_back(t.result.gflops);
        }
        if (training.throughput.size() >= 4) {
            costmodel::TrainOptions to;
            to.seed = o.seed;
            to.rounds = 60;
            model->train(training, to);
            trained = true;
        }
    }
    report(true);
    say(o, "stopped: " + result.stop_reason + " (" + std::to_string(result.trials.size()) + " trials, " +
               std::to_string(result.reused) + " recorded, " + std::to_string(result.failed) + " failed)");
    result.reference_ms = ref_ms;

    // Re-measure the leading contenders interleaved (A B C A B C) and decide by the median ratio to
    // the reference: one pass of a noisy clock does not survive re-measurement.
    std::vector<size_t> ok;
    for (size_t i = 0; i < result.trials.size(); i++) {
        if (result.trials[i].result.ok()) ok.push_back(i);
    }
    auto finish = [&] {
        result.worker_restarts = pool->restarts() - restarts_before;
        result.worker_peak_rss_kb = pool->worker_peak_rss_kb();
        result.peak_rss_kb = peak_rss_kb();
        result.elapsed_s = elapsed();
    };
    if (ok.empty()) {
        say(o, "no candidate produced a correct result");
        finish();
        return result;
    }
    std::stable_sort(ok.begin(), ok.end(), [&](size_t a, size_t b) {
        return result.trials[a].result.gflops > result.trials[b].result.gflops;
    });
    ok.resize(std::min<size_t>(ok.size(), size_t(std::max(1, o.final_contenders))));
    std::vector<PoolCandidate> finals;
    for (size_t i : ok) finals.push_back({result.trials[i].point, ""});
    auto rounds = pool->measure_rounds(finals, po, std::max(1, o.final_rounds), result.flops);
    size_t winner = 0;
    double winner_ratio = std::numeric_limits<double>::infinity();
    for (size_t c = 0; c < ok.size(); c++) {
        std::vector<double> ratios;
        for (const auto &round : rounds) {
            if (round[c].ok() && round[c].ratio > 0) ratios.push_back(round[c].ratio);
        }
        if (ratios.empty()) continue;
        std::sort(ratios.begin(), ratios.end());
        double med = ratios[ratios.size() / 2];
        if (med < winner_ratio) {
            winner_ratio = med;
            winner = c;
        }
    }
    const Trial &w = result.trials[ok[winner]];
    result.best = w.point;
    result.best_result = w.result;
    if (std::isfinite(winner_ratio) && ref_ms > 0) {
        result.best_result.timing.median_ms = winner_ratio * ref_ms;
        result.best_result.gflops = result.flops / (result.best_result.timing.median_ms * 1e6);
    }
    result.found = true;
    LoweredOp op = lower_to_halide(def, shape);
    result.schedule_source = apply_schedule(op, result.best, target).source();
    finish();
    return result;
}

db::KernelRecord winner_record(const db::KernelKey &key, const TuneResult &r) {
    db::KernelRecord rec;
    rec.key = key;
    rec.schedule_json = r.best.to_json().dump();
    rec.schedule_source = r.schedule_source;
    rec.time_ms = r.best_result.timing.median_ms;
    rec.gflops = r.best_result.gflops;
    rec.default_time_ms = r.default_result.ok() ? r.default_result.timing.median_ms : 0;
    rec.verified = true;
    rec.trials = int64_t(r.trials.size());
    return rec;
}

db::KernelRecord tune_into_cache(const ComputeDef &def, const BoundShape &shape, const Target &target,
                                 const TuneOptions &options, db::KernelCache &cache, bool force, bool *cached,
                                 TuneResult *result) {
    user_check(target.measurable) << "target '" << target.name
                                  << "' cannot be measured on this machine; use 'opgen space' to inspect its legal space";
    db::KernelKey key = kernel_key(def, shape, target, options.threads);
    *cached = false;
    if (!force) {
        if (auto hit = cache.lookup(key)) {
            *cached = true;
            return *hit;
        }
    }
    TuneOptions o = options;
    o.run_id = cache.begin_run(run_record(def, target, key, options));
    TuneResult r;
    try {
        r = tune(def, shape, target, o, &cache, &key);
    } catch (const std::exception &e) {
        try {
            cache.end_run(o.run_id, "failed", 0, e.what());
        } catch (const db::DbError &) {
            // the run stays "running"; the error that stopped it is the one to report
        }
        throw;
    }
    const char *failure = "no candidate produced a correct result";
    if (!r.found) cache.end_run(o.run_id, "failed", int64_t(r.trials.size()), failure);
    user_check(r.found) << "op '" << def.name << "' at " << shape.canonical << ": " << failure;
    db::KernelRecord rec = winner_record(key, r);
    store_winner(def, shape, target, rec, cache, options.log);  // with its code (CodeStore.h)
    cache.end_run(o.run_id, "done", int64_t(r.trials.size()));
    if (result) *result = std::move(r);
    return cache.lookup(key).value_or(rec);
}

}  // namespace opgen::tuner
