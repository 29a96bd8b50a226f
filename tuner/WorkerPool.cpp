#include "tuner/WorkerPool.h"

#include "tuner/Worker.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <stdexcept>

extern char **environ;

namespace opgen::tuner {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Proc {
    pid_t pid = -1;
    int fd = -1;
    std::unique_ptr<LineReader> reader;
    std::vector<size_t> held;  // candidates compiled here and not yet released
};

enum class Wait { Line, Dead, Timeout };

// The worker processes and what they need to be restarted; WorkerPool::Impl is this, named here so
// that the measurement steps below can be free functions.
struct Workers {
    std::string exe;
    std::vector<Proc> procs;
    std::optional<json> task_msg;
    int64_t peak_kb = 0;
    int restarts = 0;

    void start(Proc &p) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
            throw std::runtime_error(std::string("cannot create a worker socket: ") + std::strerror(errno));
        }
        int child_end = sv[1];
        if (child_end == 3) {  // dup2 onto itself would keep close-on-exec
            child_end = fcntl(sv[1], F_DUPFD_CLOEXEC, 10);
            close(sv[1]);
        }
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, child_end, 3);
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        if (!std::getenv("OPGEN_WORKER_STDERR")) posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
        std::string parent = std::to_string(getpid());
        std::vector<char *> argv = {const_cast<char *>(exe.c_str()), const_cast<char *>("--parent"),
                                    const_cast<char *>(parent.c_str()), nullptr};
        pid_t pid = -1;
        int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ);
        posix_spawn_file_actions_destroy(&fa);
        close(child_end);
        if (rc != 0) {
            close(sv[0]);
            throw std::runtime_error("cannot start measurement worker '" + exe + "': " + std::strerror(rc));
        }
        p.pid = pid;
        p.fd = sv[0];
        p.reader = std::make_unique<LineReader>(p.fd);
        p.held.clear();
        if (task_msg) send_task(p);
    }

    // Kills and reaps a worker; returns why it ended ("" when it was still alive and killed by us).
    std::string stop(Proc &p, bool alive_expected) {
        std::string why;
        if (p.pid > 0) {
            if (alive_expected) kill(p.pid, SIGKILL);
            int status = 0;
            pid_t r = waitpid(p.pid, &status, 0);
            if (!alive_expected && r == p.pid) {
                if (WIFSIGNALED(status)) {
                    int sig = WTERMSIG(status);
                    why = "worker died of signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
                } else if (WIFEXITED(status)) {
                    why = "worker exited with status " + std::to_string(WEXITSTATUS(status));
                }
            }
        }
        if (p.fd >= 0) close(p.fd);
        p.pid = -1;
        p.fd = -1;
        p.reader.reset();
        return why;
    }

    void restart(Proc &p, bool alive) {
        stop(p, alive);
        restarts++;
        start(p);
    }

    Wait wait_line(Proc &p, Clock::time_point deadline, std::string &line) {
        for (;;) {
            if (p.reader->pop_line(line)) return Wait::Line;
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
            if (left <= 0) return Wait::Timeout;
            pollfd pf{p.fd, POLLIN, 0};
            int n = poll(&pf, 1, int(std::min<long long>(left, 1 << 30)));
            if (n < 0 && errno == EINTR) continue;
            if (n == 0) return Wait::Timeout;
            if (!p.reader->fill()) return Wait::Dead;
        }
    }

    void note_memory(const json &j) { peak_kb = std::max<int64_t>(peak_kb, j.value("hwm_kb", int64_t(0))); }

    void send_task(Proc &p) {
        std::string line;
        if (write_line(p.fd, task_msg->dump()) &&
            wait_line(p, Clock::now() + std::chrono::seconds(600), line) == Wait::Line) {
            json j = json::parse(line);
            user_check(j.value("ok", false)) << "measurement worker refused the task: " << j.value("error", "");
            return;
        }
        std::string why = stop(p, true);
        throw std::runtime_error("measurement worker '" + exe + "' did not take the task" +
                                 (why.empty() ? "" : ": " + why));
    }
};

