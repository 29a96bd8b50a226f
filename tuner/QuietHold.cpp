#include "tuner/QuietHold.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

namespace opgen::tuner {

namespace {

// The first line of /proc/stat: busy jiffies (all but idle and iowait) of every CPU.
double machine_busy_jiffies() {
    std::ifstream in("/proc/stat");
    std::string cpu;
    in >> cpu;
    if (!in || cpu != "cpu") return 0;
    std::vector<double> fields;
    double v = 0;
    while (fields.size() < 8 && in >> v) fields.push_back(v);
    if (fields.size() < 8) return 0;
    // user nice system idle iowait irq softirq steal
    return fields[0] + fields[1] + fields[2] + fields[5] + fields[6] + fields[7];
}

struct ProcessCpu {
    long ppid = 0;
    double jiffies = 0;  // utime + stime
};

// The parent and CPU time of process `pid`; false when it cannot be read (it ended).
bool read_process(const std::string &pid, ProcessCpu &out) {
    std::ifstream in("/proc/" + pid + "/stat");
    std::string line;
    if (!std::getline(in, line)) return false;
    size_t close = line.rfind(')');  // the command name may hold spaces and parentheses
    if (close == std::string::npos || close + 2 > line.size()) return false;
    std::istringstream rest(line.substr(close + 2));
    std::vector<std::string> f;
    std::string token;
    while (f.size() < 13 && rest >> token) f.push_back(token);
    // From field 3 on: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
    if (f.size() < 13) return false;
    out.ppid = std::atol(f[1].c_str());
    out.jiffies = std::atof(f[11].c_str()) + std::atof(f[12].c_str());
    return true;
}

// CPU jiffies of this process and every process descended from it (the tuner and its workers).
double own_tree_jiffies() {
    std::map<long, ProcessCpu> all;
    if (DIR *proc = opendir("/proc")) {
        while (dirent *e = readdir(proc)) {
            if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
            ProcessCpu p;
            if (read_process(e->d_name, p)) all[std::atol(e->d_name)] = p;
        }
        closedir(proc);
    }
    const long self = long(getpid());
    double total = 0;
    for (const auto &[pid, p] : all) {
        // Walk up to init: a process is ours when the walk passes through this one.
        long at = pid;
        for (int depth = 0; depth < 64 && at > 1; depth++) {
            if (at == self) {
                total += p.jiffies;
                break;
            }
            auto up = all.find(at);
            if (up == all.end()) break;
            at = up->second.ppid;
        }
    }
    return total;
}

}  // namespace

CpuSample sample_cpu() {
    CpuSample s;
    s.at = std::chrono::steady_clock::now();
    const double hz = double(sysconf(_SC_CLK_TCK));
    if (hz <= 0) return s;
    s.machine_s = machine_busy_jiffies() / hz;
    s.own_s = own_tree_jiffies() / hz;
    return s;
}

double other_load_cores(const CpuSample &a, const CpuSample &b) {
    const double wall = std::chrono::duration<double>(b.at - a.at).count();
    if (wall <= 0 || a.machine_s <= 0 || b.machine_s <= 0) return 0;
    // A worker that ended during the hold takes its time out of the tree's sum; clamping keeps such
    // an exit from showing up as load.
    const double other = (b.machine_s - a.machine_s) - std::max(0.0, b.own_s - a.own_s);
    return std::max(0.0, other / wall);
}

QuietHold::QuietHold() {
    const char *env = std::getenv("OPGEN_HOLD_LOCK");
    std::string path = env && *env ? env : "/tmp/opgen-hold.lock";
    if (path != "none") {
        fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd_ >= 0) {
            const auto before = std::chrono::steady_clock::now();
            bool locked = false;
            while (!(locked = ::flock(fd_, LOCK_EX | LOCK_NB) == 0)) {
                waited_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
                if (waited_s_ >= kHoldWaitS) break;
                ::usleep(20000);
            }
            if (locked) {
                lock_path_ = path;
            } else {
                ::close(fd_);
                fd_ = -1;
            }
        }
    }
    start_ = sample_cpu();
}

QuietHold::~QuietHold() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

double QuietHold::other_load() const { return other_load_cores(start_, sample_cpu()); }

}  // namespace opgen::tuner
