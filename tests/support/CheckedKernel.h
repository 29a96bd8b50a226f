// One check of a scheduled kernel, shared by the low-precision tests (tests/core/LowPrecisionTest,
// tests/tuner/Int8TuneTest): `point` applied to `def` at `shape`, JIT-compiled for `target`, run
// once on seeded inputs over a poisoned output, and compared with the reference at every point
// (exactly for an integer output). Halide errors propagate.
#ifndef OPGEN_TESTS_SUPPORT_CHECKED_KERNEL_H
#define OPGEN_TESTS_SUPPORT_CHECKED_KERNEL_H

#include "core/Kernel.h"
#include "core/Schedule.h"

#include <cstdint>

namespace opgen::test {

inline Verification run_checked(const ComputeDef &def, const BoundShape &shape, const SchedulePoint &point,
                                const Target &target, uint64_t seed) {
    LoweredOp op = lower_for_point(def, shape, &point);
    apply_schedule(op, point, target);
    JitKernel kernel(op, target);
    auto inputs = random_inputs(def, shape, seed);
    HostTensor out = make_host_tensor(def.output().dtype, shape.dims.at(def.output().name));
    poison(out);
    kernel.bind(inputs, out);
    kernel.run();
    return verify_output(def, shape, inputs, out, 1e-3, shape.elements(def.output().name));
}

}  // namespace opgen::test

#endif
