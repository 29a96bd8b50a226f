// run: a compiled model's runner (onnx/ModelRunner.h) started on a folder that `opgen
// compile` wrote: it loads the weights, checks the inputs and the outputs, runs and times the
// model. The runner prints its own `error: ...` line; its exit status is this command's.
#include "base/Error.h"
#include "cli/Cli.h"
#include "tuner/Contention.h"
#include "tuner/Variants.h"

#include <nlohmann/json.hpp>

#include <sched.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>

extern char **environ;

namespace opgen::cli {

namespace {

// The runner's own default (ModelRunner.h).
constexpr int default_calibration_runs = 5;

struct RunArgs {
    std::string dir;
    std::vector<std::string> inputs, outputs;
    int threads = 0, iterations = 10, warmup = 1, calibrate = default_calibration_runs;
    bool profile = false, finite = false;
    int level = -1, window = 0;  // bandwidth variants: a pinned level, the window (0: the runner's)
    double quiet_ratio = 0;      // 0: the library's
    std::string load;            // a contention level run beside the model; empty: none
};

// The runner's command line from DIR/deploy.json.
std::vector<std::string> runner_command(const RunArgs &a) {
    std::ifstream in(a.dir + "/deploy.json");
    user_check(in.good()) << "'" << a.dir << "' is not a compiled model folder (no deploy.json); "
                          << "run `opgen compile MODEL.onnx -o " << a.dir << "` first";
    nlohmann::json d;
    try {
        d = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception &e) {
        throw UserError("'" + a.dir + "/deploy.json': " + e.what());
    }
    std::vector<std::string> cmd = {a.dir + "/" + d.value("runner", ""), a.dir + "/" + d.value("weights", "")};
    for (const std::string &f : a.inputs) cmd.insert(cmd.end(), {"--input", f});
    for (const std::string &f : a.outputs) cmd.insert(cmd.end(), {"--output", f});
    if (a.threads > 0) cmd.insert(cmd.end(), {"--threads", std::to_string(a.threads)});
    cmd.insert(cmd.end(), {"--iterations", std::to_string(a.iterations), "--warmup", std::to_string(a.warmup)});
    // Only when asked: runners compiled before read-ahead existed refuse the flag.
    if (a.calibrate != default_calibration_runs) cmd.insert(cmd.end(), {"--calibrate", std::to_string(a.calibrate)});
    // Only when asked, as --calibrate: older runners refuse the flags.
    if (a.level >= 0) cmd.insert(cmd.end(), {"--level", std::to_string(a.level)});
    if (a.window > 0) cmd.insert(cmd.end(), {"--window", std::to_string(a.window)});
    if (a.quiet_ratio > 0) {
        char ratio[32];
        std::snprintf(ratio, sizeof ratio, "%.17g", a.quiet_ratio);
        cmd.insert(cmd.end(), {"--quiet-ratio", ratio});
    }
    if (a.profile) cmd.push_back("--profile");
    if (a.finite) cmd.push_back("--finite");
    return cmd;
}

// opgen's own memory-streaming load (tuner/Contention.h) at `level`, its threads pinned to the
// last CPUs; the calling thread (and so the runner it starts) is kept to the others where any
// remain. Returns the load, or null for none.
std::unique_ptr<tuner::Contention> start_load(const std::string &level) {
    if (level.empty()) return nullptr;
    const std::vector<double> levels = tuner::parse_contention_levels(level, "--load");
    user_check(levels.size() == 1) << "--load '" << level << "': expected one contention level (e.g. 1)";
    tuner::ContentionSpec spec = tuner::contention_for_level(levels[0]);
    spec.cpus = tuner::last_cpus(spec.threads);
    cpu_set_t all, rest;
    CPU_ZERO(&rest);
    if (sched_getaffinity(0, sizeof all, &all) == 0) {
        rest = all;
        for (int c : spec.cpus) CPU_CLR(c, &rest);
        if (CPU_COUNT(&rest) > 0) sched_setaffinity(0, sizeof rest, &rest);  // best effort
    }
    auto load = std::make_unique<tuner::Contention>(spec);
    std::string cpus;
    for (int c : spec.cpus) cpus += (cpus.empty() ? "" : ",") + std::to_string(c);
    std::printf("load: level %g, %s, on CPU %s\n", levels[0], spec.describe().c_str(), cpus.c_str());
    return load;
}

void report_load(tuner::Contention &load) {
    load.stop();
    std::printf("load: streamed %.2f GB/s over %.2f s\n", double(load.bytes_streamed()) / load.seconds() / 1e9,
                load.seconds());
}

int run(const RunArgs &a) {
    std::vector<std::string> cmd = runner_command(a);
    std::unique_ptr<tuner::Contention> load = start_load(a.load);
    std::vector<char *> argv;
    for (std::string &s : cmd) argv.push_back(s.data());
    argv.push_back(nullptr);
    std::fflush(stdout);
    pid_t pid = -1;
    int rc = posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ);
    user_check(rc == 0) << "cannot start the runner '" << cmd[0] << "': " << std::strerror(rc);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (load) report_load(*load);
    user_check(!WIFSIGNALED(status)) << "the runner '" << cmd[0] << "' died of signal " << WTERMSIG(status);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

void add_run_command(CLI::App &app) {
    auto a = std::make_shared<RunArgs>();
    auto *cmd = app.add_subcommand("run", "run a compiled model folder: load, check, run and time it");
    cmd->add_option("dir", a->dir, "folder written by `opgen compile`")->required();
    cmd->add_option("--input", a->inputs, "input .npy of the input's type, one per model input in order");
    cmd->add_option("--output", a->outputs, "where to write each output as .npy, in order");
    cmd->add_option("--threads", a->threads, "threads of the kernels' parallel loops (default: all cores)")
        ->check(CLI::Range(1, 1024));
    cmd->add_option("--iterations", a->iterations, "timed runs (default 10); the latency is their median")
        ->check(CLI::Range(1, 1000000));
    cmd->add_option("--warmup", a->warmup, "untimed runs first (default 1)")->check(CLI::Range(0, 1000000));
    cmd->add_option("--calibrate", a->calibrate,
                    "runs with and without reading each kernel's weights ahead (at least 1 MiB of them), "
                    "which choose the kernels it is kept for (default 5; 0: none)")
        ->check(CLI::Range(0, 1000));
    cmd->add_option("--load", a->load,
                    "run beside opgen's own memory-streaming load at this contention level (load threads x "
                    "intensity, e.g. 1), its threads pinned to the last CPUs and the model kept off them");
    cmd->add_option("--level", a->level,
                    "bandwidth variants (`opgen compile --variants`): run this level's set only (0: the quiet one)")
        ->check(CLI::Range(0, 64));
    cmd->add_option("--quiet-ratio", a->quiet_ratio,
                    "bandwidth variants: the drift from the quiet time above which memory counts as contended "
                    "(default 1.1)")
        ->check(CLI::Range(1.000001, 100.0));
    cmd->add_option("--window", a->window, "bandwidth variants: runs in a row before the level moves (default 3)")
        ->check(CLI::Range(1, 1000000));
    cmd->add_flag("--profile", a->profile, "print every kernel's time and share");
    cmd->add_flag("--finite", a->finite, "refuse outputs with NaN or infinite values (by default a warning)");
    cmd->callback([a] {
        int status = run(*a);
        std::fflush(stdout);
        if (status != 0) std::exit(status);
    });
}

}  // namespace opgen::cli
