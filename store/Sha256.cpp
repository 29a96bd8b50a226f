#include "store/Sha256.h"

#include <algorithm>
#include <cpuid.h>
#include <cstring>
#include <immintrin.h>

namespace opgen::db {

namespace {

// FIPS 180-4, section 4.2.2: the first 32 bits of the fractional parts of the cube roots of the
// first 64 primes.
constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

uint32_t rotr(uint32_t x, int n) {
    return (x >> n) | (x << (32 - n));
}

void compress_portable(uint32_t *state, const uint8_t *bytes) {
    uint32_t w[64];
    for (int i = 0; i < 16; i++) {
        w[i] = uint32_t(bytes[4 * i]) << 24 | uint32_t(bytes[4 * i + 1]) << 16 |
               uint32_t(bytes[4 * i + 2]) << 8 | uint32_t(bytes[4 * i + 3]);
    }
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
    uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) +
                      kRound[i] + w[i];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    state[0] += a;
    state[1] += b;
    state[2] += c;
    state[3] += d;
    state[4] += e;
    state[5] += f;
    state[6] += g;
    state[7] += h;
}

// Whether the CPU has the SHA extensions and the SSSE3 and SSE4.1 shuffles they are used with.
bool has_sha_extensions() {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
    const bool shuffles = (ecx & (1u << 9)) && (ecx & (1u << 19));
    if (__get_cpuid_max(0, nullptr) < 7) return false;
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    return shuffles && (ebx & (1u << 29));
}

// `count` blocks with the SHA extensions (Intel's "SHA extensions" white paper: the state held as
// ABEF and CDGH, four rounds per message vector, the schedule from sha256msg1/msg2).
__attribute__((target("sha,sse4.1,ssse3"))) void compress_extensions(uint32_t *state, const uint8_t *bytes,
                                                                     size_t count) {
    const __m128i byteswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i tmp = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(state)), 0xB1);  // CDAB
    __m128i efgh = _mm_shuffle_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(state + 4)), 0x1B);
    __m128i abef = _mm_alignr_epi8(tmp, efgh, 8);
    __m128i cdgh = _mm_blend_epi16(efgh, tmp, 0xF0);
    for (size_t b = 0; b < count; b++, bytes += 64) {
        const __m128i abef_in = abef, cdgh_in = cdgh;
        __m128i w[16];
        for (int j = 0; j < 16; j++) {
            if (j < 4) {
                w[j] = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i *>(bytes + 16 * j)), byteswap);
            } else {
                __m128i m = _mm_sha256msg1_epu32(w[j - 4], w[j - 3]);
                m = _mm_add_epi32(m, _mm_alignr_epi8(w[j - 1], w[j - 2], 4));
                w[j] = _mm_sha256msg2_epu32(m, w[j - 1]);
            }
            __m128i msg = _mm_add_epi32(w[j], _mm_loadu_si128(reinterpret_cast<const __m128i *>(kRound + 4 * j)));
            cdgh = _mm_sha256rnds2_epu32(cdgh, abef, msg);
            abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(msg, 0x0E));
        }
        abef = _mm_add_epi32(abef, abef_in);
        cdgh = _mm_add_epi32(cdgh, cdgh_in);
    }
    tmp = _mm_shuffle_epi32(abef, 0x1B);   // FEBA
    cdgh = _mm_shuffle_epi32(cdgh, 0xB1);  // DCHG
    _mm_storeu_si128(reinterpret_cast<__m128i *>(state), _mm_blend_epi16(tmp, cdgh, 0xF0));     // DCBA
    _mm_storeu_si128(reinterpret_cast<__m128i *>(state + 4), _mm_alignr_epi8(cdgh, tmp, 8));  // HGFE
}

} // namespace

Sha256::Sha256(Code code)
    // Section 5.3.3: the square roots of the first 8 primes.
    : state_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
             0x5be0cd19} {
    static const bool extensions = has_sha_extensions();
    extensions_ = code == Code::Fastest && extensions;
}

void Sha256::blocks(const uint8_t *bytes, size_t count) {
    if (extensions_) {
        compress_extensions(state_.data(), bytes, count);
        return;
    }
    for (size_t b = 0; b < count; b++) compress_portable(state_.data(), bytes + 64 * b);
}

void Sha256::add(const void *data, size_t size) {
    if (size == 0) return;  // an empty vector's data() may be null, which memcpy must not get
    const uint8_t *bytes = static_cast<const uint8_t *>(data);
    total_bytes_ += size;
    if (buffered_ > 0) {
        size_t take = std::min(size, buffer_.size() - buffered_);
        std::memcpy(buffer_.data() + buffered_, bytes, take);
        buffered_ += take;
        bytes += take;
        size -= take;
        if (buffered_ < buffer_.size()) return;
        blocks(buffer_.data(), 1);
        buffered_ = 0;
    }
    // Whole blocks straight from the caller's bytes; the rest waits in the buffer.
    blocks(bytes, size / 64);
    bytes += size / 64 * 64;
    size %= 64;
    std::memcpy(buffer_.data(), bytes, size);
    buffered_ = size;
}

std::string Sha256::hex() {
    // Section 5.1.1: a 1 bit, zeros up to 56 bytes mod 64, then the length in bits, big-endian.
    uint64_t bits = total_bytes_ * 8;
    const uint8_t one = 0x80, zero = 0;
    add(&one, 1);
    while (buffered_ != 56) {
        add(&zero, 1);
    }
    uint8_t length[8];
    for (int i = 0; i < 8; i++) {
        length[i] = uint8_t(bits >> (56 - 8 * i));
    }
    add(length, 8);
    static const char digits[] = "0123456789abcdef";
    std::string text;
    for (uint32_t word : state_) {
        for (int shift = 28; shift >= 0; shift -= 4) {
            text += digits[(word >> shift) & 0xf];
        }
    }
    return text;
}

std::string sha256_hex(const void *data, size_t size) {
    Sha256 hash;
    hash.add(data, size);
    return hash.hex();
}

} // namespace opgen::db
