#include "core/HostTensor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace opgen {

namespace {

using Bytes = decltype(HostTensor::bytes);

template <typename T>
T load(const Bytes &bytes, int64_t i) {
    T v;
    std::memcpy(&v, bytes.data() + size_t(i) * sizeof(T), sizeof(T));
    return v;
}

template <typename T>
void store(Bytes &bytes, int64_t i, T v) {
    std::memcpy(bytes.data() + size_t(i) * sizeof(T), &v, sizeof(T));
}

// Two's-complement wrap of an integral double into `bits` bits (signed or not), as a cast does.
int64_t wrapped(double v, int bits, bool is_signed) {
    const uint64_t mask = bits == 64 ? ~uint64_t(0) : (uint64_t(1) << bits) - 1;
    const uint64_t u = uint64_t(int64_t(std::trunc(v))) & mask;
    if (!is_signed || !(u >> (bits - 1))) return int64_t(u);
    return int64_t(u) - int64_t(mask) - 1;
}

// float16 bits of `v`, round to nearest even (Halide::float16_t does the same).
uint16_t f16_bits(float v) {
    uint32_t x;
    std::memcpy(&x, &v, 4);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const float a = std::fabs(v);
    if (std::isnan(v)) return uint16_t(sign | 0x7e00u);
    if (a >= 65520.0f) return uint16_t(sign | 0x7c00u);
    if (a < 6.103515625e-05f) return uint16_t(sign | uint32_t(std::nearbyint(a * 16777216.0f)));  // subnormal
    int e = 0;
    const float m = std::frexp(a, &e);  // a = m 2^e, m in [0.5, 1)
    uint32_t mant = uint32_t(std::nearbyint((m * 2 - 1) * 1024.0f));
    int exp = e - 1 + 15;
    if (mant == 1024) {
        mant = 0;
        exp++;
    }
    if (exp >= 31) return uint16_t(sign | 0x7c00u);
    return uint16_t(sign | (uint32_t(exp) << 10) | mant);
}

float f16_value(uint16_t h) {
    const float sign = (h & 0x8000u) ? -1.0f : 1.0f;
    const int exp = (h >> 10) & 0x1f;
    const int mant = h & 0x3ff;
    if (exp == 0) return sign * std::ldexp(float(mant), -24);
    if (exp == 31) return mant ? std::numeric_limits<float>::quiet_NaN() : sign * std::numeric_limits<float>::infinity();
    return sign * std::ldexp(float(1024 + mant), exp - 25);
}

}  // namespace

uint16_t bf16_bits(float v) {
    uint32_t x;
    std::memcpy(&x, &v, 4);
    if (std::isnan(v)) return uint16_t((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return uint16_t(x >> 16);
}

float bf16_value(uint16_t bits) {
    const uint32_t x = uint32_t(bits) << 16;
    float v;
    std::memcpy(&v, &x, 4);
    return v;
}

int64_t HostTensor::elements() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
}

double HostTensor::at(int64_t i) const {
    switch (dtype) {
    case DType::F32: return data[size_t(i)];
    case DType::F16: return f16_value(load<uint16_t>(bytes, i));
    case DType::BF16: return bf16_value(load<uint16_t>(bytes, i));
    case DType::I8: return load<int8_t>(bytes, i);
    case DType::U8: return load<uint8_t>(bytes, i);
    case DType::I32: return load<int32_t>(bytes, i);
    case DType::I64: return double(load<int64_t>(bytes, i));
    }
    return 0;
}

void HostTensor::set(int64_t i, double v) {
    switch (dtype) {
    case DType::F32: data[size_t(i)] = float(v); return;
    case DType::F16: store(bytes, i, f16_bits(float(v))); return;
    case DType::BF16: store(bytes, i, bf16_bits(float(v))); return;
    case DType::I8: store(bytes, i, int8_t(wrapped(v, 8, true))); return;
    case DType::U8: store(bytes, i, uint8_t(wrapped(v, 8, false))); return;
    case DType::I32: store(bytes, i, int32_t(wrapped(v, 32, true))); return;
    case DType::I64: store(bytes, i, int64_t(wrapped(v, 64, true))); return;
    }
}

void *HostTensor::host() {
    return dtype == DType::F32 ? static_cast<void *>(data.data()) : static_cast<void *>(bytes.data());
}

const void *HostTensor::host() const {
    return dtype == DType::F32 ? static_cast<const void *>(data.data()) : static_cast<const void *>(bytes.data());
}

int64_t HostTensor::byte_size() const {
    return elements() * dtype_bytes(dtype);
}

HostTensor make_host_tensor(DType dtype, std::vector<int64_t> dims) {
    HostTensor t;
    t.dims = std::move(dims);
    t.dtype = dtype;
    if (dtype == DType::F32) {
        t.data.assign(size_t(t.elements()), 0.0f);
    } else {
        t.bytes.assign(size_t(t.byte_size()), 0);
    }
    return t;
}

void poison(HostTensor &t) {
    if (t.dtype == DType::F32) {
        std::fill(t.data.begin(), t.data.end(), std::numeric_limits<float>::quiet_NaN());
        return;
    }
    if (!dtype_is_integer(t.dtype)) {
        for (int64_t i = 0; i < t.elements(); i++) t.set(i, std::numeric_limits<double>::quiet_NaN());
        return;
    }
    std::fill(t.bytes.begin(), t.bytes.end(), uint8_t(0xA5));
}

}  // namespace opgen
