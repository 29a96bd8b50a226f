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

// A failure goes into the report and the log; the run goes on.
struct FailureLog {
    CodeFillReport &report;
    const std::function<void(const std::string &)> &log;
    void operator()(const std::string &what) const {
        report.failed++;
        report.errors.push_back(what);
        if (log) log("failed timing " + what);
    }
};

// The op's tuned kernels on `target` at the process's thread count: by target key, then family.
using TunedRowsByKey = std::map<std::string, std::map<std::string, std::vector<db::KernelRecord>>>;

TunedRowsByKey tuned_rows_of(db::KernelCache &cache, const std::string &op, const Target &target, int threads) {
    TunedRowsByKey rows;
    for (const db::KernelRecord &record : cache.kernels_of_op(op)) {
        if (!is_on_target(record.key, target) || key_threads(record.key.target) != threads) continue;
        rows[record.key.target][family(record.key)].push_back(record);
    }
    return rows;
}

// The tuned shapes of `family_rows` at which the code of digest `digest` has no timing in `timed`.
std::vector<const db::KernelRecord *> untimed_shapes(const std::vector<db::KernelRecord> &family_rows,
                                                     const std::string &digest,
                                                     const std::set<std::pair<std::string, std::string>> &timed) {
    std::vector<const db::KernelRecord *> missing;
    for (const db::KernelRecord &r : family_rows) {
        if (!timed.count({digest, r.key.shape})) missing.push_back(&r);
    }
    return missing;
}

// The tuned kernels of one target key, each compiled and checked once however many generic
// kernels are timed against it; a failure is reported once and the shape skipped after.
class TunedKernels {
public:
    TunedKernels(const Target &target, const FailureLog &fail) : target_(target), fail_(fail) {}

    // The compiled tuned kernel of `record`; nullptr when it failed (now or before).
    TunedKernel *get(const ComputeDef &def, const db::KernelRecord &record) {
        std::string key = family(record.key) + '\n' + record.key.shape;
        if (failed_.count(key)) return nullptr;
        std::unique_ptr<TunedKernel> &t = compiled_[key];
        if (t) return t.get();
        std::string why;
        t = compile_tuned(def, target_, record, why);
        if (!t) {
            failed_.insert(key);
            fail_(describe(record.key) + ": " + why);
        }
        return t.get();
    }

private:
    const Target &target_;
    const FailureLog &fail_;
    std::map<std::string, std::unique_ptr<TunedKernel>> compiled_;  // by family + shape
    std::set<std::string> failed_;
};

// Compiles the generic kernel of `row` (JIT, the lowering of its stored code) and times it at each
// of `missing`, appending the timings to `stored`. Returns how many it stored; failures go to `fail`.
int time_generic_row(db::KernelCache &cache, const OpLibrary &library, const Target &target,
                     const db::GenericCodeRecord &row, const std::vector<const db::KernelRecord *> &missing,
                     TunedKernels &tuned, double min_ms, std::vector<db::GenericTimingRecord> &stored,
                     const FailureLog &fail) {
    const std::string what = "generic " + describe(row.key);
    std::string why;
    std::optional<ComputeDef> def = definition_of(cache, library, row.key, why);
    if (!def) {
        fail(what + ": " + why);
        return 0;
    }
    SchedulePoint point = SchedulePoint::from_json(nlohmann::json::parse(row.code.schedule_json));
    LoweredOp lowered = lower_generic(*def, bind_shape(*def, row.key.shape), point, target);
    JitKernel kernel(lowered, target);
    int n = 0;
    for (const db::KernelRecord *r : missing) {
        TunedKernel *t = tuned.get(*def, *r);
        if (!t) continue;
        std::string at_why;
        std::optional<db::GenericTimingRecord> timing = time_at(row, kernel, *t, min_ms, at_why);
        if (!timing) {
            fail(what + ": " + at_why);
            continue;
        }
        stored.push_back(*timing);
        n++;
    }
    return n;
}

// The timings of every generic kernel of `op` on `target_key` at the tuned shapes of its family
// (`families`) that it has none at yet.
std::vector<db::GenericTimingRecord> time_target_key(
    db::KernelCache &cache, const OpLibrary &library, const Target &target, const std::string &op,
    const std::string &target_key, const std::map<std::string, std::vector<db::KernelRecord>> &families,
    double min_ms, const FailureLog &fail, const std::function<void(const std::string &)> &log) {
    std::set<std::pair<std::string, std::string>> timed;  // (digest, at_shape)
    for (const db::GenericTimingRecord &t : cache.generic_timings_for(op, target_key)) {
        timed.insert({t.digest, t.at_shape});
    }
    TunedKernels tuned(target, fail);
    std::vector<db::GenericTimingRecord> stored;
    for (const db::GenericCodeRecord &row : cache.generic_code_for(op, target_key)) {
        auto rows = families.find(family(row.key));
        if (rows == families.end()) continue;
        std::vector<const db::KernelRecord *> missing = untimed_shapes(rows->second, row.code.digest, timed);
        if (missing.empty()) continue;
        const std::string what = "generic " + describe(row.key);
        try {
            int n = time_generic_row(cache, library, target, row, missing, tuned, min_ms, stored, fail);
            if (log) log("timed " + what + " at " + std::to_string(n) + " tuned shape(s)");
        } catch (const Halide::Error &e) {
            fail(what + ": " + e.what());
        } catch (const UserError &e) {
            fail(what + ": " + e.what());
        } catch (const nlohmann::json::exception &e) {
            fail(what + ": its schedule: " + e.what());
        }
    }
    return stored;
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
    const FailureLog fail{report, log};
    const int threads = process_threads();
    for (const std::string &op : ops.empty() ? library.list() : ops) {
        for (const auto &[target_key, families] : tuned_rows_of(cache, op, target, threads)) {
            std::vector<db::GenericTimingRecord> stored =
                time_target_key(cache, library, target, op, target_key, families, min_ms, fail, log);
            cache.put_generic_timings(stored);
            report.compiled += int(stored.size());
        }
    }
    return report;
}

}  // namespace opgen::tuner
