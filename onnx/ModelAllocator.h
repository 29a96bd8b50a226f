// The allocator a deployed model's kernels take their temporaries from (docs/design.md §3.5): C
// text compiled into the model's program (ModelProgram.h), installed by `<model>_load` through
// Halide's halide_set_custom_malloc and halide_set_custom_free. A kernel's temporaries (a packed
// panel, the accumulator of a blocked reduction) are freed at the end of each call, and the C
// library hands the larger ones back to the operating system (glibc unmaps a block over its mmap
// threshold and trims the heap's top): the next call then takes a page fault on every page of
// them, while the tuner timed the kernel in a loop that reused the same memory. Measured on an
// AMD Zen 5 KVM guest, ResNet-50 at 2 threads: 42.5 ms a run with the C library's allocator,
// 28.5 ms with its trimming and unmapping turned off (MALLOC_TRIM_THRESHOLD_ and
// MALLOC_MMAP_THRESHOLD_), a 56x56 3x3 conv 1.87 -> 0.68 ms.
// Freed blocks are kept by size instead, up to 64 blocks and 256 MiB (the longest-kept freed
// first to make room, so a model with dynamic dimensions does not hold the sizes of earlier
// values), and a request of the same size takes one back; the model's runs ask
// for the same sizes every time, so after the first run no kernel waits on a page fault.
// `<model>_release` frees them.
#ifndef OPGEN_ONNX_MODEL_ALLOCATOR_H
#define OPGEN_ONNX_MODEL_ALLOCATOR_H

#include <string>

namespace opgen::onnx_import {

// C source (C11, pthreads) defining, all `static`:
//   void *model_alloc(void *user_context, size_t bytes)  a halide_malloc_t: 64-byte aligned, with
//                                      64 bytes readable before and after the block, a kept block
//                                      of the same size when there is one, else a new one (NULL
//                                      when out of memory)
//   void model_alloc_free(void *user_context, void *p)    a halide_free_t: keeps the block, freeing
//                                      the longest-kept ones when the limits need room (a block
//                                      over 256 MiB is freed at once)
//   void model_alloc_install(void)     installs both as the Halide runtime's allocator
//   void model_alloc_release(void)     frees every kept block
// It expects <stdint.h>, <stdlib.h>, <string.h> and HalideRuntime.h included before it.
std::string allocator_source();

}  // namespace opgen::onnx_import

#endif
