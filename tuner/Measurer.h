// Measuring one candidate: lower the op afresh, apply the point, JIT-compile, run once and check
// the output against the reference sample, then time it. Failures (compile error, run-time error,
// wrong result) come back as data with their reason; nothing here throws for a bad candidate.
// Every JIT module and buffer of a candidate is released when the call returns.
#ifndef OPGEN_TUNER_MEASURER_H
#define OPGEN_TUNER_MEASURER_H

#include "opgen/Kernel.h"
#include "opgen/Reference.h"
#include "opgen/Schedule.h"

#include <map>
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

    TaskContext(const ComputeDef &d, const BoundShape &s, const Target &t, uint64_t seed = 1);
};

struct MeasureResult {
    std::string status = "ok";  // ok, compile_error, runtime_error, wrong_result
    std::string error;
    Timing timing;
    double gflops = 0;
    double max_error = 0;

    bool ok() const { return status == "ok"; }
};

// Measures `point`, or Halide's default schedule when `point` is empty.
MeasureResult measure(TaskContext &task, const std::optional<SchedulePoint> &point, double min_time_ms = 100,
                      int min_runs = 3);

}  // namespace opgen::tuner

#endif
