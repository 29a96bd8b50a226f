// Several tuner processes share one kernel cache: every measurement each of them records is
// kept, and the winner of a key they all tune is the fastest any of them found.
#include "store/KernelCache.h"

#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/store/DbTestSupport.h"

namespace opgen::db {
namespace {

using test::make_kernel;
using test::make_key;
using test::make_measurement;
using test::ScratchDir;

constexpr int kWriters = 4;
constexpr int kBatches = 20;
constexpr int kRowsPerBatch = 10;

std::string row_name(int writer, int batch, int row) {
    return "writer " + std::to_string(writer) + " batch " + std::to_string(batch) + " row " +
           std::to_string(row);
}

// Distinct for every (writer, batch), and not monotonic in either, so the fastest arrives at no
// particular moment.
double shared_time_ms(int writer, int batch) {
    return 10.0 + (writer * 7 + batch * 13) % 61 + writer * 0.001 + batch * 0.00001;
}

// The body of one writer process. Returns the exit status: 0 when every write succeeded.
int run_writer(const std::string &path, int writer, int start_fd) {
    char go;
    // Wait until every writer is forked, so that they all open and write at once.
    if (read(start_fd, &go, 1) < 0) {
        return 2;
    }
    try {
        auto cache = open_kernel_cache(path);
        KernelKey shared = make_key("K=256,M=256,N=256");
        KernelKey own = make_key("K=1,M=1,N=" + std::to_string(writer));
        for (int batch = 0; batch < kBatches; batch++) {
            std::vector<MeasurementRecord> records;
            for (int row = 0; row < kRowsPerBatch; row++) {
                records.push_back(make_measurement(shared, row_name(writer, batch, row), 1.0));
            }
            cache->record_measurements(records);
            cache->put_kernel(
                make_kernel(shared, shared_time_ms(writer, batch), row_name(writer, batch, 0)));
            cache->put_kernel(make_kernel(own, 100.0 - batch, row_name(writer, batch, 0)));
        }
        return 0;
    } catch (const std::exception &error) {
        std::fprintf(stderr, "writer %d: %s\n", writer, error.what());
        return 1;
    }
}

// Runs kWriters writer processes on `path` at once and checks that nothing they wrote is lost.
void check_concurrent_writers(const std::string &path) {
    int start[2];
    ASSERT_EQ(pipe(start), 0);

    std::vector<pid_t> children;
    for (int writer = 0; writer < kWriters; writer++) {
        pid_t pid = fork();
        ASSERT_GE(pid, 0) << "fork failed";
        if (pid == 0) {
            close(start[1]);
            // _exit: the child must not run the parent's destructors (ScratchDir) or gtest's.
            _exit(run_writer(path, writer, start[0]));
        }
        children.push_back(pid);
    }
    close(start[0]);
    close(start[1]); // end of file on the pipe starts every writer at once

    for (pid_t pid : children) {
        int status = 0;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
            << "writer process " << pid << " ended with status " << status;
    }

    auto cache = open_kernel_cache(path, OpenMode::ReadOnly);
    KernelKey shared = make_key("K=256,M=256,N=256");
    std::vector<MeasurementRecord> rows = cache->measurements_for(shared);
    ASSERT_EQ(rows.size(), static_cast<size_t>(kWriters * kBatches * kRowsPerBatch));
    std::set<std::string> names;
    for (const MeasurementRecord &row : rows) {
        names.insert(row.schedule_json);
    }
    std::set<std::string> expected_names;
    double best_time = 1e300;
    std::string best_name;
    for (int writer = 0; writer < kWriters; writer++) {
        for (int batch = 0; batch < kBatches; batch++) {
            for (int row = 0; row < kRowsPerBatch; row++) {
                expected_names.insert(row_name(writer, batch, row));
            }
            if (shared_time_ms(writer, batch) < best_time) {
                best_time = shared_time_ms(writer, batch);
                best_name = row_name(writer, batch, 0);
            }
        }
    }
    EXPECT_EQ(names, expected_names);

    std::optional<KernelRecord> winner = cache->lookup(shared);
    ASSERT_TRUE(winner.has_value());
    EXPECT_EQ(winner->time_ms, best_time);
    EXPECT_EQ(winner->schedule_json, best_name);
    for (int writer = 0; writer < kWriters; writer++) {
        std::optional<KernelRecord> own =
            cache->lookup(make_key("K=1,M=1,N=" + std::to_string(writer)));
        ASSERT_TRUE(own.has_value()) << "writer " << writer;
        EXPECT_EQ(own->time_ms, 100.0 - (kBatches - 1));
    }
    CacheStats stats = cache->stats();
    EXPECT_EQ(stats.kernels, 1 + kWriters);
    EXPECT_EQ(stats.measurements, kWriters * kBatches * kRowsPerBatch);
    EXPECT_EQ(stats.ops, 1);
    EXPECT_EQ(stats.targets, 1);

    // The losers of the race to create the file leave none of their temporary files behind.
    for (const auto &entry :
         std::filesystem::directory_iterator(std::filesystem::path(path).parent_path())) {
        EXPECT_EQ(entry.path().filename().string().find(".new-"), std::string::npos)
            << entry.path();
    }
}

TEST(KernelCache, KeepsEveryRowFromConcurrentWriterProcesses) {
    ScratchDir dir;
    // No file beforehand: the writers race to create it.
    check_concurrent_writers(dir.file("cache.db"));
}

TEST(KernelCache, KeepsEveryRowWhenWritersShareAnEmptyFile) {
    ScratchDir dir;
    // An empty file in rollback mode: the writers race to switch it to WAL and create the schema.
    std::string path = dir.file("cache.db");
    test::write_bytes(path, "");
    check_concurrent_writers(path);
}

} // namespace
} // namespace opgen::db