// One measure_rounds call's candidates and what is known of each so far.
struct Batch {
    Batch(const std::vector<PoolCandidate> &c, int r, const std::function<void(size_t, const MeasureResult &)> &d)
        : cands(c), rounds(r), done(d), res(c.size()), failed(c.size(), false), holder(c.size(), -1),
          compiled_result(c.size()) {
        for (size_t i = 0; i < c.size(); i++) pending.push_back(i);
    }
    const std::vector<PoolCandidate> &cands;
    int rounds;
    const std::function<void(size_t, const MeasureResult &)> &done;
    std::vector<std::vector<MeasureResult>> res;  // per candidate, one result per round timed
    std::vector<bool> failed;
    std::vector<int> holder;  // the worker holding the compiled candidate
    std::vector<MeasureResult> compiled_result;
    std::deque<size_t> pending;  // waiting to be compiled
};

// The compile phase's view of the workers: the candidate each is on (-1: idle) and its deadline.
struct Compiling {
    explicit Compiling(size_t workers) : busy(workers, -1), deadline(workers) {}
    std::vector<long> busy;
    std::vector<Clock::time_point> deadline;
};

// A failed result: its status ("crash", "timeout") and why.
MeasureResult failure(const std::string &status, const std::string &error) {
    MeasureResult r;
    r.status = status;
    r.error = error;
    return r;
}

// Candidate i failed with `r`: every round it has left records `r`, and `done` hears of it if it
// had not yet.
void finish_failed(Batch &b, size_t i, const MeasureResult &r) {
    bool first = b.res[i].empty();
    b.failed[i] = true;
    while (int(b.res[i].size()) < b.rounds) b.res[i].push_back(r);
    if (first && b.done) b.done(i, r);
}

// Stops (kills when `alive`) and restarts worker w; the candidates it held compiled go back to
// pending to be compiled elsewhere. Returns why it ended, as Workers::stop.
std::string lose_worker(Workers &ws, Batch &b, size_t w, bool alive) {
    Proc &p = ws.procs[w];
    for (size_t h : p.held) {
        if (!b.failed[h]) b.pending.push_back(h);
        b.holder[h] = -1;
    }
    p.held.clear();
    std::string why = ws.stop(p, alive);
    ws.restarts++;
    ws.start(p);
    return why;
}

// Why a worker silent past its deadline during `phase` was killed.
std::string timeout_message(double timeout_s, const char *phase) {
    return "no answer after " + std::to_string(int(timeout_s)) + " s while " + phase + "; worker killed";
}

// Hands pending candidates to the idle workers, one each, with a deadline `timeout_s` from now.
void hand_out_compiles(Workers &ws, Batch &b, Compiling &c, double timeout_s) {
    const auto timeout = std::chrono::milliseconds(int64_t(timeout_s * 1000));
    for (size_t w = 0; w < ws.procs.size() && !b.pending.empty(); w++) {
        if (c.busy[w] >= 0) continue;
        size_t i = b.pending.front();
        b.pending.pop_front();
        json req = {{"cmd", "compile"}, {"id", i}, {"fault", b.cands[i].fault}};
        req["point"] = b.cands[i].point ? b.cands[i].point->to_json() : json(nullptr);
        c.busy[w] = long(i);
        c.deadline[w] = Clock::now() + timeout;
        write_line(ws.procs[w].fd, req.dump());  // a dead worker shows as end of stream later
    }
}

