#include "tuner/Tuner.h"

#include "tuner/CarriedPoints.h"
#include "tuner/ColdInputs.h"
#include "codegen/CodeStore.h"
#include "tuner/Features.h"
#include "tuner/ModelStore.h"
#include "tuner/QuietHold.h"
#include "tuner/RunRecord.h"
#include "tuner/Search.h"
#include "tuner/TaskScorer.h"
#include "tuner/Worker.h"

#include <Halide.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

namespace opgen::tuner {

db::KernelKey tuned_key(const ComputeDef &def, const BoundShape &shape, const Target &target,
                        const TuneOptions &options) {
    db::KernelKey key = kernel_key(def, shape, target, options.threads);
    return options.cold_inputs.empty() ? key : cold_key(key);
}

namespace {

using Clock = std::chrono::steady_clock;

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

// The median of timings or ratios: summarize_samples's, the upper middle of an even count (the
// slower time).
double median_of(std::vector<double> v) { return summarize_samples(std::move(v)).median_ms; }

// ---- The task: what the loop reads and never changes ------------------------------------------

struct Task {
    const ComputeDef &def;
    const BoundShape &shape;
    const Target &target;
    const TuneOptions &o;
    db::KernelCache *cache;
    const db::KernelKey *key;
    TilingSpace space;
    double flops = 0;
    // The reference kernel every timing is paired with, and the first candidate measured: the
    // hand-written heuristic point, so the tuner never does worse than it.
    SchedulePoint reference;
    // Measurements a killed run already recorded under the key, by point: reused, never taken again.
    std::map<std::string, db::MeasurementRecord> recorded;
    PoolOptions po;
    // Related winners' loop choices, measured in the first round after the reference.
    std::vector<SchedulePoint> carried = {};
};

// The reference with one of the inputs it packs read in place instead, for each such input whose
// packing choice the space offers: measured in the first round, so that whether a panel pays is
// timed on the host rather than taken from the heuristic. Measured on an AMD Zen 5 host,
// ResNet-50's 1x1s over 256+ channels: the pixel GEMM with X read in place 0.95-1.02x oneDNN,
// packed 0.88-0.96x; on an Intel Xeon host packing won.
std::vector<SchedulePoint> packing_twins(const TilingSpace &space, const SchedulePoint &reference) {
    const auto &choices = space.knobs.pack_prefetch;
    std::vector<SchedulePoint> twins;
    for (const std::string &name : reference.packed) {
        SchedulePoint twin = reference;
        twin.packed.erase(std::find(twin.packed.begin(), twin.packed.end(), name));
        if (std::find(choices.begin(), choices.end(), std::make_pair(twin.packed, twin.prefetch)) != choices.end())
            twins.push_back(twin);
    }
    return twins;
}

// The measurements recorded under `key` that this version can read, by point: the newest of each.
std::map<std::string, db::MeasurementRecord> recorded_measurements(db::KernelCache *cache,
                                                                  const db::KernelKey *key) {
    std::map<std::string, db::MeasurementRecord> out;
    if (!cache || !key) return out;
    for (auto &m : cache->measurements_for(*key)) {
        try {
            out.insert_or_assign(point_key(SchedulePoint::from_json(nlohmann::json::parse(m.schedule_json))), m);
        } catch (const std::exception &) {
            // A row this version cannot read is training data for others, not a point to reuse.
        }
    }
    return out;
}

// The cache's winners at the key's shape on the donor targets (tuner/CarriedPoints.h), the key's
// own target first; the other thread counts are those from 1 to the task's or the target's cores.
std::vector<db::KernelRecord> donors_at(db::KernelCache &cache, const db::KernelKey &key, const ComputeDef &def,
                                        const BoundShape &shape, const Target &target, int threads) {
    std::vector<db::KernelKey> plain;
    for (int n = 1; n <= std::max(target.cores, threads); n++) plain.push_back(kernel_key(def, shape, target, n));
    std::vector<db::KernelRecord> donors;
    for (const std::string &on : donor_targets(key, plain)) {
        for (auto &r : cache.kernels_at(on, key.shape)) donors.push_back(std::move(r));
    }
    return donors;
}

PoolOptions pool_options(const TuneOptions &o) {
    PoolOptions po;
    po.min_time_ms = o.min_time_ms;
    po.timeout_s = o.timeout_s;
    return po;
}

// ---- The runner and the scorers ------------------------------------------------------------------

// The runner the options give, or a worker pool of the machine's cores owned by `own`; switched to
// the task, with every timing paired with the reference.
Runner &start_runner(const Task &t, std::unique_ptr<WorkerPool> &own) {
    Runner *runner = t.o.pool;
    if (!runner) {
        int jobs = t.o.jobs > 0 ? t.o.jobs : int(std::max(1u, std::thread::hardware_concurrency()));
        own = std::make_unique<WorkerPool>(jobs);
        runner = own.get();
    }
    WorkerTask wt;
    wt.def = &t.def;
    wt.shape = t.shape;
    wt.target = t.target;
    wt.seed = t.o.seed;
    wt.threads = t.o.threads;
    wt.reference = t.reference;
    wt.cold_inputs = t.o.cold_inputs;
    runner->set_task(wt);
    return *runner;
}

// The target's default model when the options want it and it loads (said in the log either way).
std::unique_ptr<costmodel::CostModel> default_model(const Task &t, TuneResult &result) {
    if (!t.o.default_model) return nullptr;
    auto prior = load_default_model(t.target);
    const std::string path = default_model_path(t.target);
    if (prior) {
        result.prior_model = path;
        say(t.o, "cost model: starting from the default model " + path);
    } else if (std::ifstream(path)) {
        say(t.o, "cost model: the default model " + path +
                     " does not load (another feature set?); starting from the roofline estimate");
    } else {
        say(t.o, "cost model: no default model for target '" + t.target.name + "'; starting from the roofline estimate");
    }
    return prior;
}

void say_task(const Task &t, const char *search) {
    std::ostringstream head;
    head << t.def.name << " " << t.shape.canonical << ": legal space " << t.space.legal.size() << " of "
         << t.space.total_points << " points, " << t.space.groups.size() << " stage groups, " << search << " search";
    if (!t.recorded.empty()) head << ", " << t.recorded.size() << " measurements already recorded";
    say(t.o, head.str());
}

// Halide's default schedule, timed once for the speedup over it. It can be 100x slower than the
// candidates (a naive 1024^3 matmul runs for seconds a call): one timed pair after the warm-up, and
// three steps' time, so that it is measured rather than killed as a hang; but at most
// kDefaultScheduleStepS a step. A row op's default recomputes its row reductions for every element
// they are used by (softmax 128x3072: 83 s a call, O(M N^2)), and a tune used to spend over four
// minutes (verify, warm-up, pair) on that one figure; it is now reported as a timeout, the run's
// speedup over the default unknown.
constexpr double kDefaultScheduleStepS = 20;

MeasureResult measure_default_schedule(const Task &t, Runner &runner) {
    PoolOptions po = t.po;
    po.min_runs = 1;
    po.timeout_s = std::min(3 * t.po.timeout_s, kDefaultScheduleStepS);
    MeasureResult r = runner.measure({{std::nullopt, ""}}, po, t.flops)[0];
    say(t.o, "default schedule: " + (r.ok() ? std::to_string(r.timing.median_ms) + " ms" : r.status + ": " + r.error));
    return r;
}

// ---- The run's state, which the steps below advance ---------------------------------------------

// Throughputs scaled to one reference time, so that candidates timed in windows where the clock ran
// at different speeds compare by their ratio to the reference in their own window.
//
// The ratio cancels a clock that runs slower for both kernels alike, not load that slows one more
// than the other: with other processes on the machine (load 4-13 on 2 cores), a memory-bound or
// finely parallel reference slowed 3-14x more than a compute-bound candidate, and the scaled
// figures read 636 GFLOP/s on one core and 3483 on two, where the measured FMA peaks were 290 and
// 577 (conv2d_nchwc winners in a cache tuned so). So the scaled time is never taken below the
// candidate's own fastest call less the clock's wander between windows: an observed call bounds
// what any window's clock can explain.
constexpr double kClockWander = 0.25;  // the clock moves by 15-25% between windows

double scaled_time_ms(double ratio, double ref_ms, double fastest_call_ms) {
    return std::max(ratio * ref_ms, (1 - kClockWander) * fastest_call_ms);
}

// The scale is the reference's time in the run's first window while trials are ranked (one scale
// for all of them); the winner's final figures use the median of every window's reference time
// (settle): a first window disturbed by another process (s9: a 7x7 conv stored at 57 ms instead
// of 1.1) no longer scales every stored figure of the run.
struct ReferenceScale {
    double ref_ms = 0;
    double flops = 0;
    std::vector<double> seen;  // the reference's time in every window so far
    void correct(MeasureResult &r) {
        if (!r.ok()) return;
        if (r.reference_ms > 0) seen.push_back(r.reference_ms);
        if (ref_ms <= 0 && r.reference_ms > 0) ref_ms = r.reference_ms;
        if (r.ratio > 0 && ref_ms > 0) {
            r.timing.median_ms = scaled_time_ms(r.ratio, ref_ms, r.timing.min_ms);
            r.gflops = flops / (r.timing.median_ms * 1e6);
        }
    }
    void settle() {
        if (!seen.empty()) ref_ms = median_of(seen);
    }
};

struct RunState {
    TuneResult result;
    Clock::time_point start = Clock::now();
    ReferenceScale scale;
    std::set<std::string> measured;  // points measured or taken from the record
    std::vector<size_t> this_round;  // correct trials of the round, settled after it
    long best_index = -1;
    double best_gflops = 0, best_at_last_round = 0;
    int stale_rounds = 0;
    bool first_round = true;
    std::map<size_t, std::vector<double>> timings;  // trial -> every corrected time, confirmed trials only

