// The stored-code timer, `opgen-code-timer JOB` (tuner/StoredTimingJob.h): times a cache's generic
// kernels against its tuned kernels as the cache stores them, each loaded by the lookup library's
// loader (runtime/CodeLoader.h: digest, target and CPU features checked) into this process, which
// carries the Halide runtime (as opgen_cache does) and no compiler. So the ratios the lookup ranks
// by describe the code a runtime calls, compiled with the options it was built with (generic code
// without LLVM's SLP vectorizer, codegen/GenericBuild.h), not a JIT compile of the same schedule in
// the compiling process: on an Intel Xeon host a generic conv kernel timed 1.22x its exact twin
// JIT-compiled and 1.08x as stored.
//
// For each pair, both kernels run on the same seeded inputs and the generic output must match the
// tuned kernel's (each element within 1e-3 of it, relative to 1 + its size) before any time counts:
// the tuned code was compiled from a schedule checked against the reference, the generic code was
// checked when built, and two such different kernels agreeing is the check that both loaded
// right. Then single calls alternate as the tuner's paired timings do (tuner/PairedSteps.h) until
// the generic calls add up to min_ms, at least min_runs pairs; the ratio is the median of the
// per-pair ratios.
#ifndef OPGEN_TUNER_STORED_CODE_TIMER_H
#define OPGEN_TUNER_STORED_CODE_TIMER_H

#include <string>

namespace opgen::tuner {

// Runs the job in `job_file`, writing one result line per pair (StoredTimingResult as JSON) to the
// job's results file as each is taken. Returns 0 when it ran (a pair that could not be timed is a
// result with an error); 1, with one `error:` line on stderr, when the job or the cache cannot be
// read.
int run_stored_timing(const std::string &job_file);

}  // namespace opgen::tuner

#endif
