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
#include <stdexcept>

extern char **environ;

namespace opgen::tuner {

std::string worker_executable() {
    if (const char *env = std::getenv("OPGEN_WORKER")) return env;
    std::error_code ec;
    auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        auto beside = self.parent_path() / "opgen-worker";
        if (access(beside.c_str(), X_OK) == 0) return beside.string();
    }
    return OPGEN_WORKER_EXE;
}

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

}  // namespace

struct WorkerPool::Impl {
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
    Impl &im = *impl_;
    const size_t n = cands.size();
    rounds = std::max(1, rounds);
    std::vector<std::vector<MeasureResult>> res(n);
    std::vector<bool> failed(n, false);
    std::vector<int> holder(n, -1);  // the worker holding the compiled candidate
    std::vector<MeasureResult> compiled_result(n);
    auto timeout = std::chrono::milliseconds(int64_t(o.timeout_s * 1000));

    auto finish_failed = [&](size_t i, const MeasureResult &r) {
        bool first = res[i].empty();
        failed[i] = true;
        while (int(res[i].size()) < rounds) res[i].push_back(r);
        if (first && done) done(i, r);
    };
    auto failure = [](const std::string &status, const std::string &error) {
        MeasureResult r;
        r.status = status;
        r.error = error;
        return r;
    };
    // A dead or killed worker: its other compiled candidates must be compiled again elsewhere.
    std::deque<size_t> pending;
    auto lose_worker = [&](size_t w, bool alive) {
        Proc &p = im.procs[w];
        for (size_t h : p.held) {
            if (!failed[h]) pending.push_back(h);
            holder[h] = -1;
        }
        p.held.clear();
        std::string why = im.stop(p, alive);
        im.restarts++;
        im.start(p);
        return why;
    };

    for (size_t i = 0; i < n; i++) pending.push_back(i);
    while (!pending.empty()) {
        // Compile and verify in parallel, one candidate per worker at a time.
        std::vector<long> busy(im.procs.size(), -1);
        std::vector<Clock::time_point> deadline(im.procs.size());
        for (;;) {
            for (size_t w = 0; w < im.procs.size() && !pending.empty(); w++) {
                if (busy[w] >= 0) continue;
                size_t i = pending.front();
                pending.pop_front();
                json req = {{"cmd", "compile"}, {"id", i}, {"fault", cands[i].fault}};
                req["point"] = cands[i].point ? cands[i].point->to_json() : json(nullptr);
                busy[w] = long(i);
                deadline[w] = Clock::now() + timeout;
                write_line(im.procs[w].fd, req.dump());  // a dead worker shows as end of stream below
            }
            std::vector<pollfd> pfs;
            std::vector<size_t> which;
            auto soonest = Clock::time_point::max();
            for (size_t w = 0; w < im.procs.size(); w++) {
                if (busy[w] < 0) continue;
                pfs.push_back({im.procs[w].fd, POLLIN, 0});
                which.push_back(w);
                soonest = std::min(soonest, deadline[w]);
            }
            if (pfs.empty()) break;
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(soonest - Clock::now()).count();
            int pr = poll(pfs.data(), pfs.size(), int(std::max<long long>(0, std::min<long long>(left, 1 << 30))));
            if (pr < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
            for (size_t k = 0; k < which.size(); k++) {
                size_t w = which[k];
                size_t i = size_t(busy[w]);
                Proc &p = im.procs[w];
                std::string line;
                bool have = p.reader->pop_line(line);
                if (!have && pr > 0 && (pfs[k].revents & (POLLIN | POLLHUP | POLLERR))) {
                    if (!p.reader->fill()) {
                        busy[w] = -1;
                        std::string why = lose_worker(w, false);
                        finish_failed(i, failure("crash", why + " while compiling and verifying"));
                        continue;
                    }
                    have = p.reader->pop_line(line);
                }
                if (have) {
                    busy[w] = -1;
                    json j = json::parse(line);
                    im.note_memory(j);
                    MeasureResult r;
                    r.status = j.value("status", "compile_error");
                    r.error = j.value("error", "");
                    r.max_error = j.value("max_error", 0.0);
                    if (!r.ok()) {
                        finish_failed(i, r);
                        continue;
                    }
                    compiled_result[i] = r;
                    holder[i] = int(w);
                    p.held.push_back(i);
                    continue;
                }
                if (Clock::now() >= deadline[w]) {
                    busy[w] = -1;
                    lose_worker(w, true);
                    finish_failed(i, failure("timeout", "no answer after " + std::to_string(int(o.timeout_s)) +
                                                            " s while compiling and verifying; worker killed"));
                }
            }
        }
        // Time one candidate at a time, round by round, while the other workers wait.
        for (int round = 0; round < rounds; round++) {
            for (size_t i = 0; i < n; i++) {
                if (failed[i] || holder[i] < 0 || int(res[i].size()) != round) continue;
                size_t w = size_t(holder[i]);
                Proc &p = im.procs[w];
                json req = {{"cmd", "time"},          {"id", i},
                            {"min_time_ms", o.min_time_ms}, {"min_runs", o.min_runs},
                            {"max_runs", o.max_runs}};
                std::string line;
                Wait wr = write_line(p.fd, req.dump()) ? im.wait_line(p, Clock::now() + timeout, line) : Wait::Dead;
                if (wr != Wait::Line) {
                    holder[i] = -1;
                    p.held.erase(std::remove(p.held.begin(), p.held.end(), i), p.held.end());
                    std::string why = lose_worker(w, wr == Wait::Timeout);
                    if (wr == Wait::Dead) {
                        finish_failed(i, failure("crash", why + " while timing"));
                    } else {
                        finish_failed(i, failure("timeout", "no answer after " + std::to_string(int(o.timeout_s)) +
                                                                " s while timing; worker killed"));
                    }
                    continue;
                }
                json j = json::parse(line);
                im.note_memory(j);
                MeasureResult r = compiled_result[i];
                r.status = j.value("status", "runtime_error");
                r.error = j.value("error", "");
                if (r.ok()) {
                    r.timing.median_ms = j.value("median_ms", 0.0);
                    r.timing.min_ms = j.value("min_ms", 0.0);
                    r.timing.max_ms = j.value("max_ms", 0.0);
                    r.timing.spread = j.value("spread", 0.0);
                    r.timing.runs = j.value("runs", 0);
                    r.reference_ms = j.value("reference_ms", 0.0);
                    r.ratio = j.value("ratio", 0.0);
                    r.gflops = r.timing.median_ms > 0 ? flops / (r.timing.median_ms * 1e6) : 0;
                } else {
                    r.timing = Timing();
                }
                bool first = res[i].empty();
                if (!r.ok()) {
                    finish_failed(i, r);
                } else {
                    res[i].push_back(r);
                    if (first && done) done(i, r);
                }
                if (failed[i] || int(res[i].size()) == rounds) {
                    write_line(p.fd, json{{"cmd", "release"}, {"id", i}}.dump());
                    p.held.erase(std::remove(p.held.begin(), p.held.end(), i), p.held.end());
                    holder[i] = -1;
                }
            }
        }
    }
    std::vector<std::vector<MeasureResult>> out(size_t(rounds), std::vector<MeasureResult>(n, MeasureResult()));
    for (size_t i = 0; i < n; i++) {
        for (int r = 0; r < rounds; r++) out[size_t(r)][i] = res[i].at(size_t(r));
    }
    return out;
}

}  // namespace opgen::tuner
