// How many threads every contender may use, set in one place for all of them, so that the
// single-thread and all-thread columns come from the same process:
//   - Halide (opgen's kernels and the autoschedulers' pipelines, all JIT-compiled): the JIT shared
//     runtime's halide_shutdown_thread_pool and then halide_set_num_threads, both looked up in the
//     runtime module itself. HL_NUM_THREADS is read only once, and halide_set_num_threads alone
//     only bounds how many workers are created, never how many of those already created take
//     work, so the pool is shut down and rebuilt at the new size on the next parallel loop;
//   - oneDNN: Debian builds it on OpenMP (DNNL_CPU_THREADING_RUNTIME is OMP), so
//   omp_set_num_threads;
//   - OpenBLAS: openblas_set_num_threads (Debian's default is the pthread build).
// The naive loop is always serial.
#ifndef OPGEN_BENCH_THREADS_H
#define OPGEN_BENCH_THREADS_H

namespace opgen::bench {

// Sets the thread count of Halide's JIT runtime, OpenMP and OpenBLAS to `n` (>= 1). Raises
// InternalError when Halide's runtime does not export halide_set_num_threads.
void set_threads(int n);

// What each library reports back (Halide: the value set last; it has no getter).
struct ThreadCounts {
    int halide = 0;
    int openmp = 0;
    int openblas = 0;
};
ThreadCounts thread_counts();

} // namespace opgen::bench

#endif
