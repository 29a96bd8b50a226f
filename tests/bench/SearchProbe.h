// Bounding Adams2019's search without losing the run: on the blocked 14x14 convolution its beam
// search held 22 GiB of this 24 GiB machine after four minutes, and a search cannot be stopped or
// capped inside the bench's own process (a std::bad_alloc thrown in the plugin's worker threads
// ends the process). So the search is first run in a child process, the bench itself started again
// with --probe-search, under an address-space limit (RLIMIT_AS) and an alarm. Only a search that
// finishes there is run again in the bench's process; Adams2019 with Halide's default random
// dropout (none) is deterministic, so the second search takes the same path within the same
// bounds. The price is Adams2019's search time twice; the other autoschedulers are not probed.
#ifndef OPGEN_BENCH_SEARCH_PROBE_H
#define OPGEN_BENCH_SEARCH_PROBE_H

#include "tests/bench/Autoschedulers.h"
#include "tests/bench/Contender.h"

#include <string>

namespace opgen::bench {

// Runs autoscheduler `name`'s search for `p` at `threads` in a child process within the bounds of
// `o` (search_memory_gib, search_seconds; 0 leaves one unbounded). Returns "" when it finished,
// else why not, for the report ("went over 10 GiB of memory after 123 s").
std::string probe_search(const Problem &p, int threads, const std::string &name,
                         const AutoscheduleOptions &o);

// The child's side: when argv[1] is "--probe-search", runs the search the arguments describe,
// within its bounds, and returns the exit status (0: finished); otherwise returns -1 at once.
int probe_search_main(int argc, char **argv);

} // namespace opgen::bench

#endif
