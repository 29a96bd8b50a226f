#include "tuner/Batch.h"

#include "tuner/Progress.h"

#include "base/Error.h"
#include "core/Schedule.h"
#include "core/Shape.h"
#include "core/Target.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <random>

namespace opgen::tuner {

const char *task_status_name(TaskStatus s) {
    switch (s) {
    case TaskStatus::Tuned: return "tuned";
    case TaskStatus::Cached: return "cached";
    case TaskStatus::Failed: return "failed";
    }
    return "?";
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// What changed between an older winner of the same op, shape and target and the current key.
std::string what_changed(const db::KernelKey &old, const db::KernelKey &now) {
    std::string out;
    auto add = [&](const std::string &what, const std::string &a, const std::string &b) {
        if (a == b) return;
        out += (out.empty() ? "" : ", ") + what + " " + a + " -> " + b;
    };
    add("op definition", old.op_hash.substr(0, 8), now.op_hash.substr(0, 8));
    add("Halide", old.halide_version, now.halide_version);
    add("tuner version", old.tuner_version, now.tuner_version);
    return out;
}

std::string stale_reason(db::KernelCache &cache, const db::KernelKey &key) {
    for (const auto &r : cache.kernels_for(key.op_name, key.target)) {
        if (r.key.shape != key.shape || r.key.dtype != key.dtype) continue;
        std::string changed = what_changed(r.key, key);
        if (!changed.empty()) return changed;
    }
    return "";
}

// Loads each op and target once per batch.
struct Loaded {
    const OpLibrary &lib;
    std::map<std::string, ComputeDef> ops;
    std::map<std::string, Target> targets;
    const ComputeDef &op(const std::string &name) {
        auto it = ops.find(name);
        if (it == ops.end()) it = ops.emplace(name, lib.load(name)).first;
        return it->second;
    }
    const Target &target(const std::string &name) {
        auto it = targets.find(name);
        if (it == targets.end()) it = targets.emplace(name, load_target(name)).first;
        return it->second;
    }
};

}  // namespace

std::string format_batch_progress(const BatchProgress &p) {
    std::string line = "batch " + std::to_string(p.done) + "/" + std::to_string(p.total) + " done (" +
                       std::to_string(p.tuned) + " tuned, " + std::to_string(p.cached) + " cached, " +
                       std::to_string(p.failed) + " failed), elapsed " + format_duration(p.elapsed_s) +
                       ", ETA " + format_duration(p.eta_s);
    if (p.current) line += ": " + p.current->op + " " + p.current->shape;
    return line;
}

std::vector<TaskOutcome> run_batch(const std::vector<BatchTask> &tasks, const OpLibrary &lib,
                                   db::KernelCache &cache, const BatchOptions &options) {
    Loaded loaded{lib, {}, {}};
    std::vector<TaskOutcome> out;
    BatchProgress p;
    p.total = tasks.size();
    auto t0 = Clock::now();
    // Time and trials spent on tuned tasks: the ETA assumes the rest take as long a trial.
    double tuned_s = 0;
    int64_t tuned_trials = 0;
    int64_t trials_left = 0;
    for (const BatchTask &task : tasks) trials_left += task.trials;
    for (const BatchTask &task : tasks) {
        p.current = &task;
        p.elapsed_s = seconds_since(t0);
        if (options.progress) options.progress(p);
        TaskOutcome o;
        o.task = task;
        auto start = Clock::now();
        try {
            const ComputeDef &def = loaded.op(task.op);
            const Target &target = loaded.target(task.target);
            BoundShape shape = bind_shape(def, task.shape);
            TuneOptions to = options.tune;
            to.trials = task.trials;
            to.seed = task.seed;
            to.cold_inputs = task.cold_inputs;
            db::KernelKey key = tuned_key(def, shape, target, to);
            bool cached = false;
            if (!cache.lookup(key)) o.stale = stale_reason(cache, key);
            o.record = tune_into_cache(def, shape, target, to, cache, false, &cached);
            o.status = cached ? TaskStatus::Cached : TaskStatus::Tuned;
        } catch (const UserError &e) {
            o.error = e.what();
        } catch (const db::DbError &e) {
            o.error = e.what();
        } catch (const std::exception &e) {
            o.error = std::string("internal: ") + e.what();
        }
        o.wall_s = seconds_since(start);
        p.done++;
        trials_left -= task.trials;
        switch (o.status) {
        case TaskStatus::Tuned: p.tuned++; break;
        case TaskStatus::Cached: p.cached++; break;
        case TaskStatus::Failed: p.failed++; break;
        }
        if (o.status != TaskStatus::Cached) {
            tuned_s += o.wall_s;
            tuned_trials += task.trials;
        }
        p.eta_s = tuned_trials > 0 ? tuned_s / double(tuned_trials) * double(trials_left) : -1;
        out.push_back(std::move(o));
    }
    p.current = nullptr;
    p.elapsed_s = seconds_since(t0);
    if (p.done == p.total) p.eta_s = 0;
    if (options.progress) options.progress(p);
    return out;
}

std::vector<Remeasure> remeasure_sample(const std::vector<BatchTask> &tasks, const OpLibrary &lib,
                                        db::KernelCache &cache, Runner &pool, const PoolOptions &measure,
                                        int threads, size_t sample, uint64_t seed, double threshold) {
    Loaded loaded{lib, {}, {}};
    struct Found {
        BatchTask task;
        db::KernelRecord record;
    };
    std::vector<Found> found;
    for (const BatchTask &t : tasks) {
        const ComputeDef &def = loaded.op(t.op);
        const Target &target = loaded.target(t.target);
        if (!target.measurable) continue;
        if (auto hit = cache.lookup(kernel_key(def, bind_shape(def, t.shape), target, threads)))
            found.push_back({t, *hit});
    }
    std::mt19937_64 rng(seed);
    std::shuffle(found.begin(), found.end(), rng);
    if (found.size() > sample) found.resize(sample);
    auto median = [](std::vector<double> v) {
        if (v.empty()) return 0.0;
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    std::vector<Remeasure> out;
    for (const Found &f : found) {
        const ComputeDef &def = loaded.op(f.task.op);
        BoundShape shape = bind_shape(def, f.task.shape);
        WorkerTask wt;
        wt.def = &def;
        wt.shape = shape;
        wt.target = loaded.target(f.task.target);
        wt.seed = f.task.seed;
        wt.threads = threads;
        pool.set_task(wt);
        // Candidate 0 the winner, 1 the default schedule; the rounds alternate them.
        std::vector<PoolCandidate> both{{SchedulePoint::from_json(nlohmann::json::parse(f.record.schedule_json)), ""},
                                        {std::nullopt, ""}};
        auto rounds = pool.measure_rounds(both, measure, 3, flop_count(def, shape));
        Remeasure r;
        r.task = f.task;
        r.cached_ms = f.record.time_ms;
        r.cached_default_ms = f.record.default_time_ms;
        r.status = "ok";
        std::vector<double> win, dflt;
        for (const auto &round : rounds) {
            if (!round[0].ok()) r.status = round[0].status;
            if (round[0].ok()) win.push_back(round[0].timing.median_ms);
            if (round[1].ok()) dflt.push_back(round[1].timing.median_ms);
        }
        r.now_ms = r.status == "ok" ? median(win) : 0;
        r.now_default_ms = median(dflt);
        r.gflops_now = r.now_ms > 0 ? flop_count(def, shape) / (r.now_ms * 1e6) : 0;
        if (r.status != "ok") {
            r.regressed = true;
        } else if (r.now_default_ms > 0 && r.cached_default_ms > 0) {
            r.regressed = r.now_ms / r.now_default_ms > r.cached_ms / r.cached_default_ms * (1 + threshold);
        } else {
            r.regressed = r.now_ms > r.cached_ms * (1 + threshold);
        }
        out.push_back(r);
    }
    return out;
}

}  // namespace opgen::tuner
