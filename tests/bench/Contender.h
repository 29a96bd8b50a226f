// One benchmark problem (an op bound to a shape, with its inputs and reference values) and the
// contenders that compute it: opgen's cached winner, oneDNN, OpenBLAS, Halide's autoschedulers and
// a naive loop. Every contender reads the problem's inputs and writes its own output tensor in the
// op's own layout (row-major, as the op file declares it), so one reference check serves them all.
#ifndef OPGEN_BENCH_CONTENDER_H
#define OPGEN_BENCH_CONTENDER_H

#include "core/ComputeDef.h"
#include "core/Reference.h"
#include "core/Shape.h"
#include "core/Target.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace opgen::bench {

struct Problem {
    std::string label; // "sgemm 256³"
    const ComputeDef *def = nullptr;
    BoundShape shape;
    Target target; // the host
    std::map<std::string, HostTensor> inputs;
    ReferenceSample reference;
    double flops = 0; // opgen's count for the op (a multiply-add is two)
    double bytes = 0; // every input read and the output written once

    // Seeded inputs and the reference sample (computed once, checked against every contender).
    Problem(std::string label, const ComputeDef &def, const BoundShape &shape, const Target &target,
            uint64_t seed = 1);
    // A zeroed tensor of the output's shape.
    HostTensor make_output() const;
    // The value of a shape parameter or attribute; InternalError when the op has none of that name.
    int64_t value(const std::string &name) const;
};

// A way of computing a problem, ready to run: compiled, with its buffers bound.
class Contender {
public:
    virtual ~Contender() = default;
    // One call on the problem's inputs. May throw (Halide::RuntimeError, dnnl::error).
    virtual void run() = 0;
    // Brings the result of the last run() into output(), in the op's layout; outside the timing.
    // Only a contender that computes in a layout of its own (oneDNN's blocked layout, counted
    // without the reorders) has anything to do here.
    virtual void sync_output() {}
    virtual HostTensor &output() = 0;
};

// A contender as the bench sees it: what it is, how it was made, and whether it can be timed.
struct Entrant {
    std::string name;   // column name: "opgen", "oneDNN", "OpenBLAS", "Adams2019", "naive", ...
    std::string family; // "opgen", "oneDNN", "OpenBLAS", "Halide autoscheduler", "naive"
    // "ok", or why it is not timed: "unsupported", "not_in_cache", "tune_failed", "compile_error",
    // "runtime_error", "wrong_result", "skipped".
    std::string status = "ok";
    std::string detail;            // schedule summary, layout, error message
    double setup_s = 0;            // making it: scheduling (autoschedulers) plus compiling
    double tune_s = 0;             // opgen only: tuning done in this run (0 when the cache had it)
    bool counts_as_onednn = false; // takes and returns the op's own layout (the ratio's anchor)
    std::unique_ptr<Contender> contender; // set while status is "ok"

    static Entrant failed(std::string name, std::string family, std::string status,
                          std::string detail);
};

// What the interleaved rounds measured for one entrant.
struct ContenderResult {
    std::string name, family, status, detail;
    double setup_s = 0, tune_s = 0;
    bool counts_as_onednn = false;
    double median_ms = 0; // median over rounds of each round's median call
    double min_ms = 0;    // fastest and slowest round
    double max_ms = 0;
    int rounds = 0;
    int calls = 0;
    double max_error = 0; // against the reference, relative to 1 + |want|

    bool ok() const { return status == "ok"; }
};

} // namespace opgen::bench

#endif
