// Measuring one candidate: lower the op afresh, apply the point, JIT-compile, run once and check
// the output against the reference sample, then time it. Failures (compile error, run-time error,
// wrong result) come back as data with their reason; nothing here throws for a bad candidate.
// Every JIT module and buffer of a candidate is released when its CompiledCandidate (or the
// measure() call) goes away.
//
// measure() does all of it in the calling process; the tuner runs the same steps in isolated
// worker processes (tuner/WorkerPool.h), which add the failures a process can have: "crash" (a
// signal) and "timeout" (a hang).
#ifndef OPGEN_TUNER_MEASURER_H
#define OPGEN_TUNER_MEASURER_H

#include "core/Kernel.h"
#include "core/Reference.h"
#include "core/Schedule.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace opgen::tuner {

// Everything one tuning task shares across candidates: inputs, the reference sample, an output
// buffer.
struct TaskContext {
    const ComputeDef *def = nullptr;
    BoundShape shape;
    Target target;
    std::map<std::string, HostTensor> inputs;
    ReferenceSample reference;
    HostTensor output;
    double flops = 0;
    // Flushes the inputs timed cold before each timed call (tuner/ColdInputs.h); empty: all hot.
    std::function<void()> before_call;

    TaskContext(const ComputeDef &d, const BoundShape &s, const Target &t, uint64_t seed = 1);
};

struct MeasureResult {
    std::string status = "ok";  // ok, compile_error, runtime_error, wrong_result, crash, timeout
    std::string error;
    Timing timing;
    double gflops = 0;
    double max_error = 0;
    // Timed interleaved with a fixed reference kernel (worker measurements): the reference's
    // median in the same window, and the median of the per-call candidate/reference time ratios.
    // 0 when there was no reference.
    double reference_ms = 0;
    double ratio = 0;

    bool ok() const { return status == "ok"; }
};

// A result's max_error as the worker and the replay files write it: a wrong integer result's
// error is infinite (core/Reference.h), which JSON writes as null; absent means 0.
double max_error_from_json(const nlohmann::json &j);

// A candidate compiled and checked against the reference, held for timing. Destroying it releases
// its JIT module and buffers.
struct CompiledCandidate {
    std::unique_ptr<LoweredOp> op;
    std::unique_ptr<JitKernel> kernel;
};

// Lowers, schedules (`point`, or Halide's default schedule when empty), JIT-compiles and runs once
// on a poisoned output, checking it against the task's reference. On failure `r` holds the status
// and reason and the result is null; on success `r.max_error` is set and the kernel is bound to the
// task's tensors.
std::unique_ptr<CompiledCandidate> compile_and_verify(TaskContext &task, const std::optional<SchedulePoint> &point,
                                                      MeasureResult &r);

// Times `candidate` and `reference` alternately, one call each per step, after a warm-up call of
// each, until the candidate's calls add up to `min_total_ms` (at least `min_runs`, at most
// `max_runs` steps). `ratio` is the median of the per-step time ratios, so a clock that drifts
// between windows moves both sides alike. `before_call` (may be empty) runs before each timed call,
// outside the timed part (tuner/ColdInputs.h). Halide::RuntimeError propagates.
struct PairedTiming {
    Timing candidate;
    Timing reference;
    double ratio = 0;
};
PairedTiming time_paired(JitKernel &candidate, JitKernel &reference, double min_total_ms, int min_runs,
                         int max_runs = 1000, const std::function<void()> &before_call = {});

// Measures `point`, or Halide's default schedule when `point` is empty, in this process.
MeasureResult measure(TaskContext &task, const std::optional<SchedulePoint> &point, double min_time_ms = 100,
                      int min_runs = 3);

}  // namespace opgen::tuner

#endif
