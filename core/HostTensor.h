// A dense row-major tensor in host memory, of any element type of the op language: what the
// reference reads, the JIT kernels run on and the measurement checks. float32 tensors keep their
// elements in `data` (every caller that only knows f32 reads and writes it directly); every other
// type keeps them in its own width in `bytes`, so an i32 result is compared exactly and a u8 or
// bf16 input is passed to a kernel as the type it declares.
#ifndef OPGEN_CORE_HOST_TENSOR_H
#define OPGEN_CORE_HOST_TENSOR_H

#include "base/DType.h"

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

namespace opgen {

// Allocates on 64-byte boundaries (a cache line, and the widest vector a kernel loads), so that no
// vector load of a tensor's row splits two lines: malloc's 16-byte alignment made every 64-byte
// load of an int8 matmul's packed B do so, and cost its kernel about a fifth of its speed.
template <typename T>
struct CacheLineAllocator {
    using value_type = T;
    CacheLineAllocator() = default;
    template <typename U>
    CacheLineAllocator(const CacheLineAllocator<U> &) {}
    T *allocate(std::size_t n) { return static_cast<T *>(::operator new(n * sizeof(T), std::align_val_t(64))); }
    void deallocate(T *p, std::size_t) { ::operator delete(p, std::align_val_t(64)); }
    bool operator==(const CacheLineAllocator &) const { return true; }
    bool operator!=(const CacheLineAllocator &) const { return false; }
};

struct HostTensor {
    std::vector<int64_t> dims;     // outermost first
    std::vector<float> data;       // the elements of an f32 tensor
    DType dtype = DType::F32;
    // The elements of a tensor of any other type, in its own width, from a cache-line boundary.
    std::vector<uint8_t, CacheLineAllocator<uint8_t>> bytes{};

    int64_t elements() const;
    // Element `i` (row-major offset) as a double: exact for every type.
    double at(int64_t i) const;
    // Stores `v` as element `i`, converted to the tensor's type as Halide's cast would (floats
    // round to nearest even, integers wrap); `v` is expected in range for an integer type.
    void set(int64_t i, double v);
    // The first element's address, whichever storage holds it.
    void *host();
    const void *host() const;
    int64_t byte_size() const;
};

// A zero-filled tensor of `dtype` and `dims`.
HostTensor make_host_tensor(DType dtype, std::vector<int64_t> dims);

// Fills `t` with a value no correct kernel writes by chance: NaN for floats, 0xA5 bytes for integers
// (an i32 of -1515870811), so a kernel that skips points cannot pass on stale values.
void poison(HostTensor &t);

// bfloat16 conversions: round to nearest even (NaN kept NaN), and the exact widening back.
uint16_t bf16_bits(float v);
float bf16_value(uint16_t bits);

}  // namespace opgen

#endif
