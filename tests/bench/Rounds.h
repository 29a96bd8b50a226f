// Checking and timing the contenders of one problem, by the design's measurement rules: every
// contender's output is first checked against opgen's reference (check_output on the problem's
// reference sample, the output poisoned with NaN beforehand); a wrong or failing contender is
// reported as such and never timed. The rest are timed interleaved, round by round (A B C ... then
// A B C ... again), each turn a warm-up call and then calls until `min_turn_ms` has passed, so
// that a drifting clock touches every contender alike. A contender's figure is the median over
// rounds of each turn's median call, with the fastest and slowest turn as its spread.
#ifndef OPGEN_BENCH_ROUNDS_H
#define OPGEN_BENCH_ROUNDS_H

#include "tests/bench/Contender.h"

#include <functional>
#include <string>
#include <vector>

namespace opgen::bench {

struct RoundOptions {
    int rounds = 5;
    double min_turn_ms = 100; // timed calls per turn last at least this long (at least one call)
    int max_calls = 2000;     // per turn
    // A contender whose timed calls have used this much in total sits out the remaining rounds
    // (the naive loop at 2048³): its figure then rests on fewer rounds, which the report shows.
    double max_total_s = 30;
    double tolerance = 1e-3; // of check_output
};

// Checks, then times, every entrant whose status is "ok"; the others pass through with their
// status. Results come back in the entrants' order.
std::vector<ContenderResult> run_rounds(const Problem &p, std::vector<Entrant> &entrants,
                                        const RoundOptions &o,
                                        const std::function<void(const std::string &)> &log = {});

} // namespace opgen::bench

#endif
