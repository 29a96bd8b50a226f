// The kernel cache's fault suite, after SQLite's own: a corrupt, newer, foreign, read-only,
// missing or locked file raises DbError naming the path and what is wrong, leaves the file as it
// was, and a failed write leaves no part of itself behind.
#include "store/KernelCache.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/store/DbTestSupport.h"

namespace opgen::db {
namespace {

using test::db_error_of;
using test::make_kernel;
using test::make_key;
using test::make_measurement;
using test::RawDb;
using test::read_bytes;
using test::ScopedEnv;
using test::ScratchDir;
using test::write_bytes;


bool exists(const std::string &path) {
    return std::filesystem::exists(path);
}

void expect_no_sidecar_files(const std::string &path) {
    EXPECT_FALSE(exists(path + "-wal"));
    EXPECT_FALSE(exists(path + "-shm"));
    EXPECT_FALSE(exists(path + "-journal"));
}

// A closed cache with one kernel and a few measurements.
void make_cache(const std::string &path) {
    auto cache = open_kernel_cache(path);
    cache->put_kernel(make_kernel(make_key(), 1.0));
    cache->record_measurements({make_measurement(make_key(), "m1", 1.0)});
}

TEST(KernelCache, RefusesFileThatIsNotADatabase) {
    ScratchDir dir;
    std::string path = dir.file("notes.db");
    std::string garbage;
    for (int i = 0; i < 8192; i++) {
        garbage.push_back(static_cast<char>((i * 131 + 7) % 251));
    }
    write_bytes(path, garbage);

    for (OpenMode mode : {OpenMode::ReadWrite, OpenMode::ReadOnly}) {
        std::string message = db_error_of([&] { open_kernel_cache(path, mode); });
        EXPECT_EQ(message,
                  "database '" + path + "' is not an opgen kernel cache: file is not a database");
    }
    EXPECT_EQ(read_bytes(path), garbage);
    expect_no_sidecar_files(path);
}

TEST(KernelCache, ReportsCorruptPages) {
    ScratchDir dir;
    std::string path = dir.file("cache.db");
    {
        auto cache = open_kernel_cache(path);
        for (int i = 0; i < 50; i++) {
            cache->put_kernel(make_kernel(make_key("M=" + std::to_string(i)), 1.0));
        }
    }
    // Keep the header page, so the file still looks like a database, and smash the rest.
    std::string bytes = read_bytes(path);
    ASSERT_GT(bytes.size(), 4096u * 3);
    for (size_t i = 4096; i < bytes.size(); i++) {
        bytes[i] = static_cast<char>(0xa5);
    }
    write_bytes(path, bytes);

    std::string message = db_error_of([&] {
        auto cache = open_kernel_cache(path);
        cache->lookup(make_key("M=7"));
        cache->kernels_for("matmul", make_key().target);
        cache->stats();
    });
    EXPECT_NE(message.find("database '" + path + "'"), std::string::npos) << message;
    EXPECT_NE(message.find("malformed"), std::string::npos) << message;
}

TEST(KernelCache, RefusesNewerSchema) {
    ScratchDir dir;
    std::string path = dir.file("cache.db");
    make_cache(path);
    RawDb(path).exec("PRAGMA user_version = 99");
    std::string before = read_bytes(path);

    std::string expected = "database '" + path +
                           "' has schema version 99, newer than version " +
                           std::to_string(kernel_cache_schema_version()) + " that this build of "
                           "opgen reads; use a newer opgen";
    EXPECT_EQ(db_error_of([&] { open_kernel_cache(path); }), expected);
    EXPECT_EQ(db_error_of([&] { open_kernel_cache(path, OpenMode::ReadOnly); }), expected);
    EXPECT_EQ(read_bytes(path), before);
    EXPECT_EQ(RawDb(path).integer("PRAGMA user_version"), 99);
}

TEST(KernelCache, RefusesForeignTables) {
    ScratchDir dir;
    std::string path = dir.file("people.db");
    write_bytes(path, ""); // RawDb never creates a file
    RawDb(path).exec("CREATE TABLE people (name TEXT); INSERT INTO people VALUES ('ada')");
    std::string before = read_bytes(path);

    EXPECT_EQ(db_error_of([&] { open_kernel_cache(path); }),
              "database '" + path +
                  "' is not an opgen kernel cache: it has no schema version but holds 1 other "
                  "table(s), e.g. 'people'");
    EXPECT_EQ(read_bytes(path), before);
    EXPECT_EQ(RawDb(path).integer("PRAGMA user_version"), 0);
}

TEST(KernelCache, RefusesWritesToReadOnlyFile) {
    ScratchDir dir;
    std::string path = dir.file("cache.db");
    make_cache(path);
    ASSERT_EQ(chmod(path.c_str(), 0444), 0);
    std::string before = read_bytes(path);

    // Whoever runs the test, ReadOnly mode serves lookups and refuses every write.
    {
        auto cache = open_kernel_cache(path, OpenMode::ReadOnly);
        EXPECT_TRUE(cache->lookup(make_key()).has_value());
        std::string message = db_error_of([&] { cache->put_kernel(make_kernel(make_key(), 0.1)); });
        EXPECT_EQ(message, "database '" + path +
                               "' is opened read-only: storing the kernel for op 'matmul' shape "
                               "'K=512,M=512,N=512' dtype 'f32' on target 'host-x86-64-avx2' is "
                               "not allowed");
        message = db_error_of(
            [&] { cache->record_measurements({make_measurement(make_key(), "m2", 0.1)}); });
        EXPECT_NE(message.find("is opened read-only"), std::string::npos) << message;
        EXPECT_EQ(cache->stats().measurements, 1);
        EXPECT_EQ(cache->lookup(make_key())->time_ms, 1.0);
    }
    EXPECT_EQ(read_bytes(path), before);

    if (geteuid() != 0) {
        // A 0444 file is read-only for everyone but root.
        std::string message = db_error_of([&] { open_kernel_cache(path); });
        EXPECT_EQ(message, "database '" + path + "' is read-only: permission denied");
        EXPECT_EQ(read_bytes(path), before);
    } else {
        // root may write any file, so ReadWrite opens it and writes go through: the permission
        // bits alone cannot protect a cache from root.
        auto cache = open_kernel_cache(path);
        EXPECT_TRUE(cache->put_kernel(make_kernel(make_key(), 0.1)));
    }
}

TEST(KernelCache, RefusesMissingFileInReadOnlyMode) {
    ScratchDir dir;
    std::string path = dir.file("missing.db");
    EXPECT_EQ(db_error_of([&] { open_kernel_cache(path, OpenMode::ReadOnly); }),
              "database '" + path + "' does not exist");
    EXPECT_FALSE(exists(path));
    expect_no_sidecar_files(path);
}

TEST(KernelCache, CreatesNothingInMissingDirectory) {
    ScratchDir dir;
    std::string missing = dir.file("no/such");
    std::string path = missing + "/cache.db";
    EXPECT_EQ(db_error_of([&] { open_kernel_cache(path); }),
              "cannot create database '" + path + "': directory '" + missing + "' does not exist");
    EXPECT_FALSE(exists(dir.file("no")));
    EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(KernelCache, CreatesNothingInUnwritableDirectory) {
    ScratchDir dir;
    // root writes any ordinary directory; sysfs refuses even root.
    std::string directory = geteuid() == 0 ? "/sys" : dir.path();
    if (geteuid() != 0) {
        ASSERT_EQ(chmod(directory.c_str(), 0555), 0);
    }
    std::string path = directory + "/opgen-cache.db";
    std::string message = db_error_of([&] { open_kernel_cache(path); });
    EXPECT_EQ(message, "cannot create database '" + path + "': directory '" + directory +
                           "' is not writable");
    EXPECT_FALSE(exists(path));
}

TEST(KernelCache, ReportsLockedDatabaseAndRecovers) {
    ScratchDir dir;
    std::string path = dir.file("cache.db");
    ScopedEnv timeout("OPGEN_DB_BUSY_TIMEOUT_MS", "200");
    auto cache = open_kernel_cache(path);
    KernelKey key = make_key();

    RawDb other(path);
    other.exec("BEGIN EXCLUSIVE");
    auto start = std::chrono::steady_clock::now();
    std::string message = db_error_of([&] { cache->put_kernel(make_kernel(key, 1.0)); });
    double waited_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(message, "database '" + path +
                           "' is locked: storing the kernel for op 'matmul' shape "
                           "'K=512,M=512,N=512' dtype 'f32' on target 'host-x86-64-avx2' gave up "
                           "after waiting 200 ms for another connection");
    EXPECT_GE(waited_s, 0.15);
    EXPECT_LT(waited_s, 5.0); // the variable overrides the 10 s default

    message = db_error_of([&] { cache->record_measurements({make_measurement(key, "m", 1.0)}); });
    EXPECT_NE(message.find("is locked"), std::string::npos) << message;
    // In WAL mode a writer's lock does not stop readers.
    EXPECT_FALSE(cache->lookup(key).has_value());
    EXPECT_EQ(cache->stats().measurements, 0);

    other.exec("COMMIT");
    EXPECT_TRUE(cache->put_kernel(make_kernel(key, 1.0)));
    cache->record_measurements({make_measurement(key, "m", 1.0)});
    EXPECT_EQ(cache->stats().kernels, 1);
    EXPECT_EQ(cache->stats().measurements, 1);
}

TEST(KernelCache, RollsBackBatchThatFailsHalfway) {
    ScratchDir dir;
    std::string path = dir.file("cache.db");
    auto cache = open_kernel_cache(path);
    KernelKey key = make_key();
    // A fault planted behind the cache's back: the third insert of the batch fails.
    RawDb(path).exec("CREATE TRIGGER fault BEFORE INSERT ON measurements "
                     "WHEN NEW.schedule_json = 'boom' BEGIN SELECT RAISE(ABORT, 'injected'); END");

    std::string message = db_error_of([&] {
        cache->record_measurements(
            {make_measurement(key, "m1", 1.0), make_measurement(key, "m2", 1.0),
             make_measurement(key, "boom", 1.0), make_measurement(key, "m4", 1.0)});
    });
    EXPECT_NE(message.find("database '" + path + "'"), std::string::npos) << message;
    EXPECT_NE(message.find("injected"), std::string::npos) << message;
    CacheStats stats = cache->stats();
    EXPECT_EQ(stats.measurements, 0);
    EXPECT_EQ(stats.ops, 0);
    EXPECT_EQ(stats.targets, 0);

    // The connection is not left inside the failed transaction.
    cache->record_measurements({make_measurement(key, "m1", 1.0)});
    EXPECT_EQ(cache->stats().measurements, 1);
}

TEST(KernelCache, RollsBackKernelWhoseOpRowFails) {
    ScratchDir dir;
    std::string path = dir.file("cache.db");
    auto cache = open_kernel_cache(path);
    KernelKey key = make_key();
    RawDb(path).exec("CREATE TRIGGER fault BEFORE INSERT ON targets "
                     "BEGIN SELECT RAISE(ABORT, 'injected'); END");

    std::string message = db_error_of([&] { cache->put_kernel(make_kernel(key, 1.0)); });
    EXPECT_NE(message.find("injected"), std::string::npos) << message;
    EXPECT_FALSE(cache->lookup(key).has_value());
    EXPECT_EQ(cache->stats().ops, 0);
}

TEST(KernelCache, RefusesKernelWithoutTime) {
    ScratchDir dir;
    auto cache = open_kernel_cache(dir.file("cache.db"));
    std::string message =
        db_error_of([&] { cache->put_kernel(make_kernel(make_key(), std::nan(""))); });
    EXPECT_NE(message.find("time_ms is nan"), std::string::npos) << message;
    EXPECT_EQ(cache->stats().kernels, 0);
}

TEST(KernelCache, RefusesBadBusyTimeoutVariable) {
    ScratchDir dir;
    std::string path = dir.file("cache.db");
    ScopedEnv timeout("OPGEN_DB_BUSY_TIMEOUT_MS", "soon");
    EXPECT_EQ(db_error_of([&] { open_kernel_cache(path); }),
              "database '" + path +
                  "': OPGEN_DB_BUSY_TIMEOUT_MS is 'soon', not a number of "
                  "milliseconds");
    EXPECT_FALSE(exists(path));
}

} // namespace
} // namespace opgen::db
