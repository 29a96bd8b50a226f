// `opgen library MANIFEST -o DIR`: one static library and one C header holding the cached winners
// of every task of a manifest, for a program to link instead of asking the cache at run time.
// Per op, one function takes the shape at run time and dispatches to the kernel tuned for exactly
// that shape, and any other shape to the op's generic kernel (codegen/GenericCode.h, compiled from
// its first tuned task's schedule and checked against the reference when built); a shape with
// other fixed values than it (a conv's window), or of an op without one, returns
// OPGEN_LIBRARY_NO_KERNEL. The library carries the Halide runtime once, and installs
// as a CMake package: find_package(opgen_library) gives opgen::kernel_library.
//
// DIR receives include/opgen_library.h, lib/libopgen_library.a and
// lib/cmake/opgen_library/opgen_libraryConfig.cmake; each file is written whole or not at all.
#ifndef OPGEN_CODEGEN_KERNEL_LIBRARY_H
#define OPGEN_CODEGEN_KERNEL_LIBRARY_H

#include "store/KernelCache.h"
#include "core/OpLibrary.h"
#include "core/Manifest.h"

#include <functional>
#include <string>
#include <vector>

namespace opgen {

struct KernelLibraryReport {
    int kernels = 0;                    // tuned kernels in the library
    int generic = 0;                    // generic kernels (one per op at most)
    std::vector<std::string> untuned;   // "op shape" of tasks without a cached winner
    std::vector<std::string> files;     // written into DIR
};

// Builds the library of `manifest`'s cached winners (each task's key at `threads` cores, or the
// target's cores when 0) into `out_dir`. Raises UserError when no task has a winner, a winner's
// schedule does not parse, or compiling, archiving or writing fails.
KernelLibraryReport build_kernel_library(const Manifest &manifest, const OpLibrary &library,
                                         db::KernelCache &cache, int threads,
                                         const std::string &out_dir,
                                         const std::function<void(const std::string &)> &log = {});

}  // namespace opgen

#endif
