#include "tuner/ColdInputs.h"

#include "base/Error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <emmintrin.h>
#endif

#include <cstdint>
#include <vector>

namespace opgen::tuner {

namespace {

#if !(defined(__x86_64__) || defined(__i386__))
// Larger than any last-level cache opgen targets: streaming it leaves nothing else cached.
void stream_eviction_buffer() {
    static std::vector<uint8_t> scratch(size_t(256) << 20);
    volatile uint8_t *p = scratch.data();
    for (size_t i = 0; i < scratch.size(); i += 64) p[i] = uint8_t(p[i] + 1);
}
#endif

}  // namespace

void flush_from_caches(const HostTensor &t) {
    if (t.elements() == 0) return;
#if defined(__x86_64__) || defined(__i386__)
    const auto *begin = static_cast<const char *>(t.host());
    const char *end = begin + t.byte_size();
    const char *line = reinterpret_cast<const char *>(uintptr_t(begin) & ~uintptr_t(63));
    for (; line < end; line += 64) _mm_clflush(line);
    _mm_mfence();  // the flushes are done before the timed call begins
#else
    stream_eviction_buffer();
#endif
}

std::function<void()> cold_inputs_hook(const std::map<std::string, HostTensor> &inputs,
                                       const std::vector<std::string> &names) {
    if (names.empty()) return {};
    std::vector<const HostTensor *> cold;
    for (const std::string &name : names) {
        auto it = inputs.find(name);
        if (it == inputs.end()) {
            std::string known;
            for (const auto &[n, t] : inputs) known += (known.empty() ? "" : ", ") + n;
            user_check(false) << "cold input '" << name << "' is not an input of the op (inputs: " << known << ")";
        }
        cold.push_back(&it->second);
    }
    return [cold] {
        for (const HostTensor *t : cold) flush_from_caches(*t);
    };
}

db::KernelKey cold_key(const db::KernelKey &key) {
    db::KernelKey k = key;
    k.target += ":cold";
    return k;
}

}  // namespace opgen::tuner
