#include "tests/bench/SearchProbe.h"

#include "codegen/CompiledCode.h"
#include "base/Error.h"
#include "core/Parser.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iostream>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char **environ;

namespace opgen::bench {

namespace {

constexpr int kSearchFailed = 2; // Halide refused: the bench's own search reports why

// The process's address space so far (VmSize of /proc/self/status), in bytes; 0 when unreadable.
uint64_t address_space_bytes() {
    std::ifstream in("/proc/self/status");
    std::string key;
    while (in >> key) {
        if (key == "VmSize:") {
            uint64_t kib = 0;
            in >> kib;
            return kib * 1024;
        }
        in.ignore(4096, '\n');
    }
    return 0;
}

// The child's bounds: its address space now plus `gib`, and an alarm after `seconds`.
void bound_this_process(double gib, double seconds) {
    uint64_t now = address_space_bytes();
    rlimit limit{};
    if (gib > 0 && now > 0 && getrlimit(RLIMIT_AS, &limit) == 0) {
        rlim_t cap = rlim_t(now + uint64_t(gib * double(uint64_t(1) << 30)));
        if (limit.rlim_max == RLIM_INFINITY || cap < limit.rlim_max)
            limit.rlim_cur = cap;
        setrlimit(RLIMIT_AS, &limit);
    }
    if (seconds > 0)
        alarm(unsigned(seconds + 0.5));
}

// Starts `args` (the bench again) with its output discarded; returns its pid, or -1.
pid_t spawn_quietly(const std::vector<std::string> &args) {
    std::vector<char *> argv;
    for (const auto &a : args)
        argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = -1;
    int rc = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    return rc == 0 ? pid : -1;
}

std::string seconds_text(double s) {
    return std::to_string(int(s + 0.5)) + " s";
}

// Why a child that ended with `status` after `elapsed_s` did not finish; "" when it did (or when
// Halide refused, which the bench's own search then reports).
std::string verdict(int status, double elapsed_s, const AutoscheduleOptions &o) {
    if (WIFEXITED(status) &&
        (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == kSearchFailed))
        return "";
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        return "its search went over " + seconds_text(o.search_seconds) +
               " (--search-seconds); probed in a child process";
    std::string how = WIFSIGNALED(status) ? "ended by signal " + std::to_string(WTERMSIG(status))
                                          : "exited with " + std::to_string(WEXITSTATUS(status));
    return "its search went over " + std::to_string(o.search_memory_gib).substr(0, 4) +
           " GiB of memory (--search-memory-gib) after " + seconds_text(elapsed_s) +
           "; probed in a child process, " + how;
}

} // namespace

std::string probe_search(const Problem &p, int threads, const std::string &name,
                         const AutoscheduleOptions &o) {
    if (o.search_memory_gib <= 0 && o.search_seconds <= 0)
        return "";
    ScratchFolder scratch;  // the op's text for the child, removed with the folder
    const std::string op_file = scratch.file("probe.op");
    std::ofstream(op_file) << p.def->source;
    std::vector<std::string> args = {"opgen_bench",
                                     "--probe-search",
                                     op_file,
                                     p.shape.canonical,
                                     std::to_string(threads),
                                     name,
                                     std::to_string(o.balance),
                                     std::to_string(o.search_memory_gib),
                                     std::to_string(o.search_seconds)};
    auto t0 = std::chrono::steady_clock::now();
    pid_t pid = spawn_quietly(args);
    if (pid < 0)
        return "its search probe could not start: " + std::string(std::strerror(errno));
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return verdict(status, elapsed, o);
}

int probe_search_main(int argc, char **argv) {
    if (argc < 2 || std::strcmp(argv[1], "--probe-search") != 0)
        return -1;
    if (argc != 9) {
        std::cerr << "error: --probe-search takes: OPFILE SHAPE THREADS NAME BALANCE GIB SECONDS\n";
        return 1;
    }
    try {
        std::ifstream in(argv[2]);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        ComputeDef def = parse_compute(text, argv[2]);
        BoundShape shape = bind_shape(def, argv[3]);
        Target target = host_target();
        LoweredOp op = lower_to_halide(def, shape);
        bound_this_process(std::atof(argv[7]), std::atof(argv[8]));
        search_schedule(op, def, shape, target, std::atoi(argv[4]), argv[5],
                        float(std::atof(argv[6])));
        return 0;
    } catch (const Halide::Error &e) {
        std::cerr << "error: " << e.what() << "\n";
        return kSearchFailed;
    } catch (const UserError &e) {
        std::cerr << "error: " << e.what() << "\n";
        return kSearchFailed;
    }
}

} // namespace opgen::bench
