// Linux's permission to use AMX tiles. The kernel leaves the AMX tile data state (XTILEDATA,
// 8 KiB per thread) out of a process until it asks for it with
// arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA); the first tile instruction of a process that
// has not asked dies with SIGILL. The permission is per process and inherited by its threads, so
// one request before the first AMX kernel runs is enough. Every process that may run such a kernel
// asks: the tuner's workers and measurement (core/Kernel.cpp, JitKernel), the code loader
// (runtime/HostCpu.cpp, for code rows that need amx_int8), and model libraries, whose generated
// `<model>_load` makes the same call (onnx/ModelProgram.cpp). Header-only, in base/: core/ and
// runtime/ both ask, and core/ does not link runtime/ (docs/design.md §4).
#ifndef OPGEN_BASE_AMX_PERMISSION_H
#define OPGEN_BASE_AMX_PERMISSION_H

#include <string>

#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace opgen {

// Asks the operating system once per process for the AMX tile data state; true when granted (also
// when it was granted before). False on a kernel or CPU without AMX, and off Linux x86-64.
inline bool request_amx_permission() {
#if defined(__linux__) && defined(__x86_64__)
    constexpr long kArchReqXcompPerm = 0x1023; // ARCH_REQ_XCOMP_PERM (asm/prctl.h)
    constexpr long kXfeatureXtiledata = 18;    // XFEATURE_XTILEDATA
    static const bool granted = syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
    return granted;
#else
    return false;
#endif
}

// The same request in C, for the programs opgen generates around AMX kernels (model libraries'
// `<model>_load`, `opgen library`'s dispatch): `static int amx_permitted(void)`, 1 when the
// process may use AMX tiles, asked once on its first call where `uses_amx`, and 1 without asking
// where not (its kernels use no tiles).
inline std::string amx_permission_c_source(bool uses_amx) {
    return std::string(
               "/* AMX tiles: Linux gives a process the tile data state only on request\n"
               "   (arch_prctl ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA); a tile instruction\n"
               "   without it dies with SIGILL. */\n"
               "#define OPGEN_USES_AMX ") +
           (uses_amx ? "1" : "0") +
           "\n#if OPGEN_USES_AMX && defined(__linux__) && defined(__x86_64__)\n"
           "#include <sys/syscall.h>\n#include <unistd.h>\n"
           "static int amx_permitted(void) {\n"
           "    static int granted = -1;\n"
           "    if (granted < 0) granted = syscall(SYS_arch_prctl, 0x1023, 18) == 0;\n"
           "    return granted;\n}\n"
           "#else\nstatic int amx_permitted(void) { return 1; }\n#endif\n\n";
}

} // namespace opgen

#endif
