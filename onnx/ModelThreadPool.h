// The thread pool a deployed model's kernels run their parallel loops on (docs/design.md §3.5): C
// text compiled into the model's program (ModelProgram.h), installed by `<model>_set_threads(N)`
// through Halide's halide_set_custom_do_par_for. N - 1 workers take a loop's iterations beside the
// calling thread and, after a loop, spin for a while (200 us by default) before they sleep, so the
// next kernel's loop finds them awake: Halide's own pool sleeps an idle worker after a few dozen
// yields, and a model of ~50 kernels paid a wake-up for each.
// Loops nested inside a task run serially on the thread that reached them (every worker is busy
// then). The environment variable OPGEN_SPIN_US sets the spin in microseconds at
// `<model>_set_threads`; 0 keeps Halide's own pool (for comparisons).
#ifndef OPGEN_ONNX_MODEL_THREAD_POOL_H
#define OPGEN_ONNX_MODEL_THREAD_POOL_H

#include <string>

namespace opgen::onnx_import {

// C source (C11, pthreads) defining, all `static`:
//   int model_pool_start(int threads)  workers for `threads` threads in all, the caller being one,
//                                      installed as Halide's do_par_for; threads <= 1, a spin of
//                                      0 or no worker created restore Halide's; returns the workers.
//   int model_pool_do_par_for(...)     the halide_do_par_for_t it installs: every index of
//                                      [min, min + size) runs once; returns the first non-zero
//                                      task status seen, after which no further index starts.
// It expects HalideRuntime.h, <stdint.h>, <stdlib.h> and <time.h> included before it.
std::string thread_pool_source();

}  // namespace opgen::onnx_import

#endif
