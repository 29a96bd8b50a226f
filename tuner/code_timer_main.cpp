// opgen-code-timer: times a cache's stored generic kernels against its stored tuned kernels
// (tuner/StoredCodeTimer.h). Started by `opgen db compile --generic` (tuner/GenericTiming.h) as
// `opgen-code-timer JOB`; not meant to be run by hand.
#include "tuner/StoredCodeTimer.h"

#include <sys/prctl.h>

#include <csignal>
#include <cstdio>

int main(int argc, char **argv) {
    // Die with the caller: a killed compile must not leave kernels running.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (argc != 2) {
        std::fprintf(stderr, "error: usage: opgen-code-timer JOB\n");
        return 2;
    }
    return opgen::tuner::run_stored_timing(argv[1]);
}
