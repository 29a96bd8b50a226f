#include "tuner/GenericTiming.h"

#include "opgen/Error.h"
#include "opgen/GenericCode.h"
#include "tuner/Measurer.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <thread>

namespace opgen::tuner {

namespace {

// The key without its shape: generic code and tuned kernels pair up within one.
std::string family(const db::KernelKey &key) {
    return key.target + '\n' + key.op_hash + '\n' + key.dtype + '\n' + key.halide_version + '\n' +
           key.tuner_version;
}

std::string describe(const db::KernelKey &key) {
    return "op '" + key.op_name + "' at " + key.shape + " on '" + key.target + "'";
}

// The thread count kernels of this process run at: HL_NUM_THREADS, else every core.
int process_threads() {
    if (const char *env = std::getenv("HL_NUM_THREADS"); env && std::atoi(env) > 0) return std::atoi(env);
    return int(std::max(1u, std::thread::hardware_concurrency()));
}

// One tuned shape, ready to time against: its task (inputs, reference sample, output) and its
// kernel compiled, checked and bound to the task.
struct TunedKernel {
    db::KernelRecord record;
    std::unique_ptr<TaskContext> task;
    std::unique_ptr<CompiledCandidate> compiled;
};

// Compiles the tuned kernel of `record`; nullptr with `why` when it fails or gives a wrong result.
std::unique_ptr<TunedKernel> compile_tuned(const ComputeDef &def, const Target &target,
                                           const db::KernelRecord &record, std::string &why) {
    auto t = std::make_unique<TunedKernel>();
    t->record = record;
    t->task = std::make_unique<TaskContext>(def, bind_shape(def, record.key.shape), target);
    MeasureResult r;
    SchedulePoint point = SchedulePoint::from_json(nlohmann::json::parse(record.schedule_json));
    t->compiled = compile_and_verify(*t->task, point, r);
    if (!t->compiled) {
        why = "the tuned kernel: " + r.status + ": " + r.error;
        return nullptr;
    }
    return t;
}

// The generic kernel (`row`, its lowering `op` JIT-compiled as `kernel`) timed at `tuned`'s shape
// in turns with the tuned kernel, its output checked first; nullopt with `why` on a failure.
std::optional<db::GenericTimingRecord> time_at(const db::GenericCodeRecord &row, JitKernel &kernel,
                                               TunedKernel &tuned, double min_ms, std::string &why) {
    TaskContext &task = *tuned.task;
    HostTensor output;
    output.dims = task.output.dims;
    output.data.assign(task.output.data.size(), std::numeric_limits<float>::quiet_NaN());
    try {
        kernel.bind(task.inputs, output);
        kernel.run();
        Verification v = check_output(task.reference, output);
        if (!v.ok) {
            why = "wrong result at " + task.shape.canonical + ": " + v.first_mismatch;
            return std::nullopt;
        }
        PairedTiming p = time_paired(kernel, *tuned.compiled->kernel, min_ms, 5);
        db::GenericTimingRecord t;
        t.key = row.key;
        t.digest = row.code.digest;
        t.at_shape = tuned.record.key.shape;
        t.time_ms = p.candidate.median_ms;
        t.tuned_ms = p.reference.median_ms;
        t.ratio = p.ratio;
        return t;
    } catch (const Halide::Error &e) {
        why = "at " + task.shape.canonical + ": " + e.what();
        return std::nullopt;
    }
}

}  // namespace

int key_threads(const std::string &target_key) {
    size_t at = target_key.rfind(":t");
    if (at == std::string::npos) return 0;
    int n = std::atoi(target_key.c_str() + at + 2);
    return n > 0 ? n : 0;
}

CodeFillReport time_generic_code(db::KernelCache &cache, const OpLibrary &library, const Target &target,
                                 const std::vector<std::string> &ops, double min_ms,
                                 const std::function<void(const std::string &)> &log) {
    CodeFillReport report;
    const int threads = process_threads();
    auto fail = [&](const std::string &what) {
        report.failed++;
        report.errors.push_back(what);
        if (log) log("failed timing " + what);
    };
    for (const std::string &op : ops.empty() ? library.list() : ops) {
        // Tuned kernels and generic code by family (key without shape), on this target and thread count.
        std::map<std::string, std::vector<db::KernelRecord>> tuned_rows;
        std::set<std::string> target_keys;
        for (const db::KernelRecord &record : cache.kernels_of_op(op)) {
            if (!is_on_target(record.key, target) || key_threads(record.key.target) != threads) continue;
            tuned_rows[family(record.key)].push_back(record);
            target_keys.insert(record.key.target);
        }
        for (const std::string &target_key : target_keys) {
            std::set<std::pair<std::string, std::string>> timed;  // (digest, at_shape)
            for (const db::GenericTimingRecord &t : cache.generic_timings_for(op, target_key)) {
                timed.insert({t.digest, t.at_shape});
            }
            std::map<std::string, std::unique_ptr<TunedKernel>> tuned;  // by family + shape, compiled once
            std::set<std::string> tuned_failed;
            std::vector<db::GenericTimingRecord> stored;
            for (const db::GenericCodeRecord &row : cache.generic_code_for(op, target_key)) {
                auto rows = tuned_rows.find(family(row.key));
                if (rows == tuned_rows.end()) continue;
                std::vector<const db::KernelRecord *> missing;
                for (const db::KernelRecord &r : rows->second) {
                    if (!timed.count({row.code.digest, r.key.shape})) missing.push_back(&r);
                }
                if (missing.empty()) continue;
                std::string why;
                try {
                    std::optional<ComputeDef> def = definition_of(cache, library, row.key, why);
                    if (!def) {
                        fail("generic " + describe(row.key) + ": " + why);
                        continue;
                    }
                    SchedulePoint point = SchedulePoint::from_json(nlohmann::json::parse(row.code.schedule_json));
                    LoweredOp lowered = lower_generic(*def, bind_shape(*def, row.key.shape), point, target);
                    JitKernel kernel(lowered, target);
                    int n = 0;
                    for (const db::KernelRecord *r : missing) {
                        std::string key = family(r->key) + '\n' + r->key.shape;
                        if (tuned_failed.count(key)) continue;
                        std::unique_ptr<TunedKernel> &t = tuned[key];
                        if (!t) {
                            std::string tuned_why;
                            t = compile_tuned(*def, target, *r, tuned_why);
                            if (!t) {
                                tuned_failed.insert(key);
                                fail(describe(r->key) + ": " + tuned_why);
                                continue;
                            }
                        }
                        std::string at_why;
                        if (std::optional<db::GenericTimingRecord> timing = time_at(row, kernel, *t, min_ms, at_why)) {
                            stored.push_back(*timing);
                            n++;
                        } else {
                            fail("generic " + describe(row.key) + ": " + at_why);
                        }
                    }
                    if (log) log("timed generic " + describe(row.key) + " at " + std::to_string(n) + " tuned shape(s)");
                } catch (const Halide::Error &e) {
                    fail("generic " + describe(row.key) + ": " + e.what());
                } catch (const UserError &e) {
                    fail("generic " + describe(row.key) + ": " + e.what());
                } catch (const nlohmann::json::exception &e) {
                    fail("generic " + describe(row.key) + ": its schedule: " + e.what());
                }
            }
            cache.put_generic_timings(stored);
            report.compiled += int(stored.size());
        }
    }
    return report;
}

}  // namespace opgen::tuner
