#include "codegen/ObjectCompile.h"

#include "codegen/CompiledCode.h"
#include "base/Error.h"
#include "codegen/GenericCode.h"
#include "core/Parser.h"
#include "core/Schedule.h"
#include "core/Shape.h"
#include "core/Target.h"
#include "codegen/HelperProcess.h"

#include <Halide.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

extern char **environ;

namespace opgen {

namespace {

using Clock = std::chrono::steady_clock;

struct Running {
    pid_t pid = -1;
    size_t job = 0;
    Clock::time_point start;
};

nlohmann::json job_json(const ObjectJob &j) {
    return {{"op_source", j.op_source}, {"op_file", j.op_file},   {"shape", j.shape},
            {"target", j.target},       {"point", j.point_json},  {"function", j.function},
            {"path", j.path},           {"runtime", j.runtime},   {"generic", j.generic}};
}

// The LLVM option a generic job's worker adds (generic_worker_environment).
constexpr const char *kGenericLlvmArgs = "-vectorize-slp=false";

// Starts the worker of `job` with its output going to <object>.log.
pid_t start_worker(const std::string &exe, const ObjectJob &job) {
    std::string request = job.path + ".job.json", log = job.path + ".log";
    std::ofstream(request) << job_json(job).dump();
    std::vector<std::string> env_text = job.generic ? generic_worker_environment(environ) : std::vector<std::string>{};
    std::vector<char *> env;
    for (std::string &e : env_text) env.push_back(e.data());
    env.push_back(nullptr);
    pid_t pid = -1;
    int rc = spawn_logged(exe, {"--object", request}, log, job.generic ? env.data() : environ, pid);
    if (rc != 0) throw std::runtime_error("cannot start compile worker '" + exe + "': " + std::strerror(rc));
    return pid;
}

long reap(std::vector<Running> &running, const std::vector<ObjectJob> &jobs, ObjectCompileReport &r) {
    long failed = -1;
    for (size_t i = 0; i < running.size();) {
        int status = 0;
        if (waitpid(running[i].pid, &status, WNOHANG) != running[i].pid) {
            i++;
            continue;
        }
        r.job_s += std::chrono::duration<double>(Clock::now() - running[i].start).count();
        bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && access(jobs[running[i].job].path.c_str(), R_OK) == 0;
        if (!ok && failed < 0) failed = long(running[i].job);
        running.erase(running.begin() + long(i));
    }
    return failed;
}

// The generic job of `j`: its kernel checked against the reference, then compiled; the shapes it
// was checked at and the Halide target go into path + ".generic.json".
void compile_generic_job(const nlohmann::json &j, const ComputeDef &def, const BoundShape &shape,
                         const SchedulePoint &point) {
    Target target = load_target(j.at("target").get<std::string>());
    const std::string path = j.at("path").get<std::string>();
    std::string checked;
    LoweredOp op = checked_generic(def, shape, point, target, checked);
    std::string halide_target = compile_scheduled_object(op, "op '" + def.name + "' generic from " + shape.canonical,
                                                         target, j.at("function").get<std::string>(), path);
    std::ofstream(path + ".generic.json") << nlohmann::json{{"checked", checked}, {"halide_target", halide_target}}.dump();
}

}  // namespace

std::vector<std::string> generic_worker_environment(char **env) {
    std::vector<std::string> out;
    std::string llvm_args = kGenericLlvmArgs;
    for (char **e = env; e && *e; e++) {
        std::string entry = *e;
        if (entry.rfind("HL_LLVM_ARGS=", 0) == 0) {
            // LLVM refuses an option given twice: a caller's own options are kept, once.
            std::string given = entry.substr(std::strlen("HL_LLVM_ARGS="));
            if (given.find(kGenericLlvmArgs) != std::string::npos) llvm_args = given;
            else if (!given.empty()) llvm_args = given + " " + llvm_args;
            continue;
        }
        out.push_back(std::move(entry));
    }
    out.push_back("HL_LLVM_ARGS=" + llvm_args);
    return out;
}

ObjectCompileReport compile_objects(const std::vector<ObjectJob> &jobs, int workers) {
    ObjectCompileReport r;
    r.workers = std::max(1, workers);
    std::string exe = worker_executable();
    std::vector<Running> running;
    long failed = -1;
    auto start = Clock::now();
    for (size_t next = 0; next < jobs.size() || !running.empty();) {
        while (failed < 0 && next < jobs.size() && int(running.size()) < r.workers) {
            running.push_back({start_worker(exe, jobs[next]), next, Clock::now()});
            next++;
        }
        long f = reap(running, jobs, r);
        if (failed < 0) failed = f;
        if (failed >= 0 && running.empty()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    r.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
    if (failed < 0) return r;
    const ObjectJob &bad = jobs[size_t(failed)];
    std::string what = bad.runtime ? "the Halide runtime"
                                   : std::string(bad.generic ? "the generic kernel " : "kernel ") + bad.function +
                                         " (" + bad.op_file + " at " + bad.shape + ")";
    throw UserError("compiling " + what + " failed: " + last_line(bad.path + ".log"));
}

int run_object_job(const std::string &job_file) {
    try {
        std::ifstream in(job_file);
        nlohmann::json j = nlohmann::json::parse(in);
        if (j.at("runtime").get<bool>()) {
            Halide::Target host = Halide::get_host_target();
            Halide::compile_standalone_runtime(j.at("path").get<std::string>(),
                                               Halide::Target(host.os, host.arch, host.bits));
            return 0;
        }
        ComputeDef def = parse_compute(j.at("op_source").get<std::string>(), j.at("op_file").get<std::string>());
        BoundShape shape = bind_shape(def, j.at("shape").get<std::string>());
        SchedulePoint point = SchedulePoint::from_json(nlohmann::json::parse(j.at("point").get<std::string>()));
        if (j.value("generic", false)) {
            compile_generic_job(j, def, shape, point);
            return 0;
        }
        compile_kernel_object(def, shape, point, load_target(j.at("target").get<std::string>()),
                              j.at("function").get<std::string>(), j.at("path").get<std::string>());
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}

}  // namespace opgen
