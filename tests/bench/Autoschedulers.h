// Halide's own autoschedulers as contenders, on the very algorithm opgen schedules: the Funcs of
// lower_to_halide for the problem's op and shape, with estimates set from the shape on every input
// and on the output, scheduled by Pipeline::auto_schedule with Halide 14's plugin API
// (load_plugin of libautoschedule_<name>.so, then auto_schedule(name, target, MachineParams)).
// Scheduling can take tens of seconds (Adams2019 on a convolution); its time is part of the result.
// Adams2019's search is bounded (SearchProbe.h): on a blocked 14x14 convolution it grew past 22 GiB
// of this 24 GiB machine, which would end a whole-suite run (or another session's process) rather
// than one contender; a search over its bounds comes back as "out_of_bounds", stated in the report,
// and the row's other autoschedulers still count.
#ifndef OPGEN_BENCH_AUTOSCHEDULERS_H
#define OPGEN_BENCH_AUTOSCHEDULERS_H

#include "core/Lower.h"
#include "tests/bench/Contender.h"

#include <string>
#include <vector>

namespace opgen::bench {

struct AutoscheduleOptions {
    // Which autoschedulers, in this order: any of "Adams2019", "Mullapudi2016", "Li2018".
    std::vector<std::string> names = {"Adams2019", "Mullapudi2016", "Li2018"};
    // Adams2019's beam size (HL_BEAM_SIZE); 0 keeps Halide's default (32). 1 is a greedy search.
    int adams_beam = 0;
    // Problems above this many GFLOP are not given to Adams2019 (0: no limit); its search time
    // grows with the pipeline's loop extents.
    double adams_max_gflop = 0;
    // Bounds of Adams2019's search (SearchProbe.h): GiB of memory and seconds (0: unbounded).
    double search_memory_gib = 10;
    double search_seconds = 300;
    // The balance of MachineParams (Halide's generic value: 40).
    float balance = 40;
};

// The folder of the plugin libraries (libautoschedule_<name>.so).
std::string autoscheduler_plugin_dir();

// Sets the estimates of `op` (lowered from `def` at `shape`) and schedules it in place with the
// autoscheduler `name` for `threads` cores. Throws Halide::Error when the autoscheduler fails.
Halide::AutoSchedulerResults search_schedule(LoweredOp &op, const ComputeDef &def,
                                             const BoundShape &shape, const Target &target,
                                             int threads, const std::string &name, float balance);

// One entrant per autoscheduler of `o`, scheduled for `threads` cores (MachineParams parallelism)
// and the host's last-level cache, then JIT-compiled for the host. A scheduler that fails comes
// back with status "compile_error" and Halide's message; one not run with status "skipped"; one
// whose search went over its bounds with status "out_of_bounds".
std::vector<Entrant> make_autoscheduled(const Problem &p, int threads,
                                        const AutoscheduleOptions &o);

} // namespace opgen::bench

#endif
