// Building the shape-generic kernels that ship (docs/design.md §2.9): the cache's
// (`opgen db compile --generic`) and an operator library's (`opgen library`). Each is checked
// against the reference and compiled by a worker process of its own (codegen/ObjectCompile.h, a
// generic job), so that its LLVM runs with the options of generic code (generic_worker_environment)
// whatever this process compiles, and the code that was checked is compiled with the same options
// as the code stored.
#ifndef OPGEN_CODEGEN_GENERIC_BUILD_H
#define OPGEN_CODEGEN_GENERIC_BUILD_H

#include "store/KernelCode.h"
#include "core/ComputeDef.h"
#include "core/Shape.h"
#include "core/Target.h"

#include <string>

namespace opgen {

// The generic kernel of `def` from the schedule `schedule_json` tuned at `shape`, compiled for
// `target` into an object file at `object` holding the pipeline `function`. Raises UserError
// naming the kernel and the worker's error when the check or the compile fails.
struct GenericObject {
    std::string checked;        // the shapes it was checked at ("K=1,M=1,N=1;...")
    std::string halide_target;  // the Halide target string it was compiled for
};
GenericObject compile_generic_object(const ComputeDef &def, const BoundShape &shape, const Target &target,
                                     const std::string &schedule_json, const std::string &function,
                                     const std::string &object);

// The generic code of `def` from the schedule tuned at `shape`, for the cache: compiled by
// compile_generic_object and linked (codegen/CompiledCode.h); `checked` gets the shapes it was
// checked at. Raises UserError as compile_generic_object does, or when the link fails.
db::KernelCode build_generic_code(const ComputeDef &def, const BoundShape &shape, const Target &target,
                                  const std::string &schedule_json, std::string &checked);

}  // namespace opgen

#endif
