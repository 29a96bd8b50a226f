// The quiet hold around a tune's final timing: the load it reports is the machine's less the
// tuner's own process tree, and the hold lock keeps a second holder out until it is released.
#include "tuner/QuietHold.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

using namespace opgen::tuner;

namespace {

CpuSample at(double machine_s, double own_s, double wall_s) {
    CpuSample s;
    s.machine_s = machine_s;
    s.own_s = own_s;
    s.at = std::chrono::steady_clock::time_point(std::chrono::milliseconds(int64_t(wall_s * 1000)));
    return s;
}

// Spins for `seconds` in a process that is not a descendant of this one (a double fork: the
// spinner's parent exits at once, so it is reparented away from the test).
void spin_elsewhere(double seconds) {
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        if (fork() == 0) {
            auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
            volatile double x = 0;
            while (std::chrono::steady_clock::now() < end) x = x + 1;
            _exit(0);
        }
        _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
}

}  // namespace

TEST(QuietHold, OtherLoadIsTheMachinesLessTheTunersOwn) {
    EXPECT_DOUBLE_EQ(other_load_cores(at(100, 10, 0), at(106, 12, 2)), 2.0);  // 6 busy, 2 ours, 2 s
    EXPECT_DOUBLE_EQ(other_load_cores(at(100, 10, 0), at(102, 12, 2)), 0.0);  // all of it ours
    // A worker that ended takes its time out of the tree's sum: never negative own time.
    EXPECT_DOUBLE_EQ(other_load_cores(at(100, 10, 0), at(101, 5, 1)), 1.0);
    EXPECT_DOUBLE_EQ(other_load_cores(at(0, 0, 0), at(0, 0, 1)), 0.0);  // /proc unreadable: no load
    EXPECT_DOUBLE_EQ(other_load_cores(at(100, 10, 1), at(106, 12, 1)), 0.0);  // no wall time
}

TEST(QuietHold, SeesAProcessThatIsNotTheTunersSpinning) {
    setenv("OPGEN_HOLD_LOCK", "none", 1);
    QuietHold hold;
    spin_elsewhere(0.6);
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    EXPECT_GT(hold.other_load(), 0.3);
    EXPECT_EQ(hold.lock_path(), "");
    unsetenv("OPGEN_HOLD_LOCK");
}

TEST(QuietHold, HoldsTheLockUntilItEnds) {
    const std::string path = ::testing::TempDir() + "opgen-hold-" + std::to_string(getpid()) + ".lock";
    setenv("OPGEN_HOLD_LOCK", path.c_str(), 1);
    int probe = open(path.c_str(), O_RDWR | O_CREAT, 0666);
    ASSERT_GE(probe, 0);
    {
        QuietHold hold;
        EXPECT_EQ(hold.lock_path(), path);
        EXPECT_NE(flock(probe, LOCK_EX | LOCK_NB), 0) << "a second holder got the lock";
    }
    EXPECT_EQ(flock(probe, LOCK_EX | LOCK_NB), 0) << "the lock outlived the hold";
    close(probe);
    unlink(path.c_str());
    unsetenv("OPGEN_HOLD_LOCK");
}
