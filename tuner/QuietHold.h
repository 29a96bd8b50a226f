// The quiet hold: the finalists of a tune are re-timed while this process holds the machine's
// measurement lock, and the hold reports how much CPU other processes used meanwhile, so a tune
// can say when its winner was chosen on a machine that was not quiet (docs/design.md §2.7).
//
// The lock is an exclusive flock on a file every opgen process agrees on (OPGEN_HOLD_LOCK, default
// /tmp/opgen-hold.lock; "none" takes no lock): two tunes on one machine then never time their
// finalists at the same moment. It is not the lock the benchmark scripts are run under by hand
// (/tmp/opgen-measure.lock), which a script's own tunes would otherwise wait for forever. The wait is
// bounded: past kHoldWaitS the finalists are timed without the lock, and the tune says so. The load is the
// busy CPU time of the whole machine (/proc/stat) less that of this process and its descendants
// (the tuner and its workers), over the hold's wall time, in cores.
#ifndef OPGEN_TUNER_QUIET_HOLD_H
#define OPGEN_TUNER_QUIET_HOLD_H

#include <chrono>
#include <string>

namespace opgen::tuner {

// Busy CPU seconds: of the whole machine since boot, and of this process and its descendants.
struct CpuSample {
    double machine_s = 0;
    double own_s = 0;
    std::chrono::steady_clock::time_point at;
};

// Reads both counters now; zeros where /proc cannot be read (then no load is ever reported).
CpuSample sample_cpu();

// Cores' worth of CPU that processes other than this one and its descendants used between `a` and
// `b` (0 or more).
double other_load_cores(const CpuSample &a, const CpuSample &b);

class QuietHold {
public:
    // Waits up to kHoldWaitS for the lock (none is taken when OPGEN_HOLD_LOCK is "none" or the file
    // cannot be opened: then the hold only measures) and takes the first sample.
    QuietHold();
    ~QuietHold();
    QuietHold(const QuietHold &) = delete;
    QuietHold &operator=(const QuietHold &) = delete;

    // Other processes' load since the hold began, in cores.
    double other_load() const;
    // The lock file held, or "" when none is.
    const std::string &lock_path() const { return lock_path_; }
    // Seconds spent waiting for the lock.
    double waited_s() const { return waited_s_; }

private:
    int fd_ = -1;
    std::string lock_path_;
    double waited_s_ = 0;
    CpuSample start_;
};

// The longest wait for the lock, in seconds.
inline constexpr double kHoldWaitS = 120;

// The load above which a hold counts as not quiet: a tenth of a core.
inline constexpr double kQuietLoadCores = 0.1;

}  // namespace opgen::tuner

#endif
