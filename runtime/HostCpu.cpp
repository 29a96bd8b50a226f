#include "runtime/HostCpu.h"

#include "base/AmxPermission.h"

#include <cstdint>
#include <sstream>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace opgen::db {

namespace {

// The cpuid bits Halide's features stand for (Intel SDM vol. 2A, "CPUID"; Halide's own
// Target::get_host_target makes the same tests).
struct CpuBits {
    bool sse41 = false, avx = false, f16c = false, fma = false, fma4 = false, avx2 = false;
    bool avx512f = false, avx512cd = false, avx512er = false, avx512pf = false;
    bool avx512vl = false, avx512bw = false, avx512dq = false, avx512ifma = false;
    bool avx512vbmi = false, avx512vnni = false, avx512bf16 = false;
    bool amx_tile = false, amx_int8 = false;
    bool os_avx = false;     // XCR0 has SSE and AVX state
    bool os_avx512 = false;  // XCR0 also has the opmask and ZMM state
    bool os_amx = false;     // XCR0 has the tile configuration and tile data state
};

#if defined(__x86_64__)
uint64_t xcr0() {
    uint32_t eax = 0, edx = 0;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return uint64_t(edx) << 32 | eax;
}

CpuBits read_cpu_bits() {
    CpuBits b;
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
        return b;
    }
    b.sse41 = ecx & (1u << 19);
    b.fma = ecx & (1u << 12);
    b.f16c = ecx & (1u << 29);
    bool osxsave = ecx & (1u << 27);
    b.avx = ecx & (1u << 28);
    if (osxsave) {
        uint64_t state = xcr0();
        b.os_avx = (state & 0x6) == 0x6;
        b.os_avx512 = (state & 0xe6) == 0xe6;
        b.os_amx = (state & 0x60000) == 0x60000;
    }
    if (__get_cpuid(0x80000001, &eax, &ebx, &ecx, &edx)) {
        b.fma4 = ecx & (1u << 16);
    }
    if (__get_cpuid_max(0, nullptr) >= 7) {
        __cpuid_count(7, 0, eax, ebx, ecx, edx);
        b.avx2 = ebx & (1u << 5);
        b.avx512f = ebx & (1u << 16);
        b.avx512dq = ebx & (1u << 17);
        b.avx512ifma = ebx & (1u << 21);
        b.avx512pf = ebx & (1u << 26);
        b.avx512er = ebx & (1u << 27);
        b.avx512cd = ebx & (1u << 28);
        b.avx512bw = ebx & (1u << 30);
        b.avx512vl = ebx & (1u << 31);
        b.avx512vbmi = ecx & (1u << 1);
        b.avx512vnni = ecx & (1u << 11);
        b.amx_tile = edx & (1u << 24);
        b.amx_int8 = edx & (1u << 25);
        unsigned leaves = eax;
        if (leaves >= 1) {
            __cpuid_count(7, 1, eax, ebx, ecx, edx);
            b.avx512bf16 = eax & (1u << 5);
        }
    }
    return b;
}
#else
CpuBits read_cpu_bits() {
    return {};
}
#endif

const CpuBits &host_bits() {
    static const CpuBits bits = read_cpu_bits();
    return bits;
}

bool has(const CpuBits &b, const std::string &feature) {
    bool avx = b.avx && b.os_avx;
    bool avx512 = b.avx512f && b.avx512cd && b.os_avx512;
    bool skylake = avx512 && b.avx512vl && b.avx512bw && b.avx512dq;
    bool cannonlake = skylake && b.avx512ifma && b.avx512vbmi;
    if (feature == "sse41") return b.sse41;
    if (feature == "avx") return avx;
    if (feature == "avx2") return avx && b.avx2;
    if (feature == "fma") return avx && b.fma;
    if (feature == "fma4") return avx && b.fma4;
    if (feature == "f16c") return avx && b.f16c;
    if (feature == "avx512") return avx512;
    if (feature == "avx512_knl") return avx512 && b.avx512er && b.avx512pf;
    if (feature == "avx512_skylake") return skylake;
    if (feature == "avx512_cannonlake") return cannonlake;
    if (feature == "avx512_sapphirerapids") return cannonlake && b.avx512vnni && b.avx512bf16;
    // AMX also needs the process's permission (base/AmxPermission.h): asked here, once, so that
    // code the loader accepts for it can run.
    if (feature == "amx_int8") return b.amx_tile && b.amx_int8 && b.os_amx && request_amx_permission();
    return false;
}

} // namespace

const std::vector<std::string> &checkable_cpu_features() {
    static const std::vector<std::string> names = {
        "sse41",  "avx",        "avx2",           "fma",
        "fma4",   "f16c",       "avx512",         "avx512_knl",
        "avx512_skylake", "avx512_cannonlake", "avx512_sapphirerapids", "amx_int8"};
    return names;
}

bool host_has_cpu_feature(const std::string &halide_feature) {
    return has(host_bits(), halide_feature);
}

std::vector<std::string> missing_cpu_features(const std::string &required) {
    std::vector<std::string> missing;
    std::stringstream parts(required);
    std::string name;
    while (std::getline(parts, name, ',')) {
        if (!name.empty() && !host_has_cpu_feature(name)) {
            missing.push_back(name);
        }
    }
    return missing;
}

} // namespace opgen::db
