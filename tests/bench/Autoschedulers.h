// Halide's own autoschedulers as contenders, on the very algorithm opgen schedules: the Funcs of
// lower_to_halide for the problem's op and shape, with estimates set from the shape on every input
// and on the output, scheduled by Pipeline::auto_schedule with Halide 14's plugin API
// (load_plugin of libautoschedule_<name>.so, then auto_schedule(name, target, MachineParams)).
// Scheduling can take tens of seconds (Adams2019 on a convolution); its time is part of the result.
#ifndef OPGEN_BENCH_AUTOSCHEDULERS_H
#define OPGEN_BENCH_AUTOSCHEDULERS_H

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
    // The balance of MachineParams (Halide's generic value: 40).
    float balance = 40;
};

// The folder of the plugin libraries (libautoschedule_<name>.so).
std::string autoscheduler_plugin_dir();

// One entrant per autoscheduler of `o`, scheduled for `threads` cores (MachineParams parallelism)
// and the host's last-level cache, then JIT-compiled for the host. A scheduler that fails comes
// back with status "compile_error" and Halide's message; one not run with status "skipped".
std::vector<Entrant> make_autoscheduled(const Problem &p, int threads,
                                        const AutoscheduleOptions &o);

} // namespace opgen::bench

#endif
