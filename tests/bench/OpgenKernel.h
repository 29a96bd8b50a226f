// opgen's contender: the winner the kernel cache holds for the problem's op, shape, target and
// thread count, JIT-compiled in this process from its SchedulePoint with apply_schedule, which is
// the same schedule `opgen emit` compiles ahead of time into a static library (emit_kernel lowers
// and schedules the same way and then calls compile_to_static_library). When the cache lacks the
// key, the bench tunes it here with the tuner library and stores the winner, as `opgen tune` would.
#ifndef OPGEN_BENCH_OPGEN_KERNEL_H
#define OPGEN_BENCH_OPGEN_KERNEL_H

#include "tests/bench/Contender.h"

#include "store/KernelCache.h"
#include "core/Schedule.h"

#include <cstdint>

namespace opgen::bench {

struct OpgenOptions {
    bool tune_missing = true; // tune a key the cache lacks (else: status "not_in_cache")
    // Tune every key, cached or not; the cache keeps the faster of the old and new winners (a
    // winner tuned while another process held a core can be a serial schedule).
    bool retune = false;
    int trials = 32;          // candidates measured when tuning
    uint64_t seed = 1;
    bool verbose = false; // the tuner's progress lines on stderr
};

// The cache key of `opgen tune --threads <threads>` for this problem on the host
// (opgen::kernel_key, the one place keys are built).
db::KernelKey opgen_key(const Problem &p, int threads);

// The cached (or freshly tuned) winner for `threads` threads, compiled and bound. `cache` may be
// null (no cache file): then the entrant's status is "not_in_cache". Tuning failures come back as
// status "tune_failed"; a winner that no longer compiles as "compile_error".
Entrant make_opgen(const Problem &p, int threads, db::KernelCache *cache, const OpgenOptions &o);

// A given schedule point for the problem (a hand-picked point, `--points`), compiled and bound;
// named `name` in the report, family "opgen".
Entrant make_opgen_point(const Problem &p, const SchedulePoint &point, const std::string &name);

} // namespace opgen::bench

#endif
