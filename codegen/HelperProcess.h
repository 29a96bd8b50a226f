// opgen's helper processes: finding a helper program (the measurement worker, the stored-code
// timer) and starting one with its output in a log. Code generation compiles in these workers
// (codegen/ObjectCompile.h); the tuner measures in them (tuner/WorkerPool.h).
#ifndef OPGEN_CODEGEN_HELPER_PROCESS_H
#define OPGEN_CODEGEN_HELPER_PROCESS_H

#include <sys/types.h>

#include <string>
#include <vector>

namespace opgen {

// A helper program of opgen's: $`env_var`, else `name` beside the running program, else `built`
// (the one this build made).
std::string helper_executable(const char *env_var, const std::string &name, const std::string &built);

// The worker executable: $OPGEN_WORKER, else `opgen-worker` beside the running program, else the
// one this build made.
std::string worker_executable();

// Starts `exe` with the arguments `args` (after its name), its standard output and error written
// to the file `log`, in the environment `env` (a null-terminated array, as `environ`). Sets `pid`
// and returns 0, else posix_spawn's error number.
int spawn_logged(const std::string &exe, const std::vector<std::string> &args, const std::string &log,
                 char *const *env, pid_t &pid);

// The last non-empty line of the file at `path` (a helper's log: its `error:` line), or
// "(no output)".
std::string last_line(const std::string &path);

}  // namespace opgen

#endif
