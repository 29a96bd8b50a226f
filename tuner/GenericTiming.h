// Timing shape-generic kernels where the truth is known (`opgen db compile --generic`,
// docs/design.md §2.9): every generic kernel of an op runs at each tuned shape of that op, in turns
// with the shape's tuned kernel, and the median ratio is stored (db::GenericTimingRecord). The
// lookup then ranks the generic kernels that serve a never-tuned shape by their measured ratios at
// the tuned shapes nearest to it, instead of by a cost model asked about schedules far from its
// training data.
//
// Both kernels run as the cache stores them: the stored-code timer (`opgen-code-timer`,
// tuner/StoredCodeTimer.h), a process of its own with the Halide runtime and no compiler, loads
// each through the lookup library's loader, checks the generic output against the tuned kernel's
// before its time counts (a wrong result is reported and never stored), and times them. A tuned
// kernel without stored code cannot be timed against (run `opgen db compile` first). Only keys
// whose thread count (":tN" of the target key) is the one this process runs kernels at
// (HL_NUM_THREADS, else every core; the timer inherits it) are timed: a ratio taken at another
// thread count would describe another machine.
#ifndef OPGEN_TUNER_GENERIC_TIMING_H
#define OPGEN_TUNER_GENERIC_TIMING_H

#include "store/KernelCache.h"
#include "core/OpLibrary.h"
#include "core/Target.h"
#include "codegen/CodeStore.h"

#include <functional>
#include <string>
#include <vector>

namespace opgen::tuner {

// Times, for the ops named (all of the library's when empty), every generic kernel of `target`
// at every tuned shape of its op with the same key (target key, op hash, dtype, versions) that
// has no timing of that generic code yet, and stores the ratios (KernelCache::
// put_generic_timings), one op at a time. `compiled` counts the timings stored; a pair that cannot
// be timed (code missing or refused, a failed call, a wrong result) counts in `failed` with the
// reason, and nothing of it is stored. `min_ms`: the least time the generic kernel's calls add up
// to per timing. `log` gets one line per generic kernel. The timer runs only code signed by a key
// of its environment's trust (runtime/CodeTrust.h) or of `trusted_keys` ("ed25519:<hex>" each).
// Raises UserError when the timer cannot be started or fails as a whole.
CodeFillReport time_generic_code(db::KernelCache &cache, const OpLibrary &library, const Target &target,
                                 const std::vector<std::string> &ops,
                                 const std::vector<std::string> &trusted_keys, double min_ms = 30,
                                 const std::function<void(const std::string &)> &log = {});

// The thread count of a target key ("x86-64-avx512:t4" gives 4), 0 when it names none.
int key_threads(const std::string &target_key);

}  // namespace opgen::tuner

#endif
