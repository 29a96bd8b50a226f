// Drives the real `opgen batch` on real SQLite files: shards, a SIGKILL in the middle of a batch
// and the resume, failed tasks, the report, and bad manifests.
#include "tests/batch/CommandRun.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using opgen::test::CommandRun;
using opgen::test::run_opgen;
using opgen::test::slurp;

namespace {

// shape -> created_at of every cached kernel; empty when the file is not there yet.
std::map<std::string, std::string> kernels(const fs::path &db) {
    std::map<std::string, std::string> out;
    if (!fs::exists(db)) return out;
    sqlite3 *h = nullptr;
    if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
        sqlite3_busy_timeout(h, 2000);
        sqlite3_stmt *st = nullptr;
        if (sqlite3_prepare_v2(h, "SELECT shape, created_at FROM kernels", -1, &st, nullptr) == SQLITE_OK)
            while (sqlite3_step(st) == SQLITE_ROW)
                out[reinterpret_cast<const char *>(sqlite3_column_text(st, 0))] =
                    reinterpret_cast<const char *>(sqlite3_column_text(st, 1));
        sqlite3_finalize(st);
    }
    sqlite3_close(h);
    return out;
}

int64_t measurements(const fs::path &db, const std::string &shape) {
    sqlite3 *h = nullptr;
    int64_t n = -1;
    if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
        sqlite3_stmt *st = nullptr;
        if (sqlite3_prepare_v2(h, "SELECT COUNT(*) FROM measurements WHERE shape = ?", -1, &st, nullptr) == SQLITE_OK) {
            sqlite3_bind_text(st, 1, shape.c_str(), -1, SQLITE_TRANSIENT);
            if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(h);
    return n;
}

class BatchCommand : public ::testing::Test {
protected:
    fs::path dir;
    void SetUp() override {
        dir = fs::temp_directory_path() / ("opgen-batch-" + std::to_string(::getpid()) + "-" +
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
    void TearDown() override { fs::remove_all(dir); }
    void write(const std::string &name, const std::string &text) { std::ofstream(dir / name) << text; }
};

// Small matmuls, each a few seconds to tune with few trials.
const char *small_manifest = R"({"defaults": {"trials": 2, "seed": 7},
  "entries": [{"op": "matmul", "shapes": [{"M": [32, 48, 64, 80, 96], "N": 32, "K": 32}]}]})";

}  // namespace

TEST_F(BatchCommand, ShardsTogetherListEveryTaskOnce) {
    write("m.json", small_manifest);
    std::multiset<std::string> seen;
    for (int i = 0; i < 2; i++) {
        CommandRun r = run_opgen("batch m.json --dry-run --threads 1 --shard " + std::to_string(i) + "/2", dir);
        ASSERT_EQ(r.status, 0) << r.err;
        std::istringstream lines(r.out);
        for (std::string line; std::getline(lines, line);)
            if (line.rfind("0 matmul ", 0) == 0) seen.insert(line);
        EXPECT_NE(r.out.find(i == 0 ? "shard 0/2: 3 of 5 tasks" : "shard 1/2: 2 of 5 tasks"), std::string::npos) << r.out;
    }
    EXPECT_EQ(seen.size(), 5u);
    EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), 5u);
    EXPECT_FALSE(fs::exists(dir / "opgen.db"));  // a dry run touches no database
}

