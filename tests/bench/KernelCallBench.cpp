// Benchmark of kernels straight from the cache (scripts/kernel-bench.sh). Links opgen_cache alone.
//
//   opgen_kernel_bench first --db FILE --target T --op OP --shape S [--runs N]
//       Starts N fresh processes (this program, mode `child`); each times, from before
//       opgen_cache_open to the end of the first call, opening the cache, finding the kernel,
//       loading its code and calling it once. Prints p50/p99/max in milliseconds, and the p50 of
//       each step.
//   opgen_kernel_bench repeat --db FILE --target T --op OP --shape S [--calls N]
//       In one process, after a warm-up: N times the kernel alone (its entry point on prepared
//       halide_buffer_t's, as a caller holding the kernel would), and N times a lookup plus a call
//       through the C API (opgen_cache_kernel_find + opgen_cache_kernel_call), interleaved.
//       The overhead of one lookup + call is its time minus the kernel alone's median; prints its
//       p50/p99, the paired overhead's (each lookup + call minus the kernel-alone call just before
//       it, so the kernel's own jitter between rounds does not count) and the lookup alone's, in
//       microseconds. A tiny shape (matmul 4x4x4) shows the overhead with the least kernel jitter.
#include "runtime/CodeLoader.h"
#include "runtime/Lookup.h"
#include "runtime/opgen_cache.h"

#include <HalideRuntime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    size_t i = std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5));
    return v[i];
}

struct Args {
    std::string mode, db, target, op, shape;
    int runs = 30;
    int calls = 100000;
};

Args parse(int argc, char **argv) {
    Args a;
    if (argc < 2) {
        std::fprintf(stderr, "usage: opgen_kernel_bench first|repeat|child --db F --target T --op OP --shape S\n");
        std::exit(2);
    }
    a.mode = argv[1];
    for (int i = 2; i + 1 < argc; i += 2) {
        std::string k = argv[i], v = argv[i + 1];
        if (k == "--db") a.db = v;
        else if (k == "--target") a.target = v;
        else if (k == "--op") a.op = v;
        else if (k == "--shape") a.shape = v;
        else if (k == "--runs") a.runs = std::atoi(v.c_str());
        else if (k == "--calls") a.calls = std::atoi(v.c_str());
        else {
            std::fprintf(stderr, "error: unknown argument '%s'\n", k.c_str());
            std::exit(2);
        }
    }
    return a;
}

// Inputs and output of a kernel, one float vector per argument, sized from its signature.
std::vector<std::vector<float>> tensors_of(const opgen_cache_kernel *k) {
    std::vector<std::vector<float>> t;
    for (int i = 0; i < opgen_cache_kernel_arguments(k); i++) {
        long long dims[16];
        int n = opgen_cache_kernel_argument_dims(k, i, dims, 16);
        long long count = 1;
        for (int d = 0; d < n; d++) count *= dims[d];
        t.emplace_back(size_t(count), 0.5f);
    }
    return t;
}

const opgen_cache_kernel *find_or_die(opgen_cache *c, const Args &a) {
    const opgen_cache_kernel *k = nullptr;
    if (opgen_cache_kernel_find(c, a.op.c_str(), a.shape.c_str(), nullptr, a.target.c_str(), &k) != 0) {
        std::fprintf(stderr, "error: %s\n", opgen_cache_error(c));
        std::exit(1);
    }
    return k;
}

opgen_cache *open_or_die(const Args &a) {
    opgen_cache *c = nullptr;
    char *error = nullptr;
    if (opgen_cache_open(a.db.c_str(), &c, &error) != 0) {
        std::fprintf(stderr, "error: %s\n", error);
        std::exit(1);
    }
    return c;
}

// One fresh process's first call; prints its time in microseconds.
int child(const Args &a) {
    auto t0 = Clock::now();
    opgen_cache *c = open_or_die(a);
    double open_us = us_since(t0);
    const opgen_cache_kernel *k = find_or_die(c, a);
    double find_us = us_since(t0);
    std::vector<std::vector<float>> t = tensors_of(k);
    std::vector<void *> p;
    for (auto &v : t) p.push_back(v.data());
    double tensors_us = us_since(t0);
    int rc = opgen_cache_kernel_call(k, p.data(), int(p.size()));
    double us = us_since(t0);
    // The total, then where it went: open, find (with the code's load), the tensors, the call.
    std::printf("%.1f %.1f %.1f %.1f %.1f\n", us, open_us, find_us - open_us, tensors_us - find_us, us - tensors_us);
    opgen_cache_close(c);
    return rc == 0 ? 0 : 1;
}

