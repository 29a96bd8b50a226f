#include "tuner/Tuner.h"

#include "tuner/Features.h"

#include <Halide.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <set>
#include <sstream>

namespace opgen::tuner {

const char *tuner_version() { return "opgen-tuner-1"; }

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

namespace {

void say(const TuneOptions &o, const std::string &line) {
    if (o.log) o.log(line);
}

db::MeasurementRecord to_record(const db::KernelKey &key, const Trial &t) {
    db::MeasurementRecord m;
    m.key = key;
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
    TuneResult result;
    TilingSpace space = make_tiling_space(def, shape, target, o.threads);
    result.legal_size = int64_t(space.legal.size());
    std::ostringstream head;
    head << def.name << " " << shape.canonical << ": legal space " << space.legal.size() << " of "
         << space.total_points << " points, " << space.groups.size() << " stage groups";
    say(o, head.str());

    // The pool scored each round: the whole space, or a seeded sample of it, plus the hand-written
    // heuristic point so that the tuner never does worse than it.
    std::vector<SchedulePoint> pool = space.sample(size_t(o.max_pool), o.seed);
    SchedulePoint fallback = heuristic_point(def, shape, target);
    if (o.threads <= 1) fallback.parallel_loops = 0;
    if (std::find(pool.begin(), pool.end(), fallback) == pool.end()) pool.push_back(fallback);

    costmodel::FeatureBatch batch;
    batch.num_features = num_features();
    std::vector<std::vector<float>> pool_rows(pool.size());
    std::vector<int> pool_nrows(pool.size());
    std::vector<double> score(pool.size()), prior(pool.size());
    for (size_t i = 0; i < pool.size(); i++) {
        pool_nrows[i] = group_features(def, shape, target, space, pool[i], o.threads, pool_rows[i]);
        batch.add_candidate(pool_rows[i].data(), pool_nrows[i]);
        prior[i] = score[i] = -roofline_seconds(def, shape, target, space, pool[i], o.threads);
    }
    // A model trained on a handful of measurements extrapolates wildly across a large space; it
    // re-ranks only the roofline's best share of the pool, while the random explorers still reach
    // all of it.
    std::vector<char> shortlisted(pool.size(), 0);
    {
        std::vector<size_t> by_prior(pool.size());
        std::iota(by_prior.begin(), by_prior.end(), 0);
        std::stable_sort(by_prior.begin(), by_prior.end(), [&](size_t a, size_t b) { return prior[a] > prior[b]; });
        size_t keep = std::min(pool.size(), std::max<size_t>(200, pool.size() / 20));
        for (size_t i = 0; i < keep; i++) shortlisted[by_prior[i]] = 1;
        shortlisted[pool.size() - 1] = 1;
    }

    TaskContext task(def, shape, target, o.seed);
    result.flops = task.flops;
    result.default_result = measure(task, std::nullopt, o.min_time_ms, 2);
    say(o, "default schedule: " + (result.default_result.ok()
                                       ? std::to_string(result.default_result.timing.median_ms) + " ms"
                                       : result.default_result.status + ": " + result.default_result.error));

    std::mt19937_64 rng(o.seed);
    std::set<size_t> measured;
    auto model = costmodel::make_xgboost_model(num_features());
    costmodel::TrainingSet training;
    training.batch.num_features = num_features();
    double best_gflops = 0;
    int round = 0;
    while (int(result.trials.size()) < o.trials && measured.size() < pool.size()) {
        int want = std::min<int>(o.batch, o.trials - int(result.trials.size()));
        // Take the best-scored unmeasured points, keeping a share for random exploration.
        std::vector<size_t> order(pool.size());
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return score[a] > score[b]; });
        std::vector<size_t> chosen;
        int explore = round == 0 ? 0 : int(std::floor(want * o.epsilon));
        for (size_t i : order) {
            if (int(chosen.size()) >= want - explore) break;
            if (!measured.count(i)) chosen.push_back(i);
        }
        std::uniform_int_distribution<size_t> u(0, pool.size() - 1);
        for (int tries = 0; int(chosen.size()) < want && tries < 1000; tries++) {
            size_t i = u(rng);
            if (!measured.count(i) && std::find(chosen.begin(), chosen.end(), i) == chosen.end()) chosen.push_back(i);
        }
        if (round == 0 && !measured.count(pool.size() - 1) &&
            std::find(chosen.begin(), chosen.end(), pool.size() - 1) == chosen.end() && !chosen.empty()) {
            chosen.back() = pool.size() - 1;  // the heuristic point is always measured
        }
        std::vector<db::MeasurementRecord> records;
        for (size_t i : chosen) {
            measured.insert(i);
            Trial t;
            t.point = pool[i];
            t.result = measure(task, t.point, o.min_time_ms);
            t.features = pool_rows[i];
            t.feature_rows = pool_nrows[i];
            if (t.result.ok()) {
                best_gflops = std::max(best_gflops, t.result.gflops);
                training.batch.add_candidate(t.features.data(), t.feature_rows);
                training.task.push_back(0);
                training.throughput.push_back(t.result.gflops);
            }
            std::ostringstream line;
            line << "trial " << result.trials.size() + 1 << "/" << o.trials << "  " << t.point.summary() << "  ";
            if (t.result.ok()) {
                line << t.result.timing.median_ms << " ms  " << t.result.gflops << " GFLOP/s  (best " << best_gflops << ")";
            } else {
                line << t.result.status << ": " << t.result.error.substr(0, 160);
            }
            say(o, line.str());
            if (key) records.push_back(to_record(*key, t));
            result.trials.push_back(std::move(t));
        }
        if (cache && key && !records.empty()) cache->record_measurements(records);
        // Retrain on everything measured so far and rescore the pool.
        if (training.throughput.size() >= 4) {
            costmodel::TrainOptions to;
            to.seed = o.seed;
            to.rounds = 60;
            model->train(training, to);
            score = model->predict(batch);
            for (size_t i = 0; i < pool.size(); i++) {
                if (!shortlisted[i]) score[i] = -std::numeric_limits<double>::infinity();
            }
        }
        round++;
    }

