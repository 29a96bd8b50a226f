// Benchmark of shape-generic kernels against full tunes (scripts/generic-bench.sh). Links
// opgen_cache alone: both kernels come out of caches as compiled code, and run the same way.
//
//   opgen_generic_bench --generic-db G --tuned-db T --target TGT --op OP --shape S
//                       [--rounds 7] [--min-ms 40]
//       G holds the op's generic code (and not S's kernel), T a full tune of exactly S with its
//       code. Checks that G answers with a generic kernel and T with an exact one, that their
//       outputs agree, then times them in interleaved rounds (per round: calls of one until
//       --min-ms have passed, then the other's) and prints the medians of the rounds' per-call
//       times and their ratio, generic over tuned.
#include "runtime/CodeLoader.h"
#include "runtime/Lookup.h"
#include "tests/bench/BenchArgs.h"
#include "tests/bench/KernelTiming.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Args : opgen::bench::ShapeBenchArgs {
    std::string generic_db;
};

Args parse(int argc, char **argv) {
    const opgen::bench::BenchArgs f(
        argc, argv, opgen::bench::shape_bench_names({"generic-db"}),
        "opgen_generic_bench --generic-db G --tuned-db T --target TGT --op OP --shape S [--rounds 7] [--min-ms 40]");
    Args a;
    a.generic_db = f.required("generic-db");
    opgen::bench::read_shape_bench_args(f, a);
    return a;
}

using opgen::bench::median;
using opgen::bench::time_calls;
using Tensors = opgen::bench::KernelTensors;

std::shared_ptr<const opgen::db::LoadedKernel> kernel_of(const std::string &db, const Args &a, bool generic) {
    auto lookup = opgen::db::open_kernel_lookup(db);
    opgen::db::LookupRequest r;
    r.op_name = a.op;
    r.shape = a.shape;
    r.target = a.target;
    std::string why;
    std::shared_ptr<const opgen::db::LoadedKernel> k = lookup->kernel(r, &why);
    if (!k || k->generic() != generic) {
        std::fprintf(stderr, "error: %s: no %s kernel for %s %s: %s\n", db.c_str(), generic ? "generic" : "exact",
                     a.op.c_str(), a.shape.c_str(), k ? "got the other kind" : why.c_str());
        std::exit(1);
    }
    return k;
}

}  // namespace

int main(int argc, char **argv) {
    Args a = parse(argc, argv);
    std::shared_ptr<const opgen::db::LoadedKernel> gen = kernel_of(a.generic_db, a, true);
    // The tuned cache keys the shape canonically (defaults included), as the generic binding says it.
    Args canonical = a;
    canonical.shape = gen->shape();
    std::shared_ptr<const opgen::db::LoadedKernel> tuned = kernel_of(a.tuned_db, canonical, false);
    Tensors tg(*gen), tt(*tuned);
    time_calls(*gen, tg, 1);
    time_calls(*tuned, tt, 1);
    double worst = opgen::tuner::worst_output_difference(tg, tt);
    if (!(worst < 1e-3)) {
        std::fprintf(stderr, "error: %s %s: generic and tuned outputs differ by %g\n", a.op.c_str(), a.shape.c_str(), worst);
        return 1;
    }
    std::vector<double> g, t;
    for (int r = 0; r < a.rounds; r++) {
        g.push_back(time_calls(*gen, tg, a.min_ms));
        t.push_back(time_calls(*tuned, tt, a.min_ms));
    }
    double mg = median(g), mt = median(t);
    std::printf("%-12s %-44s generic %9.4f ms  tuned %9.4f ms  ratio %.3f\n", a.op.c_str(), gen->shape().c_str(), mg, mt,
                mg / mt);
    return 0;
}