// The batch is killed with SIGKILL once some (not all) winners are stored; the second run must
// skip exactly those (same rows, no new measurements for them) and tune the rest.
TEST_F(BatchCommand, ResumesAfterSigkillWithoutRetuningFinishedTasks) {
    write("m.json", small_manifest);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        if (chdir(dir.c_str()) != 0) _exit(127);
        int fd = open("first.log", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 1);
        dup2(fd, 2);
        execl(OPGEN_EXE, OPGEN_EXE, "batch", "m.json", "--db", "k.db", "--threads", "1", nullptr);
        _exit(127);
    }
    std::map<std::string, std::string> before;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(240);
    while (std::chrono::steady_clock::now() < deadline) {
        before = kernels(dir / "k.db");
        if (!before.empty()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the batch ended before it was killed:\n" << slurp(dir / "first.log");
    before = kernels(dir / "k.db");  // a task may have committed between the poll and the kill
    ASSERT_GE(before.size(), 1u);
    ASSERT_LT(before.size(), 5u) << "every task finished before the kill; nothing to resume";
    std::map<std::string, int64_t> measured;
    for (const auto &[shape, _] : before) measured[shape] = measurements(dir / "k.db", shape);

    CommandRun r = run_opgen("batch m.json --db k.db --threads 1 --report report.json", dir);
    ASSERT_EQ(r.status, 0) << r.err;
    auto after = kernels(dir / "k.db");
    EXPECT_EQ(after.size(), 5u);
    for (const auto &[shape, created] : before) {
        EXPECT_EQ(after[shape], created) << shape << " was tuned again";
        EXPECT_EQ(measurements(dir / "k.db", shape), measured[shape]) << shape << " was measured again";
    }
    auto report = nlohmann::json::parse(slurp(dir / "report.json"));
    size_t cached = 0, tuned = 0;
    for (const auto &t : report["tasks"]) {
        bool was_done = before.count(t["shape"].get<std::string>()) > 0;
        EXPECT_EQ(t["status"], was_done ? "cached" : "tuned") << t.dump();
        (was_done ? cached : tuned)++;
    }
    EXPECT_EQ(cached, before.size());
    EXPECT_EQ(tuned, 5 - before.size());
    // Plain progress lines (stderr is not a terminal) and the summary table.
    EXPECT_NE(r.err.find("batch 5/5 done (" + std::to_string(tuned) + " tuned, " + std::to_string(cached) + " cached, 0 failed)"),
              std::string::npos) << r.err;
    EXPECT_NE(r.err.find("ETA"), std::string::npos);
    EXPECT_NE(r.out.find("status"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("total: 5 tasks"), std::string::npos) << r.out;
}

TEST_F(BatchCommand, FailedTasksAreListedAndTheExitIsNonZero) {
    // The accelerator target cannot run on this machine: its task fails, the others go on.
    write("m.json", R"({"entries": [
        {"op": "matmul", "shapes": ["M=32,N=32,K=32"], "trials": 2},
        {"op": "matmul", "shapes": ["M=64,N=32,K=32"], "target": "accelerator", "trials": 2},
        {"op": "relu", "shapes": ["M=64,N=64"], "trials": 2}]})");
    CommandRun r = run_opgen("batch m.json --db k.db --threads 1 --quiet --report report.json", dir);
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("failed tasks:\n  entry 1 matmul K=32,M=64,N=32: target 'accelerator' cannot be measured"),
              std::string::npos) << r.err;
    EXPECT_NE(r.err.find("error: batch 'm.json': 1 of 3 tasks failed (listed above)\n"), std::string::npos) << r.err;
    EXPECT_EQ(kernels(dir / "k.db").size(), 2u);
    auto report = nlohmann::json::parse(slurp(dir / "report.json"));
    ASSERT_EQ(report["tasks"].size(), 3u);
    EXPECT_EQ(report["tasks"][0]["status"], "tuned");
    EXPECT_EQ(report["tasks"][1]["status"], "failed");
    EXPECT_EQ(report["tasks"][2]["status"], "tuned");
    EXPECT_TRUE(report["tasks"][0]["kernel"]["verified"].get<bool>());
}

TEST_F(BatchCommand, BadManifestIsOneErrorLineAndNoDatabase) {
    write("m.json", R"({"entries": [{"op": "matmul", "shapes": ["M=32,N=32,K=32"]},
                                   {"op": "matmul", "shapes": [{"M": 8, "N": 8}]}]})");
    CommandRun r = run_opgen("batch m.json --db k.db", dir);
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err.rfind("error: manifest 'm.json' entry 1 field \"shapes[0]\": ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(dir / "k.db"));
    r = run_opgen("batch m.json --db k.db --shard 2/2", dir);
    EXPECT_EQ(r.err, "error: --shard '2/2': need 0 <= i < N, got i=2 N=2\n");
    EXPECT_FALSE(fs::exists(dir / "k.db"));
}