// Waits until a busy worker has something to read or the soonest deadline passes. Returns each
// busy worker with whether poll saw it readable (or hung up); empty when none is busy.
std::vector<std::pair<size_t, bool>> poll_compilers(const Workers &ws, const Compiling &c) {
    std::vector<pollfd> pfs;
    std::vector<size_t> which;
    auto soonest = Clock::time_point::max();
    for (size_t w = 0; w < ws.procs.size(); w++) {
        if (c.busy[w] < 0) continue;
        pfs.push_back({ws.procs[w].fd, POLLIN, 0});
        which.push_back(w);
        soonest = std::min(soonest, c.deadline[w]);
    }
    if (pfs.empty()) return {};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(soonest - Clock::now()).count();
    int pr = poll(pfs.data(), pfs.size(), int(std::max<long long>(0, std::min<long long>(left, 1 << 30))));
    if (pr < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    std::vector<std::pair<size_t, bool>> out;
    for (size_t k = 0; k < which.size(); k++) {
        out.emplace_back(which[k], pr > 0 && (pfs[k].revents & (POLLIN | POLLHUP | POLLERR)));
    }
    return out;
}

// Candidate i's compile answer `j` from worker w: a failure finishes it, a success leaves it held
// compiled on w.
void take_compiled(Workers &ws, Batch &b, size_t w, size_t i, const json &j) {
    ws.note_memory(j);
    MeasureResult r;
    r.status = j.value("status", "compile_error");
    r.error = j.value("error", "");
    r.max_error = max_error_from_json(j);
    if (!r.ok()) {
        finish_failed(b, i, r);
        return;
    }
    b.compiled_result[i] = r;
    b.holder[i] = int(w);
    ws.procs[w].held.push_back(i);
}

// Whatever busy worker w has to say, if anything: an answer, end of stream (a crash), or silence
// past its deadline (killed: a timeout). `readable`: poll saw it readable.
void check_compiler(Workers &ws, Batch &b, Compiling &c, size_t w, bool readable, double timeout_s) {
    size_t i = size_t(c.busy[w]);
    Proc &p = ws.procs[w];
    std::string line;
    bool have = p.reader->pop_line(line);
    if (!have && readable) {
        if (!p.reader->fill()) {
            c.busy[w] = -1;
            std::string why = lose_worker(ws, b, w, false);
            finish_failed(b, i, failure("crash", why + " while compiling and verifying"));
            return;
        }
        have = p.reader->pop_line(line);
    }
    if (have) {
        c.busy[w] = -1;
        take_compiled(ws, b, w, i, json::parse(line));
        return;
    }
    if (Clock::now() >= c.deadline[w]) {
        c.busy[w] = -1;
        lose_worker(ws, b, w, true);
        finish_failed(b, i, failure("timeout", timeout_message(timeout_s, "compiling and verifying")));
    }
}

// Compiles and verifies every pending candidate in parallel, one per worker at a time, until
// none is pending or busy.
void compile_pending(Workers &ws, Batch &b, double timeout_s) {
    Compiling c(ws.procs.size());
    for (;;) {
        hand_out_compiles(ws, b, c, timeout_s);
        std::vector<std::pair<size_t, bool>> polled = poll_compilers(ws, c);
        if (polled.empty()) return;
        for (auto [w, readable] : polled) check_compiler(ws, b, c, w, readable, timeout_s);
    }
}

// Candidate i's timing answer `j` on top of its compile result: the timing, or the failure.
MeasureResult timed_result(MeasureResult r, const json &j, double flops) {
    r.status = j.value("status", "runtime_error");
    r.error = j.value("error", "");
    if (!r.ok()) {
        r.timing = Timing();
        return r;
    }
    r.timing.median_ms = j.value("median_ms", 0.0);
    r.timing.min_ms = j.value("min_ms", 0.0);
    r.timing.max_ms = j.value("max_ms", 0.0);
    r.timing.spread = j.value("spread", 0.0);
    r.timing.runs = j.value("runs", 0);
    r.reference_ms = j.value("reference_ms", 0.0);
    r.ratio = j.value("ratio", 0.0);
    r.gflops = r.timing.median_ms > 0 ? flops / (r.timing.median_ms * 1e6) : 0;
    return r;
}

// Drops candidate i from worker w's held list.
void unhold(Workers &ws, Batch &b, size_t w, size_t i) {
    Proc &p = ws.procs[w];
    p.held.erase(std::remove(p.held.begin(), p.held.end(), i), p.held.end());
    b.holder[i] = -1;
}

// Times compiled candidate i once more on the worker holding it. A worker that dies or overruns
// fails the candidate; one that is done with it (all rounds, or failed) releases it.
void time_one(Workers &ws, Batch &b, size_t i, const PoolOptions &o, double flops) {
    size_t w = size_t(b.holder[i]);
    Proc &p = ws.procs[w];
    json req = {{"cmd", "time"}, {"id", i}, {"min_time_ms", o.min_time_ms}, {"min_runs", o.min_runs},
                {"max_runs", o.max_runs}};
    const auto timeout = std::chrono::milliseconds(int64_t(o.timeout_s * 1000));
    std::string line;
    Wait wr = write_line(p.fd, req.dump()) ? ws.wait_line(p, Clock::now() + timeout, line) : Wait::Dead;
    if (wr != Wait::Line) {
        unhold(ws, b, w, i);
        std::string why = lose_worker(ws, b, w, wr == Wait::Timeout);
        finish_failed(b, i, wr == Wait::Dead ? failure("crash", why + " while timing")
                                             : failure("timeout", timeout_message(o.timeout_s, "timing")));
        return;
    }
    json j = json::parse(line);
    ws.note_memory(j);
    MeasureResult r = timed_result(b.compiled_result[i], j, flops);
    bool first = b.res[i].empty();
    if (!r.ok()) {
        finish_failed(b, i, r);
    } else {
        b.res[i].push_back(r);
        if (first && b.done) b.done(i, r);
    }
    if (b.failed[i] || int(b.res[i].size()) == b.rounds) {
        write_line(p.fd, json{{"cmd", "release"}, {"id", i}}.dump());
        unhold(ws, b, w, i);
    }
}

// Times the compiled candidates one at a time, round by round (A B C A B C ...), while the
// other workers wait.
void time_compiled(Workers &ws, Batch &b, const PoolOptions &o, double flops) {
    for (int round = 0; round < b.rounds; round++) {
        for (size_t i = 0; i < b.cands.size(); i++) {
            if (b.failed[i] || b.holder[i] < 0 || int(b.res[i].size()) != round) continue;
            time_one(ws, b, i, o, flops);
        }
    }
}

// Per-candidate results turned into per-round ones: out[r][i].
std::vector<std::vector<MeasureResult>> by_round(const std::vector<std::vector<MeasureResult>> &res, int rounds) {
    std::vector<std::vector<MeasureResult>> out(size_t(rounds),
                                                std::vector<MeasureResult>(res.size(), MeasureResult()));
    for (size_t i = 0; i < res.size(); i++) {
        for (int r = 0; r < rounds; r++) out[size_t(r)][i] = res[i].at(size_t(r));
    }
    return out;
}

}  // namespace

