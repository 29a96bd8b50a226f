// The online lookup of the kernel cache (library opgen_cache): "which kernel for this op at this
// shape on this target?", answered in microseconds by an inference runtime.
//
// An answer is one of:
//   Exact      the tuned winner of exactly this shape, always preferred;
//   Derived    the winner of one of the nearest tuned shapes of the same op, dtype and target,
//              its schedule re-fitted to the new shape's loop extents (refit_schedule);
//   Predicted  the cost model's pick over the new shape's legal space;
//   Generic    shape-generic code of the op (GenericKernels.h), compiled once from a tuned shape's
//              schedule with symbolic sizes and checked against the reference when built; the
//              only answer besides Exact that needs no extension;
//   None       nothing could be said (the reason is given).
// Without an exact kernel, measured evidence decides first: where `opgen db compile --generic`
// timed the generic kernels at the op's tuned shapes, the generic kernel whose measured ratio over
// a full tune, estimated from the tuned shapes nearest to the request, is lowest answers when
// that ratio is at most 2.0 (no model is asked; set_measured_good_enough changes it). Otherwise the candidates (the 4 nearest tuned
// shapes' refits, the model's pick, every generic kernel that serves the shape) are ranked by the
// extension's cost model (LookupExtension::rank) and the best answers, the best measured generic
// kernel standing for the generic ones; without a ranking, the nearest refit, else the model's
// pick, else the generic kernel from the nearest tuned shape. A generic kernel whose register
// tile is wider than the shape's loop extent on its axis (known from the extension's resolve)
// is not a candidate, nor served by kernel(), while one that fits serves the shape. Derived and Predicted
// answers are schedules that need compiling (LookupAnswer::needs_compile); kernel() meanwhile
// serves the best-ranked generic kernel. Every answer says which it is. Every query filters by
// target: a winner tuned on one target is never the answer on another.
//
// runtime/ knows nothing of Halide's compiler or of op definitions. What needs them, the loop extents of a shape
// (for Derived) and the legal space and cost model (for Predicted), comes from a LookupExtension
// attached at run time; the tuner provides one (tuner/Predict.h, library opgen_cache_predict).
// Without an extension only Exact answers are given, with the shape canonicalised by sorting its
// names.
//
// An Exact answer whose kernel has compiled code in the cache (KernelCode.h), or else a shape that
// generic code serves (the generic kernel the extension ranks fastest, or without one the one
// from the nearest tuned shape; the best measured one first), can also be had as a callable kernel, kernel()
// (LoadedKernel::generic() says which): loaded into executable memory after the checks of CodeLoader.h, with
// no compiler in the process. The loaded kernel is kept by the lookup, so asking again loads
// nothing; it stays callable as long as the caller holds its shared_ptr, even after the lookup is
// destroyed. Calls of one loaded kernel may run on several threads at once.
#ifndef OPGEN_RUNTIME_LOOKUP_H
#define OPGEN_RUNTIME_LOOKUP_H

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/CodeLoader.h"
#include "runtime/CodeTrust.h"
#include "store/KernelCache.h"