    // Re-measure the leading contenders interleaved (A B C A B C) and decide by median: one pass of
    // a noisy clock does not survive re-measurement.
    std::vector<size_t> ok;
    for (size_t i = 0; i < result.trials.size(); i++) {
        if (result.trials[i].result.ok()) ok.push_back(i);
    }
    if (ok.empty()) {
        say(o, "no candidate produced a correct result");
        return result;
    }
    std::stable_sort(ok.begin(), ok.end(), [&](size_t a, size_t b) {
        return result.trials[a].result.timing.median_ms < result.trials[b].result.timing.median_ms;
    });
    ok.resize(std::min<size_t>(ok.size(), 3));
    std::vector<std::vector<double>> again(ok.size());
    for (int r = 0; r < 3; r++) {
        for (size_t c = 0; c < ok.size(); c++) {
            MeasureResult m = measure(task, result.trials[ok[c]].point, o.min_time_ms);
            if (m.ok()) again[c].push_back(m.timing.median_ms);
        }
    }
    size_t winner = 0;
    double winner_ms = std::numeric_limits<double>::infinity();
    for (size_t c = 0; c < ok.size(); c++) {
        if (again[c].empty()) continue;
        std::sort(again[c].begin(), again[c].end());
        double med = again[c][again[c].size() / 2];
        if (med < winner_ms) {
            winner_ms = med;
            winner = c;
        }
    }
    const Trial &w = result.trials[ok[winner]];
    result.best = w.point;
    result.best_result = w.result;
    if (std::isfinite(winner_ms)) {
        result.best_result.timing.median_ms = winner_ms;
        result.best_result.gflops = task.flops / (winner_ms * 1e6);
    }
    result.found = true;
    LoweredOp op = lower_to_halide(def, shape);
    result.schedule_source = apply_schedule(op, result.best, target).source();
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
                                 const TuneOptions &options, db::KernelCache &cache, bool force, bool *cached) {
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
    TuneResult r = tune(def, shape, target, options, &cache, &key);
    user_check(r.found) << "op '" << def.name << "' at " << shape.canonical
                        << ": no candidate produced a correct result";
    db::KernelRecord rec = winner_record(key, r);
    cache.put_kernel(rec);
    return cache.lookup(key).value_or(rec);
}

}  // namespace opgen::tuner