struct WorkerPool::Impl : Workers {};

WorkerPool::WorkerPool(int jobs, const std::string &exe) : impl_(std::make_unique<Impl>()) {
    impl_->exe = exe.empty() ? worker_executable() : exe;
    if (access(impl_->exe.c_str(), X_OK) != 0) {
        throw std::runtime_error("measurement worker '" + impl_->exe + "' is not an executable file");
    }
    impl_->procs.resize(size_t(std::max(1, jobs)));
    for (auto &p : impl_->procs) impl_->start(p);
}

WorkerPool::~WorkerPool() {
    for (auto &p : impl_->procs) impl_->stop(p, true);
}

int WorkerPool::jobs() const { return int(impl_->procs.size()); }
int64_t WorkerPool::worker_peak_rss_kb() const { return impl_->peak_kb; }
int WorkerPool::restarts() const { return impl_->restarts; }

void WorkerPool::set_task(const WorkerTask &t) {
    json j;
    j["cmd"] = "task";
    j["op_source"] = t.def->source;
    j["op_file"] = t.def->name + ".op";
    j["shape"] = t.shape.canonical;
    j["target"] = t.target.to_json();
    j["seed"] = t.seed;
    j["threads"] = t.threads;
    j["reference"] = t.reference ? t.reference->to_json() : json(nullptr);
    j["cold_inputs"] = t.cold_inputs;
    impl_->task_msg = j;
    // Workers build the task's inputs and reference sample in parallel.
    std::vector<bool> sent(impl_->procs.size());
    for (size_t i = 0; i < impl_->procs.size(); i++) sent[i] = write_line(impl_->procs[i].fd, j.dump());
    for (size_t i = 0; i < impl_->procs.size(); i++) {
        Proc &p = impl_->procs[i];
        std::string line;
        if (sent[i] && impl_->wait_line(p, Clock::now() + std::chrono::seconds(600), line) == Wait::Line) {
            json r = json::parse(line);
            user_check(r.value("ok", false)) << "measurement worker refused the task: " << r.value("error", "");
            continue;
        }
        impl_->restart(p, true);  // sends the task again
    }
}

std::vector<MeasureResult> WorkerPool::measure(const std::vector<PoolCandidate> &candidates, const PoolOptions &o,
                                               double flops,
                                               const std::function<void(size_t, const MeasureResult &)> &done) {
    return measure_rounds(candidates, o, 1, flops, done).at(0);
}

std::vector<std::vector<MeasureResult>> WorkerPool::measure_rounds(
    const std::vector<PoolCandidate> &cands, const PoolOptions &o, int rounds, double flops,
    const std::function<void(size_t, const MeasureResult &)> &done) {
    Batch b(cands, std::max(1, rounds), done);
    // A worker lost while timing queues the candidates it held for compiling again.
    while (!b.pending.empty()) {
        compile_pending(*impl_, b, o.timeout_s);
        time_compiled(*impl_, b, o, flops);
    }
    return by_round(b.res, b.rounds);
}

}  // namespace opgen::tuner
