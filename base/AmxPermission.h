// Linux's permission to use AMX tiles. The kernel leaves the AMX tile data state (XTILEDATA,
// 8 KiB per thread) out of a process until it asks for it with
// arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA); the first tile instruction of a process that
// has not asked dies with SIGILL. The permission is per process and inherited by its threads, so
// one request before the first AMX kernel runs is enough. Every process that may run such a kernel
// asks: the tuner's workers and measurement (core/Kernel.cpp), the code loader (runtime/HostCpu.cpp,
// for code rows that need amx_int8) and model libraries (onnx/ModelLibrary.cpp). Header-only: both
// core/ and runtime/ ask, and neither may include the other (docs/design.md §4).
#ifndef OPGEN_BASE_AMX_PERMISSION_H
#define OPGEN_BASE_AMX_PERMISSION_H

#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace opgen {

// Asks the operating system once per process for the AMX tile data state; true when granted (also
// when it was granted before). False on a kernel or CPU without AMX, and off Linux x86-64.
inline bool request_amx_permission() {
#if defined(__linux__) && defined(__x86_64__)
    constexpr long kArchReqXcompPerm = 0x1023;  // ARCH_REQ_XCOMP_PERM (asm/prctl.h)
    constexpr long kXfeatureXtiledata = 18;     // XFEATURE_XTILEDATA
    static const bool granted = syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
    return granted;
#else
    return false;
#endif
}

}  // namespace opgen

#endif
