#include "tuner/ModelData.h"

#include "base/Error.h"
#include "tuner/Features.h"
#include "tuner/Measurer.h"
#include "tuner/Tuner.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

namespace opgen::tuner {

namespace {

void say(const CollectOptions &o, const std::string &line) {
    if (o.log) o.log(line);
}

// Runs per candidate at the least, whatever the time budget: enough that one of them escapes the
// other processes' time slices.
const int collect_min_runs = 7;

db::MeasurementRecord to_record(const db::KernelKey &key, const SchedulePoint &p, const MeasureResult &r) {
    db::MeasurementRecord m;
    m.key = key;
    m.schedule_json = p.to_json().dump();
    // The fastest run, not the median: on this shared 2-core machine another process's time slice
    // lands on a run as a whole scheduler tick (4 ms; a 4.8 ms conv measured 4.8, 8.9, 12.9 and
    // 17.0 ms while a compile ran beside it), so interference only ever adds time and the
    // minimum of several runs is the kernel's own.
    m.time_ms = r.ok() ? r.timing.min_ms : std::nan("");
    m.gflops = r.gflops;
    m.status = r.status;
    m.error = r.error.substr(0, 2000);
    return m;
}

int threads_of_key(const std::string &target_key) {
    // The thread count comes before a contention suffix (loaded_key): "x86-64-avx512:t1:load0.5".
    const std::string conditions = target_key.substr(0, target_key.rfind(":load"));
    auto pos = conditions.rfind(":t");
    if (pos == std::string::npos) return 1;
    try {
        return std::max(1, std::stoi(conditions.substr(pos + 2)));
    } catch (const std::exception &) {
        return 1;
    }
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Drift of the clock at each record of one task (1 = the task's median speed), from the
// interleaved reference measurements: the mean of the nearest reference before and after.
std::vector<double> drift_factors(const std::vector<const db::MeasurementRecord *> &recs,
                                  const std::vector<std::string> &canonical, const std::string &ref_json) {
    std::vector<size_t> at;
    std::vector<double> times;
    for (size_t i = 0; i < recs.size(); i++) {
        if (!ref_json.empty() && canonical[i] == ref_json) {
            at.push_back(i);
            times.push_back(recs[i]->time_ms);
        }
    }
    std::vector<double> f(recs.size(), 1.0);
    if (times.size() < 2) return f;
    const double mid = median(times);
    for (size_t i = 0; i < recs.size(); i++) {
        auto next = std::lower_bound(at.begin(), at.end(), i);
        double sum = 0;
        int n = 0;
        if (next != at.end()) sum += times[size_t(next - at.begin())], n++;
        if (next != at.begin()) sum += times[size_t(next - at.begin()) - 1], n++;
        f[i] = sum / n / mid;
    }
    return f;
}

}  // namespace

CollectSummary collect_measurements(const ComputeDef &def, const BoundShape &shape, const Target &target,
                                    const CollectOptions &o, db::KernelCache &cache) {
    user_check(target.measurable) << "target '" << target.name << "' cannot be measured on this machine";
    CollectSummary summary;
    const db::KernelKey key = kernel_key(def, shape, target, o.threads);
    TilingSpace space = make_tiling_space(def, shape, target, o.threads);
    std::vector<SchedulePoint> sample = space.sample(o.sample, o.seed);
    summary.sampled = sample.size();
    std::set<std::string> done;
    for (const auto &m : cache.measurements_for(key)) done.insert(m.schedule_json);
    const SchedulePoint reference = reference_point(def, shape, target, o.threads);
    const std::string reference_json = reference.to_json().dump();

    std::ostringstream head;
    head << def.name << " " << shape.canonical << ": legal space " << space.legal.size() << ", sample "
         << sample.size() << ", " << done.size() << " points already measured";
    say(o, head.str());

    TaskContext task(def, shape, target, o.seed);
    std::vector<db::MeasurementRecord> pending;
    auto measure_reference = [&] {
        MeasureResult r = measure(task, reference, o.min_time_ms, collect_min_runs);
        pending.push_back(to_record(key, reference, r));
        summary.reference_runs++;
        say(o, "reference " + (r.ok() ? std::to_string(r.timing.min_ms) + " ms" : r.status));
    };
    auto flush = [&] {
        if (!pending.empty()) cache.record_measurements(pending);
        pending.clear();
    };
    int since_reference = 0;
    for (size_t i = 0; i < sample.size(); i++) {
        const std::string json = sample[i].to_json().dump();
        if (done.count(json) && json != reference_json) {
            summary.already++;
            continue;
        }
        if (since_reference == 0) measure_reference();
        MeasureResult r = measure(task, sample[i], o.min_time_ms, collect_min_runs);
        pending.push_back(to_record(key, sample[i], r));
        summary.measured++;
        if (!r.ok()) summary.failed++;
        std::ostringstream line;
        line << "[" << i + 1 << "/" << sample.size() << "] " << sample[i].summary() << "  "
             << (r.ok() ? std::to_string(r.timing.min_ms) + " ms" : r.status + ": " + r.error.substr(0, 120));
        say(o, line.str());
        if (++since_reference >= std::max(1, o.reference_every)) {
            measure_reference();
            flush();
            since_reference = 0;
        }
    }
    if (since_reference > 0) measure_reference();
    flush();
    return summary;
}

ModelData build_model_data(const std::vector<db::MeasurementRecord> &records, const OpLibrary &ops,
                           const Target &target) {
    ModelData data;
    data.set.batch.num_features = num_features();
    // Tasks in first-seen order, records of each in the order given (the database's id order).
    std::vector<std::string> order;
    std::map<std::string, std::vector<const db::MeasurementRecord *>> tasks;
    for (const auto &m : records) {
        if (m.status != "ok" || !(m.time_ms > 0)) continue;
        std::string name = m.key.op_name + " " + m.key.shape + " " + m.key.target;
        if (!tasks.count(name)) order.push_back(name);
        tasks[name].push_back(&m);
    }
    std::map<std::string, ComputeDef> defs;
    for (const auto &name : order) {
        const auto &recs = tasks[name];
        const db::KernelKey &key = recs.front()->key;
        ComputeDef *def = nullptr;
        try {
            if (!defs.count(key.op_name)) defs.emplace(key.op_name, ops.load(key.op_name));
            def = &defs.at(key.op_name);
        } catch (const UserError &) {
            data.dropped += recs.size();
            continue;
        }
        // Each point's JSON as this build writes it: a record from before a schedule knob existed
        // names the same point as one written after it (the reference kernel above all).
        std::vector<std::string> canonical(recs.size());
        for (size_t i = 0; i < recs.size(); i++) {
            try {
                canonical[i] = SchedulePoint::from_json(nlohmann::json::parse(recs[i]->schedule_json)).to_json().dump();
            } catch (const std::exception &) {
                canonical[i].clear();  // unreadable: dropped below
            }
        }
        BoundShape shape = bind_shape(*def, key.shape);
        const int threads = threads_of_key(key.target);
        const double contention = contention_level_of(key.target);
        TilingSpace space = make_tiling_space(*def, shape, target, threads);
        // The reference is the point measured most often (at least twice).
        std::map<std::string, std::vector<double>> times;
        for (size_t i = 0; i < recs.size(); i++) {
            if (!canonical[i].empty()) times[canonical[i]].push_back(0);
        }
        std::string ref_json;
        size_t ref_count = 1;
        for (const auto &[json, t] : times) {
            if (t.size() > ref_count) ref_json = json, ref_count = t.size();
        }
        std::vector<double> drift = drift_factors(recs, canonical, ref_json);
        times.clear();
        std::vector<std::string> point_order;
        for (size_t i = 0; i < recs.size(); i++) {
            if (canonical[i].empty()) {
                data.dropped++;
                continue;
            }
            auto &t = times[canonical[i]];
            if (t.empty()) point_order.push_back(canonical[i]);
            t.push_back(recs[i]->time_ms / drift[i]);
        }
        const int32_t task_id = int32_t(data.task_names.size());
        data.task_names.push_back(key.op_name + " " + key.shape);
        std::vector<float> rows;
        for (const auto &json : point_order) {
            SchedulePoint p = SchedulePoint::from_json(nlohmann::json::parse(json));
            rows.clear();
            int n = group_features(*def, shape, target, space, p, threads, rows, contention);
            data.set.batch.add_candidate(rows.data(), n);
            data.set.task.push_back(task_id);
            data.set.throughput.push_back(1.0 / median(times[json]));
            data.roofline_scores.push_back(-roofline_seconds(*def, shape, target, space, p, threads));
            data.schedules.push_back(json);
        }
    }
    return data;
}

}  // namespace opgen::tuner
