// Compiling a tuned winner into the code the kernel cache keeps beside its schedule
// (store/KernelCode.h), so that a runtime can call it with no compiler: Halide compiles the scheduled
// op ahead of time for the target, without its runtime (Target::NoRuntime; the lookup library
// carries one runtime for all kernels), and the system's C compiler driver links the object into
// a position-independent shared object (`cc -shared`; OPGEN_CC names another driver).
#ifndef OPGEN_CODEGEN_COMPILED_CODE_H
#define OPGEN_CODEGEN_COMPILED_CODE_H

#include "store/KernelCode.h"
#include "core/ComputeDef.h"
#include "core/Lower.h"
#include "core/Schedule.h"
#include "core/Shape.h"
#include "core/Target.h"

#include <string>
#include <vector>

namespace opgen {

// The name of the pipeline of `def` inside its code ("opgen_" + the op name, other characters
// than letters and digits as '_'); its entry point is that name + "_argv".
std::string code_function_name(const ComputeDef &def);

// The signature (db::CodeArgument) of `def` at `shape`: its inputs in declaration order, then
// the output, each with its dims outermost first.
std::string code_signature(const ComputeDef &def, const BoundShape &shape);

// The Halide features of `halide_target` that need the CPU's support (those db::HostCpu checks),
// and amx_int8 for code of an AMX point (`amx_tile`, core/AmxTile.h), so that the loader refuses it
// on a host without AMX tiles (and asks for the AMX permission on one with them).
std::string required_cpu_features(const Halide::Target &halide_target, bool amx_tile = false);

// Compiles an op already lowered and scheduled into an object file at `path` holding the pipeline
// `function` (Target::NoRuntime); returns the Halide target string. Raises UserError starting with
// `what` when Halide cannot compile it for the target.
std::string compile_scheduled_object(LoweredOp &op, const std::string &what, const Target &target,
                                     const std::string &function, const std::string &path);

// Compiles `def` at `shape` with `point` for `target` into an object file at `path` holding the
// pipeline `function` (Target::NoRuntime); returns the Halide target string. Raises UserError when
// Halide cannot compile for the target.
std::string compile_kernel_object(const ComputeDef &def, const BoundShape &shape, const SchedulePoint &point,
                                  const Target &target, const std::string &function, const std::string &path);

// A private folder under $TMPDIR (or /tmp) for the files of one build, removed with everything in
// it at the end. Raises UserError when it cannot be created.
class ScratchFolder {
public:
    ScratchFolder();
    ~ScratchFolder();
    ScratchFolder(const ScratchFolder &) = delete;
    ScratchFolder &operator=(const ScratchFolder &) = delete;
    std::string file(const std::string &name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

// The C compiler driver: OPGEN_CC, else "cc".
std::string c_compiler();

// Runs a build tool (`cc`, `ar`) with its output going to the file `log`. Raises UserError naming
// the command and its output when it cannot run or fails.
void run_build_tool(const std::vector<std::string> &command, const std::string &log);

// Links the object file `object` (compiled for the Halide target `halide_target`,
// compile_scheduled_object) into `code`'s shared object: its target, CPU features, bytes, size and
// digest (its other fields, which the digest covers, set by the caller). `amx_tile`: the object
// runs AMX tiles (LoweredOp::amx_tile). Raises UserError naming the command and its output when the
// link fails.
void link_kernel_code(const std::string &object, const std::string &halide_target, db::KernelCode &code,
                      bool amx_tile = false);

// Compiles a lowered, scheduled op into `code`'s target, CPU features, bytes, size and digest (its
// other fields, which the digest covers, set by the caller). Raises UserError starting with `what`
// when Halide cannot compile it or the link fails.
void build_kernel_code(LoweredOp &op, const std::string &what, const Target &target, db::KernelCode &code);

// Compiles `def` at `shape` with `point` for `target` into a kernel's code with its digest,
// `schedule_json` naming the schedule it came from. Raises UserError when Halide cannot compile
// for the target or the link fails (naming the command and its output).
db::KernelCode compile_kernel_code(const ComputeDef &def, const BoundShape &shape,
                                   const SchedulePoint &point, const Target &target,
                                   const std::string &schedule_json);

}  // namespace opgen

#endif
