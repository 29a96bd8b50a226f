// Drives `opgen tune` as a process: a candidate made to crash or hang (the test-only hook) is
// recorded as failed and the run goes on, and a run killed with SIGKILL and started again with the
// same arguments measures nothing twice. Tiny shapes, so each test takes seconds.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path &p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// schedule_json -> status of every recorded measurement (-1 rows when the table cannot be read).
std::multimap<std::string, std::string> measurements(const fs::path &db) {
    std::multimap<std::string, std::string> out;
    sqlite3 *h = nullptr;
    if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
        sqlite3_close(h);
        return out;
    }
    sqlite3_busy_timeout(h, 5000);
    sqlite3_stmt *st = nullptr;
    if (sqlite3_prepare_v2(h, "SELECT schedule_json, status FROM measurements", -1, &st, nullptr) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW) {
            out.emplace(reinterpret_cast<const char *>(sqlite3_column_text(st, 0)),
                        reinterpret_cast<const char *>(sqlite3_column_text(st, 1)));
        }
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
    return out;
}

// Starts opgen with `args` in `dir`, stdout and stderr to files; returns its pid.
pid_t start(const std::vector<std::string> &args, const fs::path &dir) {
    pid_t pid = fork();
    if (pid == 0) {
        if (chdir(dir.c_str()) != 0) _exit(126);
        FILE *o = freopen("stdout.txt", "w", stdout);
        FILE *e = freopen("stderr.txt", "w", stderr);
        (void)o;
        (void)e;
        std::vector<char *> argv;
        std::string exe = OPGEN_EXE;
        argv.push_back(exe.data());
        std::vector<std::string> copy = args;
        for (auto &a : copy) argv.push_back(a.data());
        argv.push_back(nullptr);
        execv(exe.c_str(), argv.data());
        _exit(127);
    }
    return pid;
}

int wait_exit(pid_t pid) {
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class TuneRun : public ::testing::Test {
protected:
    fs::path dir;
    void SetUp() override {
        dir = fs::temp_directory_path() /
              ("opgen-tune-run-" + std::to_string(getpid()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
    void TearDown() override { fs::remove_all(dir); }
};

}  // namespace

TEST_F(TuneRun, CrashAndHangAreRecordedAndTheRunGoesOn) {
    pid_t pid = start({"tune", "--op", "matmul", "--shape", "M=16,N=32,K=8", "--threads", "1", "--trials", "6",
                       "--jobs", "2", "--timeout", "10", "--min-time", "1", "--db", "t.db", "--json",
                       "--test-fault", "crash:2,hang:3,crash-timing:4"},
                      dir);
    ASSERT_EQ(wait_exit(pid), 0) << slurp(dir / "stderr.txt");
    auto j = nlohmann::json::parse(slurp(dir / "stdout.txt"));
    EXPECT_EQ(j["answer"], "tuned");
    EXPECT_TRUE(j["verified"].get<bool>());
    const auto &run = j["run"];
    EXPECT_EQ(run["trials"].size(), 6u);
    EXPECT_EQ(run["failed"], 3);
    EXPECT_EQ(run["worker_restarts"], 3);
    std::multiset<std::string> statuses;
    for (const auto &t : run["trials"]) statuses.insert(t["status"].get<std::string>());
    EXPECT_EQ(statuses.count("crash"), 2u);
    EXPECT_EQ(statuses.count("timeout"), 1u);
    EXPECT_EQ(statuses.count("ok"), 3u);
    // Every trial, failed ones with their reason, is in the database as training data.
    auto rows = measurements(dir / "t.db");
    EXPECT_EQ(rows.size(), 6u);
    int crash = 0, timeout = 0;
    for (const auto &r : rows) {
        crash += r.second == "crash";
        timeout += r.second == "timeout";
    }
    EXPECT_EQ(crash, 2);
    EXPECT_EQ(timeout, 1);
}

// A run killed with SIGKILL mid-way, then started again with the same arguments: what the first
// recorded is reused, nothing is measured twice, and the trial budget is met in total.
TEST_F(TuneRun, SigkillAndResumeMeasureNothingTwice) {
    const std::vector<std::string> args = {"tune",   "--op",         "matmul", "--shape", "M=64,N=64,K=64",
                                           "--threads", "1",         "--trials", "16",     "--jobs",
                                           "2",      "--min-time",   "20",     "--db",    "r.db"};
    pid_t pid = start(args, dir);
    size_t before = 0;
    auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(240)) {
        before = measurements(dir / "r.db").size();
        if (before >= 5) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_GE(before, 5u) << slurp(dir / "stderr.txt");
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    auto first = measurements(dir / "r.db");
    ASSERT_GE(first.size(), 5u);
    ASSERT_LT(first.size(), 16u) << "the run ended before it was killed";

    std::vector<std::string> again = args;
    again.push_back("--json");
    pid = start(again, dir);
    ASSERT_EQ(wait_exit(pid), 0) << slurp(dir / "stderr.txt");
    auto j = nlohmann::json::parse(slurp(dir / "stdout.txt"));
    const auto &run = j["run"];
    EXPECT_EQ(run["trials"].size(), 16u);
    EXPECT_EQ(run["reused"].get<size_t>(), first.size());
    EXPECT_EQ(run["measured"].get<size_t>(), 16u - first.size());
    auto all = measurements(dir / "r.db");
    EXPECT_EQ(all.size(), 16u);
    std::set<std::string> distinct;
    for (const auto &r : all) distinct.insert(r.first);
    EXPECT_EQ(distinct.size(), all.size()) << "a point was measured twice";
    for (const auto &r : first) EXPECT_EQ(all.count(r.first), 1u);
}

// `--force` re-tunes a key the cache has, and measures every point again rather than taking the
// figures an earlier run recorded (under other load); both runs' rows stay as training data.
TEST_F(TuneRun, ForceMeasuresEveryPointAfresh) {
    const std::vector<std::string> args = {"tune",      "--op", "matmul",   "--shape", "M=32,N=32,K=32",
                                           "--threads", "1",    "--trials", "6",       "--jobs",
                                           "1",         "--min-time", "10", "--db",    "f.db", "--json"};
    pid_t pid = start(args, dir);
    ASSERT_EQ(wait_exit(pid), 0) << slurp(dir / "stderr.txt");
    const size_t first = measurements(dir / "f.db").size();
    ASSERT_EQ(first, 6u);

    std::vector<std::string> again = args;
    again.push_back("--force");
    pid = start(again, dir);
    ASSERT_EQ(wait_exit(pid), 0) << slurp(dir / "stderr.txt");
    auto j = nlohmann::json::parse(slurp(dir / "stdout.txt"));
    EXPECT_EQ(j["answer"], "tuned");
    EXPECT_EQ(j["run"]["reused"].get<size_t>(), 0u);
    EXPECT_EQ(j["run"]["measured"].get<size_t>(), 6u);
    EXPECT_EQ(measurements(dir / "f.db").size(), 2 * first);
}
