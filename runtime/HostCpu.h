// The x86-64 instruction-set features this host's CPU (and operating system) provide, named as
// Halide names its target features ("avx2", "avx512_skylake"), read with cpuid and xgetbv. The
// loader (CodeLoader.h) refuses code that needs a feature the host lacks before any of it runs.
#ifndef OPGEN_RUNTIME_HOST_CPU_H
#define OPGEN_RUNTIME_HOST_CPU_H

#include <string>
#include <vector>

namespace opgen::db {

// The Halide feature names this file can check: sse41, avx, avx2, fma, fma4, f16c, avx512,
// avx512_knl, avx512_skylake, avx512_cannonlake, avx512_sapphirerapids, and amx_int8 (AMX tiles
// with int8 products: not a Halide feature; code rows of AMX points list it, codegen/CompiledCode.h).
const std::vector<std::string> &checkable_cpu_features();

// True when the host's CPU has the feature and the operating system saves the registers it uses
// (AVX and AVX-512 state, via xgetbv); for amx_int8 also that the process obtained the permission
// to use the tiles (asked here, base/AmxPermission.h). False for a name not in checkable_cpu_features(), and on a
// CPU that is not x86-64.
bool host_has_cpu_feature(const std::string &halide_feature);

// The names in `required` (comma-separated; empty parts ignored) that the host lacks, unknown
// names included, in the order given.
std::vector<std::string> missing_cpu_features(const std::string &required);

} // namespace opgen::db

#endif
