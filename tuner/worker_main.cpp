// opgen-worker: the measurement worker process (tuner/Worker.h). Started by the tuner's
// WorkerPool with its socket as file descriptor 3; not meant to be run by hand. Started as
// `opgen-worker --object JOB` it is a compile worker of a whole model instead
// (codegen/ObjectCompile.h).
#include "codegen/ObjectCompile.h"
#include "tuner/Worker.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char **argv) {
    // Die with the tuner: a SIGKILLed tuner must not leave workers compiling or hanging.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (argc == 3 && std::strcmp(argv[1], "--object") == 0) return opgen::run_object_job(argv[2]);
    if (argc >= 3 && std::strcmp(argv[1], "--parent") == 0 && getppid() != std::atoi(argv[2])) return 1;
    return opgen::tuner::run_worker(3);
}
