// A run-time dispatcher over the schedule variants of one kernel (docs/design.md §7.6: several
// pipeline arrangements compiled ahead, each balanced for a level of memory-bandwidth contention,
// switched at run time from a measured ratio, with two thresholds and a time window).
//
// The dispatcher holds the variants of one cache key in order of the contention level they were
// tuned for (index 0: the quiet machine). Every call runs the current variant and times it; the
// ratio of the observed time to the time that variant was measured at under its own design level
// estimates whether contention is now heavier (ratio >= up_ratio) or lighter (ratio < down_ratio)
// than the variant was built for. When one condition holds on every call for at least `window_s`
// seconds and `min_calls` calls (the time window), the next call uses the neighbouring variant: one
// step up or down.
// Decisions are taken only after a call has returned, so a call never changes variant midway.
//
// runtime/ knows nothing of Halide's compiler: a variant is a callable. The clock is injectable so that the
// switching logic can be tested with a simulated clock. Not thread-safe: one caller at a time.
#ifndef OPGEN_RUNTIME_DISPATCHER_H
#define OPGEN_RUNTIME_DISPATCHER_H

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace opgen::db {

struct DispatchVariant {
    std::string name;         // e.g. "quiet", "contention-1"
    double level = 0;         // the contention level it was tuned under (0: none)
    double expected_ms = 0;   // its time per call under that level; must be positive
    std::function<void()> run;
};

struct DispatchPolicy {
    double up_ratio = 1.25;    // observed/expected at or above this: contention heavier (a)
    double down_ratio = 0.85;  // observed/expected below this: contention lighter (b)
    double window_s = 0.05;    // a condition must hold this long before a switch
    int min_calls = 3;         // ... and for at least this many calls
};

// One switch, logged when it happens.
struct DispatchDecision {
    int64_t call = 0;      // the call after which it was taken (1-based)
    double at_s = 0;       // clock time of the decision
    int from = 0;
    int to = 0;
    double ratio = 0;      // observed/expected of the last call
    int calls_held = 0;    // calls the condition held for
    double held_s = 0;     // seconds the condition held for
    std::string reason;    // "contention heavier" or "contention lighter"
};

// A clock in seconds, monotonic.
using DispatchClock = std::function<double()>;
DispatchClock steady_dispatch_clock();

class Dispatcher {
public:
    // Raises std::invalid_argument for no variants, a variant with no callable or a non-positive
    // expected time, or a policy with down_ratio >= up_ratio, a negative window or min_calls < 1.
    Dispatcher(std::vector<DispatchVariant> variants, DispatchPolicy policy = {},
               DispatchClock clock = steady_dispatch_clock());

    // Runs the current variant once, times it, and then decides whether the next call uses a
    // neighbouring variant. Returns the index of the variant that ran. Exceptions of the callable
    // propagate; such a call is not counted.
    int call();

    // Feeds the outcome of one call timed elsewhere (start and end on this dispatcher's clock);
    // call() uses it. Exposed for callers that run the variant themselves.
    void observe(double start_s, double end_s);

    int current() const { return current_; }
    const DispatchVariant &variant(int i) const { return variants_.at(static_cast<size_t>(i)); }
    int size() const { return static_cast<int>(variants_.size()); }
    int64_t calls() const { return calls_; }
    double last_ratio() const { return last_ratio_; }
    const std::vector<DispatchDecision> &decisions() const { return decisions_; }
    // Called with every decision as it is taken (e.g. to print it); may be empty.
    void set_log(std::function<void(const DispatchDecision &)> log) { log_ = std::move(log); }

private:
    std::vector<DispatchVariant> variants_;
    DispatchPolicy policy_;
    DispatchClock clock_;
    std::function<void(const DispatchDecision &)> log_;
    int current_ = 0;
    int64_t calls_ = 0;
    double last_ratio_ = 0;
    int pending_ = 0;           // +1 heavier, -1 lighter, 0 none
    double pending_since_ = 0;  // start time of the first call of the pending streak
    int pending_calls_ = 0;
    std::vector<DispatchDecision> decisions_;
};

// One line describing a decision, for logs:
// "call 12 at 0.250 s: quiet -> contention-1 (ratio 1.42, contention heavier for 5 calls, 0.061 s)".
std::string describe(const Dispatcher &dispatcher, const DispatchDecision &decision);

}  // namespace opgen::db

#endif
