// Compiling a tuned winner into the code the kernel cache keeps beside its schedule
// (db/KernelCode.h), so that a runtime can call it with no compiler: Halide compiles the scheduled
// op ahead of time for the target, without its runtime (Target::NoRuntime; the lookup library
// carries one runtime for all kernels), and the system's C compiler driver links the object into
// a position-independent shared object (`cc -shared`; OPGEN_CC names another driver).
#ifndef OPGEN_COMPILED_CODE_H
#define OPGEN_COMPILED_CODE_H

#include "db/KernelCode.h"
#include "opgen/ComputeDef.h"
#include "opgen/Schedule.h"
#include "opgen/Shape.h"
#include "opgen/Target.h"

#include <string>

namespace opgen {

// The name of the pipeline of `def` inside its code ("opgen_" + the op name, other characters
// than letters and digits as '_'); its entry point is that name + "_argv".
std::string code_function_name(const ComputeDef &def);

// The signature (db::CodeArgument) of `def` at `shape`: its inputs in declaration order, then
// the output, each with its dims outermost first.
std::string code_signature(const ComputeDef &def, const BoundShape &shape);

// The Halide features of `halide_target` that need the CPU's support (those db::HostCpu checks).
std::string required_cpu_features(const Halide::Target &halide_target);

// Compiles `def` at `shape` with `point` for `target` into a kernel's code with its digest,
// `schedule_json` naming the schedule it came from. Raises UserError when Halide cannot compile
// for the target or the link fails (naming the command and its output).
db::KernelCode compile_kernel_code(const ComputeDef &def, const BoundShape &shape,
                                   const SchedulePoint &point, const Target &target,
                                   const std::string &schedule_json);

}  // namespace opgen

#endif
