#include "tests/bench/Threads.h"

#include "base/Error.h"

#include <Halide.h>
#include <cblas.h>
#include <omp.h>

namespace opgen::bench {

namespace {

int halide_threads_set = 0;

// A function of the JIT shared runtime, which exists only once some pipeline has been
// JIT-compiled; compiling a trivial one first makes sure it does.
void *runtime_symbol(const char *name) {
    static bool compiled = false;
    if (!compiled) {
        Halide::Func f("opgen_bench_runtime_probe");
        Halide::Var x("x");
        f(x) = x;
        f.compile_jit(Halide::get_jit_target_from_environment());
        compiled = true;
    }
    for (const auto &m : Halide::Internal::JITSharedRuntime::get(
             nullptr, Halide::get_jit_target_from_environment(), false)) {
        Halide::Internal::JITModule::Symbol s = m.find_symbol_by_name(name);
        if (s.address)
            return s.address;
    }
    throw InternalError(std::string("Halide's JIT runtime exports no ") + name);
}

} // namespace

void set_threads(int n) {
    internal_check(n >= 1) << "thread count " << n << " must be positive";
    static auto shutdown =
        reinterpret_cast<void (*)()>(runtime_symbol("halide_shutdown_thread_pool"));
    static auto set_num = reinterpret_cast<int (*)(int)>(runtime_symbol("halide_set_num_threads"));
    if (n != halide_threads_set) {
        shutdown();
        set_num(n);
    }
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

} // namespace opgen::bench
