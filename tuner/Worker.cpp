#include "tuner/Worker.h"

#include "core/Parser.h"
#include "tuner/ColdInputs.h"
#include "tuner/Measurer.h"

#include <nlohmann/json.hpp>

#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <map>

namespace opgen::tuner {

bool write_line(int fd, const std::string &line) {
    std::string s = line + "\n";
    size_t off = 0;
    while (off < s.size()) {
        ssize_t n = send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        off += size_t(n);
    }
    return true;
}

bool LineReader::fill() {
    char tmp[65536];
    for (;;) {
        ssize_t n = read(fd_, tmp, sizeof tmp);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        buf_.append(tmp, size_t(n));
        return true;
    }
}

bool LineReader::pop_line(std::string &line) {
    size_t nl = buf_.find('\n');
    if (nl == std::string::npos) return false;
    line = buf_.substr(0, nl);
    buf_.erase(0, nl + 1);
    return true;
}

bool LineReader::read_line(std::string &line) {
    while (!pop_line(line)) {
        if (!fill()) return false;
    }
    return true;
}

namespace {

int64_t status_field_kb(const char *field) {
    std::ifstream in("/proc/self/status");
    std::string name;
    while (in >> name) {
        if (name == field) {
            int64_t kb = 0;
            in >> kb;
            return kb;
        }
        std::getline(in, name);
    }
    return 0;
}

}  // namespace

int64_t current_rss_kb() { return status_field_kb("VmRSS:"); }
int64_t peak_rss_kb() { return status_field_kb("VmHWM:"); }

namespace {

using nlohmann::json;

// The worker's state for one task: the op, its tensors and reference, the candidates compiled and
// waiting to be timed, and the fixed reference kernel every timing is paired with.
struct WorkerState {
    std::unique_ptr<ComputeDef> def;
    std::unique_ptr<TaskContext> task;
    std::optional<SchedulePoint> reference_point;
    std::unique_ptr<CompiledCandidate> reference;
    std::string reference_error;
    std::map<int64_t, std::unique_ptr<CompiledCandidate>> held;
    std::map<int64_t, std::string> faults;
};

[[noreturn]] void crash_now() {
    std::raise(SIGSEGV);
    std::abort();
}

[[noreturn]] void hang_now() {
    for (;;) pause();
}

void add_memory(json &j) {
    j["rss_kb"] = current_rss_kb();
    j["hwm_kb"] = peak_rss_kb();
}

json result_json(int64_t id, const MeasureResult &r) {
    json j;
    j["id"] = id;
    j["status"] = r.status;
    j["error"] = r.error;
    j["max_error"] = r.max_error;
    add_memory(j);
    return j;
}

json on_task(WorkerState &s, const json &req) {
    s.held.clear();
    s.faults.clear();
    s.reference.reset();
    s.reference_error.clear();
    s.task.reset();
    try {
        s.def = std::make_unique<ComputeDef>(
            parse_compute(req.at("op_source").get<std::string>(), req.at("op_file").get<std::string>()));
        BoundShape shape = bind_shape(*s.def, req.at("shape").get<std::string>());
        Target target = parse_target(req.at("target"), "worker task");
        // The Halide runtime reads its thread count once, at the first parallel loop.
        setenv("HL_NUM_THREADS", std::to_string(req.at("threads").get<int>()).c_str(), 1);
        s.task = std::make_unique<TaskContext>(*s.def, shape, target, req.at("seed").get<uint64_t>());
        s.task->before_call =
            cold_inputs_hook(s.task->inputs, req.value("cold_inputs", std::vector<std::string>{}));
        s.reference_point.reset();
        if (req.contains("reference") && !req["reference"].is_null()) {
            s.reference_point = SchedulePoint::from_json(req["reference"]);
        }
        return {{"ok", true}};
    } catch (const std::exception &e) {
        return {{"ok", false}, {"error", e.what()}};
    }
}

json on_compile(WorkerState &s, const json &req) {
    int64_t id = req.at("id").get<int64_t>();
    MeasureResult r;
    if (!s.task) {
        r.status = "compile_error";
        r.error = "worker has no task";
        return result_json(id, r);
    }
    std::string fault = req.value("fault", "");
    if (fault == "crash") crash_now();
    if (fault == "hang") hang_now();
    std::optional<SchedulePoint> point;
    if (!req.at("point").is_null()) point = SchedulePoint::from_json(req["point"]);
    std::unique_ptr<CompiledCandidate> c = compile_and_verify(*s.task, point, r);
    if (c) {
        s.held[id] = std::move(c);
        if (!fault.empty()) s.faults[id] = fault;
    }
    return result_json(id, r);
}

json on_time(WorkerState &s, const json &req) {
    int64_t id = req.at("id").get<int64_t>();
    json j;
    j["id"] = id;
    auto it = s.held.find(id);
    if (it == s.held.end()) {
        j["status"] = "runtime_error";
        j["error"] = "candidate " + std::to_string(id) + " is not compiled in this worker";
        return j;
    }
    if (s.faults.count(id) && s.faults[id] == "crash-timing") crash_now();
    double min_time_ms = req.value("min_time_ms", 60.0);
    int min_runs = req.value("min_runs", 3);
    int max_runs = req.value("max_runs", 1000);
    try {
        if (!s.reference && s.reference_point && s.reference_error.empty()) {
            MeasureResult rr;
            s.reference = compile_and_verify(*s.task, s.reference_point, rr);
            if (!s.reference) s.reference_error = rr.status + ": " + rr.error;
        }
        JitKernel &k = *it->second->kernel;
        Timing t;
        if (s.reference) {
            PairedTiming p = time_paired(k, *s.reference->kernel, min_time_ms, min_runs, max_runs, s.task->before_call);
            t = p.candidate;
            j["reference_ms"] = p.reference.median_ms;
            j["ratio"] = p.ratio;
        } else {
            t = k.time(min_time_ms, min_runs, max_runs, s.task->before_call);
            j["reference_ms"] = 0.0;
            j["ratio"] = 0.0;
        }
        j["status"] = "ok";
        j["median_ms"] = t.median_ms;
        j["min_ms"] = t.min_ms;
        j["max_ms"] = t.max_ms;
        j["spread"] = t.spread;
        j["runs"] = t.runs;
    } catch (const Halide::RuntimeError &e) {
        j["status"] = "runtime_error";
        j["error"] = e.what();
    }
    add_memory(j);
    return j;
}

}  // namespace

int run_worker(int fd) {
    // A crashing candidate should leave no core file behind.
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    WorkerState s;
    LineReader in(fd);
    std::string line;
    while (in.read_line(line)) {
        json req;
        try {
            req = json::parse(line);
        } catch (const json::exception &e) {
            write_line(fd, json{{"ok", false}, {"error", std::string("bad request: ") + e.what()}}.dump());
            continue;
        }
        const std::string cmd = req.value("cmd", "");
        json reply;
        if (cmd == "task") {
            reply = on_task(s, req);
        } else if (cmd == "compile") {
            reply = on_compile(s, req);
        } else if (cmd == "time") {
            reply = on_time(s, req);
        } else if (cmd == "release") {
            s.held.erase(req.value("id", int64_t(-1)));
            continue;
        } else {
            reply = {{"ok", false}, {"error", "unknown command '" + cmd + "'"}};
        }
        if (!write_line(fd, reply.dump())) return 1;
    }
    return 0;
}

}  // namespace opgen::tuner
