#include "tuner/Measurer.h"

namespace opgen::tuner {

TaskContext::TaskContext(const ComputeDef &d, const BoundShape &s, const Target &t, uint64_t seed)
    : def(&d), shape(s), target(t) {
    inputs = random_inputs(d, s, seed);
    reference = reference_sample(d, s, inputs);
    output.dims = s.dims.at(d.output().name);
    output.data.assign(size_t(output.elements()), 0.0f);
    flops = flop_count(d, s);
}

MeasureResult measure(TaskContext &task, const std::optional<SchedulePoint> &point, double min_time_ms, int min_runs) {
    MeasureResult r;
    try {
        LoweredOp op = lower_to_halide(*task.def, task.shape);
        if (point) {
            apply_schedule(op, *point, task.target);
        } else {
            apply_default_schedule(op, task.target);
        }
        JitKernel kernel(op, task.target);
        // A poisoned output, so a kernel that skips points cannot pass on stale values.
        std::fill(task.output.data.begin(), task.output.data.end(), std::numeric_limits<float>::quiet_NaN());
        kernel.bind(task.inputs, task.output);
        kernel.run();
        Verification v = check_output(task.reference, task.output);
        r.max_error = v.max_error;
        if (!v.ok) {
            r.status = "wrong_result";
            r.error = v.first_mismatch;
            return r;
        }
        r.timing = kernel.time(min_time_ms, min_runs);
        r.gflops = task.flops / (r.timing.median_ms * 1e6);
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
    return r;
}

}  // namespace opgen::tuner
