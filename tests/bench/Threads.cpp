#include "tests/bench/Threads.h"

#include "opgen/Error.h"

#include <Halide.h>
#include <cblas.h>
#include <omp.h>

namespace opgen::bench {

namespace {

int halide_threads_set = 0;

// halide_set_num_threads lives in the JIT shared runtime, which exists only once some pipeline has
// been JIT-compiled; compiling a trivial one first makes sure it does.
int (*halide_set_num_threads_fn())(int) {
    static int (*fn)(int) = nullptr;
    if (fn) return fn;
    Halide::Func f("opgen_bench_runtime_probe");
    Halide::Var x("x");
    f(x) = x;
    f.compile_jit(Halide::get_jit_target_from_environment());
    for (const auto &m : Halide::Internal::JITSharedRuntime::get(nullptr, Halide::get_jit_target_from_environment(), false)) {
        Halide::Internal::JITModule::Symbol s = m.find_symbol_by_name("halide_set_num_threads");
        if (s.address) {
            fn = reinterpret_cast<int (*)(int)>(s.address);
            break;
        }
    }
    internal_check(fn) << "Halide's JIT runtime exports no halide_set_num_threads";
    return fn;
}

}  // namespace

void set_threads(int n) {
    internal_check(n >= 1) << "thread count " << n << " must be positive";
    halide_set_num_threads_fn()(n);
    halide_threads_set = n;
    omp_set_num_threads(n);
    openblas_set_num_threads(n);
}

ThreadCounts thread_counts() {
    ThreadCounts c;
    c.halide = halide_threads_set;
    c.openmp = omp_get_max_threads();
    c.openblas = openblas_get_num_threads();
    return c;
}

}  // namespace opgen::bench