int first(const Args &a, const char *self) {
    std::vector<double> ms;
    std::vector<std::vector<double>> phases(4);
    for (int r = 0; r < a.runs; r++) {
        std::string cmd = std::string("'") + self + "' child --db '" + a.db + "' --target '" + a.target +
                          "' --op '" + a.op + "' --shape '" + a.shape + "'";
        FILE *f = ::popen(cmd.c_str(), "r");
        double us = -1, phase[4];
        if (!f || std::fscanf(f, "%lf %lf %lf %lf %lf", &us, &phase[0], &phase[1], &phase[2], &phase[3]) != 5 ||
            ::pclose(f) != 0) {
            std::fprintf(stderr, "error: run %d of '%s' failed\n", r, cmd.c_str());
            return 1;
        }
        ms.push_back(us / 1000);
        for (int i = 0; i < 4; i++) phases[size_t(i)].push_back(phase[i] / 1000);
    }
    std::printf("first call in a fresh process (open + find + load + call), %s %s, %d processes: "
                "p50 %.3f ms, p99 %.3f ms, max %.3f ms\n",
                a.op.c_str(), a.shape.c_str(), a.runs, percentile(ms, 0.5), percentile(ms, 0.99),
                *std::max_element(ms.begin(), ms.end()));
    std::printf("  p50 by step: open %.3f ms, find (code loaded) %.3f ms, tensors %.3f ms, call %.3f ms\n",
                percentile(phases[0], 0.5), percentile(phases[1], 0.5), percentile(phases[2], 0.5),
                percentile(phases[3], 0.5));
    return 0;
}

int repeat(const Args &a) {
    opgen_cache *c = open_or_die(a);
    const opgen_cache_kernel *k = find_or_die(c, a);
    std::vector<std::vector<float>> t = tensors_of(k);
    std::vector<void *> p;
    for (auto &v : t) p.push_back(v.data());
    // The kernel alone: what a caller that holds the kernel and its buffers pays.
    opgen::db::LookupRequest request;
    request.op_name = a.op;
    request.shape = a.shape;
    request.target = a.target;
    std::shared_ptr<const opgen::db::LoadedKernel> held = opgen::db::open_kernel_lookup(a.db)->kernel(request);
    std::vector<halide_dimension_t> dims;
    std::vector<halide_buffer_t> buffers(t.size());
    std::vector<halide_buffer_t *> bp;
    for (size_t i = 0; i < t.size(); i++) dims.resize(dims.size() + held->arguments()[i].dims.size());
    halide_dimension_t *next = dims.data();
    for (size_t i = 0; i < t.size(); i++) {
        const auto &shape = held->arguments()[i].dims;
        buffers[i] = halide_buffer_t{};
        buffers[i].host = reinterpret_cast<uint8_t *>(t[i].data());
        buffers[i].type = halide_type_t(halide_type_float, 32, 1);
        buffers[i].dimensions = int(shape.size());
        buffers[i].dim = next;
        int stride = 1;
        for (size_t d = 0; d < shape.size(); d++) {
            next[d] = {0, int(shape[shape.size() - 1 - d]), stride, 0};
            stride *= int(shape[shape.size() - 1 - d]);
        }
        next += shape.size();
        bp.push_back(&buffers[i]);
    }
    for (int i = 0; i < 2000; i++) {  // warm-up: caches, the runtime's thread pool
        held->call(bp.data(), bp.size());
        opgen_cache_kernel_call(find_or_die(c, a), p.data(), int(p.size()));
    }
    std::vector<double> alone, both, lookup;
    for (int i = 0; i < a.calls; i++) {
        auto t0 = Clock::now();
        held->call(bp.data(), bp.size());
        auto t1 = Clock::now();
        const opgen_cache_kernel *found = find_or_die(c, a);
        auto t2 = Clock::now();
        int rc = opgen_cache_kernel_call(found, p.data(), int(p.size()));
        auto t3 = Clock::now();
        if (rc != 0) return 1;
        alone.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        lookup.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());
        both.push_back(std::chrono::duration<double, std::micro>(t3 - t1).count());
    }
    double kernel = percentile(alone, 0.5);
    std::vector<double> overhead, paired;
    for (size_t i = 0; i < both.size(); i++) {
        overhead.push_back(both[i] - kernel);
        paired.push_back(both[i] - alone[i]);
    }
    std::printf("repeated lookup + call, %s %s, %d calls: kernel alone p50 %.3f us (p99 %.3f); "
                "lookup + call p50 %.3f us, p99 %.3f us; overhead over the kernel alone p50 %.3f us, "
                "p99 %.3f us; paired overhead p50 %.3f us, p99 %.3f us; lookup alone p50 %.3f us, p99 %.3f us\n",
                a.op.c_str(), a.shape.c_str(), a.calls, kernel, percentile(alone, 0.99),
                percentile(both, 0.5), percentile(both, 0.99), percentile(overhead, 0.5),
                percentile(overhead, 0.99), percentile(paired, 0.5), percentile(paired, 0.99),
                percentile(lookup, 0.5), percentile(lookup, 0.99));
    opgen_cache_close(c);
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    Args a = parse(argc, argv);
    if (a.mode == "child") return child(a);
    if (a.mode == "first") return first(a, argv[0]);
    if (a.mode == "repeat") return repeat(a);
    std::fprintf(stderr, "error: unknown mode '%s'\n", a.mode.c_str());
    return 2;
}
