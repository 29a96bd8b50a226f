#include "tuner/Measurer.h"

#include "tuner/PairedSteps.h"

#include <algorithm>
#include <chrono>
#include <limits>

namespace opgen::tuner {

TaskContext::TaskContext(const ComputeDef &d, const BoundShape &s, const Target &t, uint64_t seed)
    : def(&d), shape(s), target(t) {
    inputs = random_inputs(d, s, seed);
    reference = reference_sample(d, s, inputs);
    output = make_host_tensor(d.output().dtype, s.dims.at(d.output().name));
    flops = flop_count(d, s);
}

std::unique_ptr<CompiledCandidate> compile_and_verify(TaskContext &task, const std::optional<SchedulePoint> &point,
                                                      MeasureResult &r) {
    r = MeasureResult();
    try {
        auto c = std::make_unique<CompiledCandidate>();
        c->op = std::make_unique<LoweredOp>(lower_for_point(*task.def, task.shape, point ? &*point : nullptr));
        if (point) {
            apply_schedule(*c->op, *point, task.target);
        } else {
            apply_default_schedule(*c->op, task.target);
        }
        c->kernel = std::make_unique<JitKernel>(*c->op, task.target);
        // A poisoned output, so a kernel that skips points cannot pass on stale values.
        poison(task.output);
        c->kernel->bind(task.inputs, task.output);
        c->kernel->run();
        Verification v = check_output(task.reference, task.output);
        r.max_error = v.max_error;
        if (!v.ok) {
            r.status = "wrong_result";
            r.error = v.first_mismatch;
            return nullptr;
        }
        return c;
    } catch (const Halide::CompileError &e) {
        r.status = "compile_error";
        r.error = e.what();
    } catch (const Halide::RuntimeError &e) {
        r.status = "runtime_error";
        r.error = e.what();
    } catch (const Halide::Error &e) {
        r.status = "compile_error";
        r.error = e.what();
    } catch (const UserError &e) {
        r.status = "compile_error";
        r.error = e.what();
    }
    return nullptr;
}

PairedTiming time_paired(JitKernel &candidate, JitKernel &reference, double min_total_ms, int min_runs,
                         int max_runs, const std::function<void()> &before_call) {
    using clock = std::chrono::steady_clock;
    auto timed = [&before_call](JitKernel &k) {
        if (before_call) before_call();
        auto t0 = clock::now();
        k.run();
        return std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    };
    reference.run();  // warm-up: page faults, thread pool start, caches
    candidate.run();
    PairedSteps steps = alternate_calls([&] { return timed(candidate); }, [&] { return timed(reference); },
                                        min_total_ms, min_runs, max_runs);
    PairedTiming p;
    p.candidate = summarize_samples(std::move(steps.candidate_ms));
    p.reference = summarize_samples(std::move(steps.reference_ms));
    p.ratio = steps.ratio;
    return p;
}

MeasureResult measure(TaskContext &task, const std::optional<SchedulePoint> &point, double min_time_ms, int min_runs) {
    MeasureResult r;
    std::unique_ptr<CompiledCandidate> c = compile_and_verify(task, point, r);
    if (!c) return r;
    try {
        r.timing = c->kernel->time(min_time_ms, min_runs, 1000, task.before_call);
        r.gflops = task.flops / (r.timing.median_ms * 1e6);
    } catch (const Halide::RuntimeError &e) {
        r.status = "runtime_error";
        r.error = e.what();
    }
    return r;
}

double max_error_from_json(const nlohmann::json &j) {
    if (!j.contains("max_error")) return 0.0;
    const nlohmann::json &e = j.at("max_error");
    return e.is_null() ? std::numeric_limits<double>::infinity() : e.get<double>();
}

}  // namespace opgen::tuner