namespace opgen::db {

enum class AnswerKind { None, Exact, Derived, Predicted, Generic };

// "none", "exact", "derived", "predicted", "generic".
const char *answer_kind_name(AnswerKind kind);

struct LookupRequest {
    std::string op_name;
    std::string shape;  // "M=512,N=512,K=512", names in any order
    std::string target; // the cache's target key, e.g. "host-x86-64-avx512:t2"; required
    std::string dtype = "f32";
    // Optional filters; empty matches any. Among several matching rows the fastest answers.
    std::string op_hash;
    std::string halide_version;
    std::string tuner_version;
};

// One candidate the lookup ranked for a shape with no exact kernel (LookupAnswer::ranked).
struct RankedCandidate {
    AnswerKind kind = AnswerKind::None;  // Derived, Predicted or Generic
    std::string from_shape;              // Derived, Generic: the tuned shape the schedule came from
    std::string schedule_json;           // Derived: re-fitted; Generic: the source's, as it runs
    double score = 0;                    // the cost model's score at the shape; higher is faster
                                         // (NaN when the model was not asked)
    // Generic: its ratio over a full tune estimated from its timings at the nearest tuned shapes
    // (`opgen db compile --generic`); NaN when none.
    double measured_ratio = 0;
};

struct LookupAnswer {
    AnswerKind kind = AnswerKind::None;
    // Exact: the cached row. Derived: the neighbour's row with key.shape set to the requested
    // shape, schedule_json re-fitted, schedule_source empty and the neighbour's time_ms/gflops
    // kept as a hint. Predicted: key and schedule_json only; time_ms is the model's estimate (NaN
    // when it has none).
    KernelRecord kernel;
    std::string from_shape; // Derived: the tuned shape the schedule came from
    double distance = 0;    // Derived: the log-distance between the shapes
    std::string reason;     // None: why there is no answer; otherwise empty
    // Derived and Predicted answers are schedules: they must be compiled before they run, which
    // the runtime's hot path cannot do. Exact and Generic answers need no compiler (kernel()
    // returns them at once when the cache holds their code); a Derived or Predicted answer
    // sets this, and kernel() meanwhile serves the best-ranked generic kernel.
    bool needs_compile = false;
    // With an extension that ranks (LookupExtension::rank), every candidate ranked, best first:
    // the neighbours' refits, the model's pick and the generic kernels that serve the shape. The
    // answer is the first. Empty for Exact answers and when nothing ranked them.
    std::vector<RankedCandidate> ranked;
};

// The loop extents of an op at one shape, and the shape's canonical text (every parameter and
// attribute, defaults filled in, names sorted), as the cache keys it.
struct ShapeInfo {
    std::string canonical;
    std::map<std::string, int64_t> extents; // loop variable -> extent
};

// Re-fits a schedule point (the JSON of opgen's SchedulePoint: axes innermost first with var, tile
// and reg; reduce with var and block; vector_width) to new loop extents, keeping the structure of
// the tuner's legal space: register tiles at most the extent (whole vectors on the innermost
// axis), cache tiles a power-of-two multiple of the register tile or the whole extent, reduction
// blocks a multiple of 16 dividing the extent or the whole extent. Tiles never grow beyond the
// neighbour's, so a point that fitted the buffers still fits. Returns nullopt when the JSON is not
// such a point or names a variable missing from `extents`.
std::optional<std::string> refit_schedule(const std::string &schedule_json,
                                          const std::map<std::string, int64_t> &extents);

// What the lookup needs to know about ops and models; implemented above db/. Calls come from the
// lookup's own lock, one at a time.
class LookupExtension {
public:
    virtual ~LookupExtension() = default;
    // The canonical shape and loop extents of `op_name` at `shape`, or nullopt when the op is
    // unknown here or the shape does not bind (then no Derived or Predicted answer is given). The
    // lookup remembers the answer per (op, shape text) until the extension is replaced.
    virtual std::optional<ShapeInfo> resolve(const std::string &op_name, const std::string &shape) = 0;
    // The model's pick for the request; `answer.kernel.schedule_json` must be filled. nullopt when
    // it cannot predict (unknown target, empty space).
    virtual std::optional<LookupAnswer> predict(const LookupRequest &request,
                                                const ShapeInfo &shape) = 0;
    // The neighbour's schedule fitted to `shape` for `request`'s target; nullopt when it cannot
    // be. The default re-fits the JSON by refit_schedule's generic rules; an extension that knows
    // the legal space makes the answer one of its points.
    virtual std::optional<std::string> refit(const LookupRequest &request,
                                             const std::string &schedule_json,
                                             const ShapeInfo &shape) {
        (void)request;
        return refit_schedule(schedule_json, shape.extents);
    }
    // The cost model's scores of `schedules` (schedule points of the request's op, as JSON) each
    // run at `shape` as it stands, in order; higher is faster, comparable only among one call's
    // schedules. A schedule is not re-fitted first: a generic kernel runs its source shape's
    // factors at every shape. One that cannot be read or scored gets -infinity. Empty when this
    // extension cannot rank for the request (another target, an unknown op); the lookup then
    // falls back to shape distance. Called once per shape (the lookup remembers its choices), on
    // features computed from the schedule and the shape alone: microseconds per schedule.
    virtual std::vector<double> rank(const LookupRequest &request, const ShapeInfo &shape,
                                     const std::vector<std::string> &schedules) {
        (void)request;
        (void)shape;
        (void)schedules;
        return {};
    }
};

class KernelLookup {
public:
    virtual ~KernelLookup() = default;
    // The best answer for the request (see the top of this file). Raises DbError when the file
    // fails under it (corrupt, removed); a request without op, shape or target gives None.
    // Derived and predicted answers are remembered per request until the file changes, so a shape
    // asked for again is answered at exact-lookup speed.
    virtual LookupAnswer find(const LookupRequest &request) = 0;
    // The callable kernel of the Exact answer for the request (the fastest row of exactly this
    // shape), loaded on first use and kept; when there is none or it has no code compiled from
    // its schedule (`opgen db compile` fills it), the generic kernel that serves the shape, bound
    // to it (`opgen db compile --generic`). nullptr, with both reasons in `why` when given, when
    // neither exists. Raises DbError when the code is refused (truncated, digest mismatch, another
    // format, ABI or target, a CPU feature this host lacks) or cannot be loaded, or the file
    // fails; refused code is never executed. A faster winner committed by another process is
    // served from at most 10 ms after this lookup last looked (it looks at most that often).
    virtual std::shared_ptr<const LoadedKernel> kernel(const LookupRequest &request,
                                                       std::string *why = nullptr) = 0;
    // Only the Exact step of find().
    virtual std::optional<KernelRecord> exact(const LookupRequest &request) = 0;
    // Attaches (or, with nullptr, detaches) the extension used for Derived and Predicted answers.
    virtual void set_extension(std::shared_ptr<LookupExtension> extension) = 0;
    // The estimated ratio over a full tune at or below which the best measured generic kernel
    // answers at once (see the top of this file; kMeasuredGoodEnough by default). 0 never lets a
    // measurement decide (the model ranks every candidate), as a benchmark needs to compare the
    // two; a negative or NaN ratio raises std::invalid_argument. Forgets remembered answers.
    virtual void set_measured_good_enough(double ratio) = 0;
    virtual std::string path() const = 0;
    // How many times kernel() refused code since the lookup was opened: code no trusted key
    // signed for its row (CodeTrust.h), or that failed a check of CodeLoader.h. An application
    // watches it to see that a file it was given holds code it will not run.
    virtual int64_t refused_code() = 0;
};

// Opens the cache at `path` read-only for lookups; kernel() runs only code that `trust` lets run
// (CodeTrust.h). Raises DbError as open_kernel_cache does in ReadOnly mode (missing, not a
// database, corrupt, older or newer schema). Thread-safe: calls on one lookup are serialised by a
// lock.
std::unique_ptr<KernelLookup> open_kernel_lookup(const std::string &path, const TrustPolicy &trust);
// The same with the environment's policy (trust_from_environment: OPGEN_TRUST_FILE,
// OPGEN_TRUST_UNSIGNED); without either, no code runs. Raises KeyFileError for a bad trust file.
std::unique_ptr<KernelLookup> open_kernel_lookup(const std::string &path);

// "N=1,M=2" with names sorted; nullopt when the text is not NAME=INT pairs (unique names).
std::optional<std::string> sorted_shape(const std::string &shape);


} // namespace opgen::db

#endif
