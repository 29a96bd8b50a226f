// SHA-256 (FIPS 180-4), for the digest that guards a kernel's compiled code in the cache
// (KernelCode.h): a blob whose bytes changed after it was stored is refused before it runs.
// A plain implementation, so that the lookup library needs no crypto library; where the CPU has
// the SHA extensions (cpuid leaf 7, EBX bit 29) their instructions compress the blocks: 5-6 ms a
// MiB on the portable code here (2026-11-26), and a generic convolution's code is 250-290 KB, hashed
// on every first call.
#ifndef OPGEN_STORE_SHA256_H
#define OPGEN_STORE_SHA256_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace opgen::db {

// Incremental hashing: add() any number of times, then hex() once.
class Sha256 {
public:
    // Fastest: the SHA extensions where the CPU has them; Portable: never (tests compare the two).
    enum class Code { Fastest, Portable };
    explicit Sha256(Code code = Code::Fastest);
    void add(const void *data, size_t size);
    void add(std::string_view text) { add(text.data(), text.size()); }
    // The digest as 64 lower-case hex digits. Ends the hashing: add() afterwards is a bug.
    std::string hex();

private:
    void blocks(const uint8_t *bytes, size_t count);

    std::array<uint32_t, 8> state_;
    std::array<uint8_t, 64> buffer_{};
    size_t buffered_ = 0;
    uint64_t total_bytes_ = 0;
    bool extensions_ = false;
};

// The SHA-256 of `size` bytes at `data`, as 64 lower-case hex digits.
std::string sha256_hex(const void *data, size_t size);

} // namespace opgen::db

#endif