    double elapsed() const { return std::chrono::duration<double>(Clock::now() - start).count(); }
    bool is_measured(const SchedulePoint &p) const { return measured.count(point_key(p)) > 0; }
};

void report(const Task &t, const RunState &s, bool finished = false) {
    if (!t.o.progress) return;
    TuneProgress tp;
    tp.finished = finished;
    tp.done = int(s.result.trials.size());
    tp.planned = t.o.trials;
    tp.best_gflops = s.best_gflops;
    tp.elapsed_s = s.elapsed();
    if (s.result.measured > 0) {
        double per = tp.elapsed_s / std::max(1, tp.done);
        tp.eta_s = per * std::max(0, tp.planned - tp.done);
        if (t.o.time_budget_s > 0) tp.eta_s = std::min(tp.eta_s, std::max(0.0, t.o.time_budget_s - tp.elapsed_s));
    }
    t.o.progress(tp);
}

void log_trial(const Task &t, const RunState &s, const Trial &trial) {
    if (!t.o.trial_lines) return;
    std::ostringstream line;
    line << "trial " << s.result.trials.size() << "/" << t.o.trials << "  " << trial.point.summary() << "  ";
    if (trial.result.ok()) {
        line << trial.result.timing.median_ms << " ms  " << trial.result.gflops << " GFLOP/s  (best " << s.best_gflops
             << ")";
    } else {
        line << trial.result.status << ": " << trial.result.error.substr(0, 160);
    }
    if (trial.reused) line << "  [recorded]";
    say(t.o, line.str());
}

// Appends a measured (or recorded) trial with its feature rows, and counts it.
void add_trial(const Task &t, RunState &s, TaskScorer &scorer, Trial trial) {
    const TaskScorer::Scored &f = scorer.features_of(trial.point);
    trial.features = f.rows;
    trial.feature_rows = f.nrows;
    s.measured.insert(point_key(trial.point));
    if (trial.result.ok()) {
        s.this_round.push_back(s.result.trials.size());
    } else {
        s.result.failed++;
    }
    (trial.reused ? s.result.reused : s.result.measured)++;
    s.result.trials.push_back(std::move(trial));
    log_trial(t, s, s.result.trials.back());
    report(t, s);
}

// ---- One round: stop?, pick, measure, confirm, retrain -------------------------------------------

// Why the loop stops before another round, or nothing. The budgets stop a run only after its first
// round, so that there is always a winner to name.
std::optional<std::string> stop_reason(const Task &t, const RunState &s) {
    if (int(s.result.trials.size()) >= t.o.trials) return "trial budget";
    if (t.o.time_budget_s > 0 && !s.first_round && s.elapsed() >= t.o.time_budget_s) return "time budget";
    if (t.o.patience > 0 && s.stale_rounds >= t.o.patience) return "no improvement";
    return std::nullopt;
}

// The best 16 correct points measured so far, best first: the search's elite.
std::vector<SchedulePoint> elite_points(const std::vector<Trial> &trials) {
    std::vector<size_t> ok;
    for (size_t i = 0; i < trials.size(); i++) {
        if (trials[i].result.ok()) ok.push_back(i);
    }
    std::stable_sort(ok.begin(), ok.end(),
                     [&](size_t a, size_t b) { return trials[a].result.gflops > trials[b].result.gflops; });
    std::vector<SchedulePoint> elite;
    for (size_t k = 0; k < ok.size() && k < 16; k++) elite.push_back(trials[ok[k]].point);
    return elite;
}

// The round's points: the reference first in the first round, then the search's pick (the model's
// best and, after the first round, a seeded share at random). Empty: the space is exhausted.
std::vector<SchedulePoint> pick_round(const Task &t, RunState &s, SearchStrategy &search, TaskScorer &scorer) {
    int want = std::min<int>(t.o.batch, t.o.trials - int(s.result.trials.size()));
    std::vector<SchedulePoint> elite = elite_points(s.result.trials);
    scorer.begin_round();
    std::vector<SchedulePoint> chosen;
    if (s.first_round && !s.is_measured(t.reference)) {
        chosen.push_back(t.reference);
        s.measured.insert(point_key(t.reference));  // so the search does not pick it twice
    }
    if (s.first_round) {
        // The given points (a cold run's hot winner), the reference's packing twins, then related
        // winners' loops.
        std::vector<SchedulePoint> first = t.o.seed_points;
        for (const SchedulePoint &p : packing_twins(t.space, t.reference)) first.push_back(p);
        first.insert(first.end(), t.carried.begin(), t.carried.end());
        for (const SchedulePoint &p : first) {
            if (int(chosen.size()) >= want || s.is_measured(p)) continue;
            chosen.push_back(p);
            s.measured.insert(point_key(p));
        }
    }
    ScoreFn score = [&](const std::vector<SchedulePoint> &pts) { return scorer.score(pts); };
    MeasuredFn measured = [&](const SchedulePoint &p) { return s.is_measured(p); };
    for (auto &p : search.next_batch(want - int(chosen.size()), score, measured, elite, s.first_round)) {
        chosen.push_back(p);
    }
    s.first_round = false;
    return chosen;
}

// A recorded point taken as it was measured before.
Trial recorded_trial(const SchedulePoint &p, const db::MeasurementRecord &m) {
    Trial t;
    t.point = p;
    t.reused = true;
    t.result.status = m.status;
    t.result.error = m.error;
    if (t.result.ok()) {
        t.result.timing.median_ms = m.time_ms;
        t.result.gflops = m.gflops;
    }
    return t;
}

// Measures the round's points: recorded ones are taken as they are, the rest go to the runner and
// each is recorded in the cache the moment it is known, so a run killed now loses no measurement.
void measure_round(const Task &t, RunState &s, Runner &runner, TaskScorer &scorer,
                   const std::vector<SchedulePoint> &points) {
    std::vector<PoolCandidate> todo;
    for (const auto &p : points) {
        auto it = t.recorded.find(point_key(p));
        if (it != t.recorded.end()) {
            add_trial(t, s, scorer, recorded_trial(p, it->second));
            continue;
        }
        int n = int(s.result.trials.size() + todo.size()) + 1;
        auto f = t.o.faults.find(n);
        todo.push_back({p, f == t.o.faults.end() ? "" : f->second});
    }
    runner.measure(todo, t.po, t.flops, [&](size_t i, const MeasureResult &r) {
        Trial trial;
        trial.point = *todo[i].point;
        trial.result = r;
        s.scale.correct(trial.result);
        add_trial(t, s, scorer, std::move(trial));
        if (t.cache && t.key) t.cache->record_measurements({to_record(*t.key, t.o.run_id, s.result.trials.back())});
    });
}

// Sets a confirmed trial's figure to the median of all its corrected timings.
void refigure(RunState &s, size_t idx) {
    Trial &trial = s.result.trials[idx];
    trial.result.timing.median_ms = median_of(s.timings[idx]);
    trial.result.gflops = s.result.flops / (trial.result.timing.median_ms * 1e6);
}

// Times the would-be best `idx` `confirm_rounds` times more, interleaved with the best so far
// (A B A B ...), and refigures both from all their corrected timings.
void confirm(const Task &t, RunState &s, Runner &runner, size_t idx) {
    Trial &trial = s.result.trials[idx];
    s.timings[idx].push_back(trial.result.timing.median_ms);
    std::vector<PoolCandidate> cands = {{trial.point, ""}};
    if (s.best_index >= 0) cands.push_back({s.result.trials[size_t(s.best_index)].point, ""});
    for (const auto &round : runner.measure_rounds(cands, t.po, t.o.confirm_rounds, t.flops)) {
        for (size_t c = 0; c < cands.size(); c++) {
            MeasureResult r = round[c];
            if (!r.ok()) continue;
            s.scale.correct(r);
            size_t who = c == 0 ? idx : size_t(s.best_index);
            s.timings[who].push_back(r.timing.median_ms);
            s.result.trials[who].retimed++;
        }
    }
    double before = trial.result.gflops, best_before = s.best_gflops;
    refigure(s, idx);
    if (s.best_index >= 0) {
        refigure(s, size_t(s.best_index));
        s.best_gflops = s.result.trials[size_t(s.best_index)].result.gflops;
    }
    s.result.retimed++;
    if (!t.o.trial_lines) return;
    std::ostringstream line;
    line << "  confirmed" << (s.best_index >= 0 ? " against the best" : "") << ": " << before << " -> "
         << trial.result.gflops << " GFLOP/s";
    if (s.best_index >= 0) line << " (best " << best_before << " -> " << s.best_gflops << ")";
    say(t.o, line.str());
}

// The clock wanders by 15-25% between windows, and the ratio to the reference does not cancel all
// of it (a compute-bound candidate and the slower, memory-bound reference respond to the clock
// differently): a matmul 1024^3 trial with a 1.5% sample spread read 118 GFLOP/s and 101 when
// re-measured later. So after each round the fastest trial that beats the best so far is confirmed
// (see confirm()) before it becomes the best; it leads only if its figure is still above the
// best's. Then the round's next fastest is considered, until none beats the best. The database
// keeps the first timing: a resumed run must not measure anything again.
void settle_round(const Task &t, RunState &s, Runner &runner) {
    std::set<size_t> settled;
    for (;;) {
        long top = -1;
        for (size_t i : s.this_round) {
            double g = s.result.trials[i].result.gflops;
            if (settled.count(i) || g <= s.best_gflops) continue;
            if (top < 0 || g > s.result.trials[size_t(top)].result.gflops) top = long(i);
        }
        if (top < 0) break;
        settled.insert(size_t(top));
        if (t.o.confirm_rounds > 0 && !s.result.trials[size_t(top)].reused) confirm(t, s, runner, size_t(top));
        // The best's figure may have moved with its own re-timings, either way.
        if (s.best_index >= 0) s.best_gflops = s.result.trials[size_t(s.best_index)].result.gflops;
        if (s.result.trials[size_t(top)].result.gflops > s.best_gflops) {
            s.best_gflops = s.result.trials[size_t(top)].result.gflops;
            s.best_index = top;
        }
    }
    s.this_round.clear();
    s.stale_rounds = s.best_gflops > s.best_at_last_round * 1.01 ? 0 : s.stale_rounds + 1;
    s.best_at_last_round = std::max(s.best_at_last_round, s.best_gflops);
    report(t, s);
}

// Retrains the online model on everything measured so far (confirmed trials at their figure).
void retrain(const Task &t, const RunState &s, TaskScorer &scorer) {
    costmodel::TrainingSet training;
    training.batch.num_features = num_features();
    for (const Trial &trial : s.result.trials) {
        if (trial.result.ok()) add_training_row(training, trial.features, trial.feature_rows, trial.result.gflops);
    }
    scorer.retrain(training, t.o.seed);
}

// ---- The end: the winner -------------------------------------------------------------------------

// The leading contenders re-measured interleaved (A B C A B C): the index of the trial whose median
// scaled time is lowest, and that time in ms (infinite when none timed). `ok` holds the correct
// trials.
std::pair<size_t, double> final_rounds(const Task &t, RunState &s, Runner &runner, std::vector<size_t> ok) {
    std::stable_sort(ok.begin(), ok.end(), [&](size_t a, size_t b) {
        return s.result.trials[a].result.gflops > s.result.trials[b].result.gflops;
    });
    ok.resize(std::min<size_t>(ok.size(), size_t(std::max(1, t.o.final_contenders))));
    std::vector<PoolCandidate> finals;
    for (size_t i : ok) finals.push_back({s.result.trials[i].point, ""});
    auto rounds = runner.measure_rounds(finals, t.po, std::max(1, t.o.final_rounds), t.flops);
    size_t winner = 0;
    double winner_ms = std::numeric_limits<double>::infinity();
    for (size_t c = 0; c < ok.size(); c++) {
        std::vector<double> times;
        for (const auto &round : rounds) {
            MeasureResult r = round[c];
            if (!r.ok() || r.ratio <= 0) continue;
            s.scale.correct(r);
            times.push_back(r.timing.median_ms);
        }
        if (times.empty()) continue;
        double med = median_of(times);
        if (med < winner_ms) {
            winner_ms = med;
            winner = c;
        }
    }
    return {ok[winner], winner_ms};
}

// Says when the finalists were timed without the hold lock or on a machine that was not quiet.
void say_hold(const TuneOptions &o, const TuneResult &r) {
    if (!r.final_held) say(o, "warning: the finalists were timed without the hold lock (tuner/QuietHold.h)");
    if (r.final_other_load > kQuietLoadCores) {
        char text[160];
        std::snprintf(text, sizeof text,
                      "warning: the machine was not quiet while the finalists were timed: other processes "
                      "used %.2f cores",
                      r.final_other_load);
        say(o, text);
    }
}

// Names the winner by the final rounds (one pass of a noisy clock does not survive
// re-measurement) and prints its schedule; leaves `found` false when no candidate was correct.
void name_winner(const Task &t, RunState &s, Runner &runner) {
    std::vector<size_t> ok;
    for (size_t i = 0; i < s.result.trials.size(); i++) {
        if (s.result.trials[i].result.ok()) ok.push_back(i);
    }
    if (ok.empty()) {
        say(t.o, "no candidate produced a correct result");
        return;
    }
    TuneResult &r = s.result;
    size_t winner = 0;
    double time_ms = 0;
    {
        QuietHold hold;  // no other tune times its finalists meanwhile; other load is watched
        std::tie(winner, time_ms) = final_rounds(t, s, runner, std::move(ok));
        r.final_held = !hold.lock_path().empty();
        r.final_other_load = hold.other_load();
    }
    say_hold(t.o, r);
    r.best = r.trials[winner].point;
    r.best_result = r.trials[winner].result;
    if (std::isfinite(time_ms) && s.scale.ref_ms > 0) {
        r.best_result.timing.median_ms = time_ms;
        r.best_result.gflops = r.flops / (r.best_result.timing.median_ms * 1e6);
    }
    r.found = true;
    LoweredOp op = lower_for_point(t.def, t.shape, &r.best);
    r.schedule_source = apply_schedule(op, r.best, t.target).source();
}

void say_stopped(const Task &t, const TuneResult &r) {
    say(t.o, "stopped: " + r.stop_reason + " (" + std::to_string(r.trials.size()) + " trials, " +
                 std::to_string(r.reused) + " recorded, " + std::to_string(r.failed) + " failed)");
}

}  // namespace

SchedulePoint reference_point(const ComputeDef &def, const BoundShape &shape, const Target &target, int threads) {
    // Planned for the cores the kernel will have: on one thread a 14x14 row is one 14-pixel tile,
    // not two 7-pixel halves meant for two cores and then run one after the other.
    Target planned = target;
    if (threads >= 1 && threads < target.cores) planned.cores = threads;
    SchedulePoint p = heuristic_point(def, shape, planned);
    if (threads <= 1) p.parallel_loops = 0;
    return p;
}

// The loop of docs/design.md §2.6 and §2.7, each step a function above.
TuneResult tune(const ComputeDef &def, const BoundShape &shape, const Target &target, const TuneOptions &o,
                db::KernelCache *cache, const db::KernelKey *key) {
    Task t{def, shape, target, o, cache, key, make_tiling_space(def, shape, target, o.threads),
           flop_count(def, shape), reference_point(def, shape, target, o.threads),
           o.reuse_measurements ? recorded_measurements(cache, key) : std::map<std::string, db::MeasurementRecord>{},
           pool_options(o)};
    if (cache && key) t.carried = carried_points(t.space, t.reference, *key, donors_at(*cache, *key, def, shape, target, o.threads));
    RunState s;
    s.result.legal_size = int64_t(t.space.legal.size());
    s.result.flops = s.scale.flops = t.flops;
    SearchOptions so{o.seed, o.epsilon, size_t(std::max(0, o.max_pool))};
    std::unique_ptr<SearchStrategy> search = make_search(t.space, so);
    s.result.search = search->name();
    say_task(t, search->name());

    std::unique_ptr<WorkerPool> own_pool;
    Runner &runner = start_runner(t, own_pool);
    const int restarts_before = runner.restarts();
    TaskScorer scorer(def, shape, target, t.space, o.threads, o.seed, default_model(t, s.result),
                      o.prior_half_weight);
    s.result.default_result = measure_default_schedule(t, runner);
    auto ref = t.recorded.find(point_key(t.reference));
    if (ref != t.recorded.end() && ref->second.status == "ok") s.scale.ref_ms = ref->second.time_ms;

    for (;;) {
        if (auto why = stop_reason(t, s)) {
            s.result.stop_reason = *why;
            break;
        }
        std::vector<SchedulePoint> points = pick_round(t, s, *search, scorer);
        if (points.empty()) {
            s.result.stop_reason = "space exhausted";
            break;
        }
        measure_round(t, s, runner, scorer, points);
        settle_round(t, s, runner);
        retrain(t, s, scorer);
    }
    report(t, s, true);
    say_stopped(t, s.result);
    s.scale.settle();
    s.result.reference_ms = s.scale.ref_ms;

    name_winner(t, s, runner);
    s.result.worker_restarts = runner.restarts() - restarts_before;
    s.result.worker_peak_rss_kb = runner.worker_peak_rss_kb();
    s.result.peak_rss_kb = peak_rss_kb();
    s.result.elapsed_s = s.elapsed();
    return std::move(s.result);
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
    db::KernelKey key = tuned_key(def, shape, target, options);
    *cached = false;
    if (!force) {
        if (auto hit = cache.lookup(key)) {
            *cached = true;
            return *hit;
        }
    }
    TuneOptions o = options;
    if (force) o.reuse_measurements = false;
    if (!o.cold_inputs.empty()) {
        if (auto hot = cache.lookup(kernel_key(def, shape, target, o.threads))) {
            try {
                o.seed_points.push_back(SchedulePoint::from_json(nlohmann::json::parse(hot->schedule_json)));
            } catch (const std::exception &) {
                // a row this version cannot read is not a point to start from
            }
        }
    }
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
