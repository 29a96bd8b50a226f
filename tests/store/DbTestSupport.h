// Helpers shared by the db tests: a scratch directory removed after each test, keys and records
// with recognisable values, raw SQLite access to reach behind the cache's back (to plant a newer
// version, a lock or a fault), and an environment variable set for one scope.
#ifndef OPGEN_TESTS_DB_DB_TEST_SUPPORT_H
#define OPGEN_TESTS_DB_DB_TEST_SUPPORT_H

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>

#include <sqlite3.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "store/KernelCache.h"

namespace opgen::db::test {

// A fresh directory under the test temp dir; removed with everything in it on destruction.
class ScratchDir {
public:
    ScratchDir() {
        std::string pattern = ::testing::TempDir() + "opgen_db_XXXXXX";
        if (!mkdtemp(pattern.data())) {
            throw std::runtime_error("cannot create a scratch directory from '" + pattern + "'");
        }
        path_ = pattern;
    }
    ~ScratchDir() {
        std::error_code ignored;
        // A test may have made it read-only; give write access back so it can be removed.
        chmod(path_.c_str(), 0755);
        std::filesystem::remove_all(path_, ignored);
    }
    ScratchDir(const ScratchDir &) = delete;
    ScratchDir &operator=(const ScratchDir &) = delete;

    const std::string &path() const { return path_; }
    std::string file(const std::string &name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

// Sets an environment variable for the life of the object, then restores the old value.
class ScopedEnv {
public:
    ScopedEnv(const char *name, const std::string &value) : name_(name) {
        if (const char *old = std::getenv(name)) {
            old_ = std::string(old);
        }
        setenv(name, value.c_str(), 1);
    }
    ~ScopedEnv() {
        if (old_) {
            setenv(name_, old_->c_str(), 1);
        } else {
            unsetenv(name_);
        }
    }
    ScopedEnv(const ScopedEnv &) = delete;
    ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
    const char *name_;
    std::optional<std::string> old_;
};

inline KernelKey make_key(const std::string &shape = "K=512,M=512,N=512",
                          const std::string &target = "host-x86-64-avx2",
                          const std::string &op_name = "matmul") {
    KernelKey key;
    key.op_name = op_name;
    key.op_hash = "9f2c4e1ab7d03355";
    key.shape = shape;
    key.dtype = "f32";
    key.target = target;
    key.halide_version = "14.0.0";
    key.tuner_version = "0.1.0";
    return key;
}

inline KernelRecord make_kernel(const KernelKey &key, double time_ms,
                                const std::string &schedule_json = R"({"tile":[32,32]})") {
    KernelRecord record;
    record.key = key;
    record.schedule_json = schedule_json;
    record.schedule_source = "C.split(x, xo, xi, 32).vectorize(xi, 16);\n";
    record.time_ms = time_ms;
    record.gflops = 2.0 * 512 * 512 * 512 / (time_ms * 1e6);
    record.default_time_ms = time_ms * 7.5;
    record.verified = true;
    record.trials = 640;
    return record;
}

inline MeasurementRecord make_measurement(const KernelKey &key, const std::string &schedule_json,
                                          double time_ms) {
    MeasurementRecord record;
    record.key = key;
    record.schedule_json = schedule_json;
    record.features = {1.0f, 0.5f, -3.25f, 1e-7f, 4096.0f, 0.0f};
    record.feature_rows = 2;
    record.time_ms = time_ms;
    record.gflops = 100.0 / time_ms;
    return record;
}

// The message of the DbError that `action` raises; fails the test when it raises none.
template <typename Action> std::string db_error_of(Action action) {
    try {
        action();
    } catch (const DbError &error) {
        return error.what();
    }
    ADD_FAILURE() << "expected a DbError, none was raised";
    return "";
}

inline std::string read_bytes(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::string &path, const std::string &bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A connection of our own, opened without the cache, for planting faults.
class RawDb {
public:
    explicit RawDb(const std::string &path) {
        if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
            std::string reason = sqlite3_errmsg(db_);
            sqlite3_close_v2(db_);
            throw std::runtime_error("raw open of '" + path + "' failed: " + reason);
        }
    }
    ~RawDb() { sqlite3_close_v2(db_); }
    RawDb(const RawDb &) = delete;
    RawDb &operator=(const RawDb &) = delete;

    void exec(const std::string &sql) {
        if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
            throw std::runtime_error("raw '" + sql + "' failed: " + sqlite3_errmsg(db_));
        }
    }

    // The first column of the first row of `sql`, as text ("" when there is no row).
    std::string text(const std::string &sql) {
        sqlite3_stmt *statement = nullptr;
        if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &statement, nullptr) != SQLITE_OK) {
            throw std::runtime_error("raw '" + sql + "' failed: " + sqlite3_errmsg(db_));
        }
        std::string value;
        int rc = sqlite3_step(statement);
        if (rc == SQLITE_ROW) {
            const auto *data = static_cast<const char *>(sqlite3_column_blob(statement, 0));
            value.assign(data ? data : "", static_cast<size_t>(sqlite3_column_bytes(statement, 0)));
        }
        sqlite3_finalize(statement);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
            throw std::runtime_error("raw '" + sql + "' failed: " + sqlite3_errmsg(db_));
        }
        return value;
    }

    int64_t integer(const std::string &sql) { return std::stoll(text(sql)); }

private:
    sqlite3 *db_ = nullptr;
};

// The version-1 schema as it shipped: a fixture, since files written by it exist. It must not
// follow later edits of store/Schema.cpp.
inline const char *const kVersion1Schema = R"sql(
CREATE TABLE ops (name TEXT NOT NULL, op_hash TEXT NOT NULL, UNIQUE (name, op_hash));
CREATE TABLE targets (name TEXT NOT NULL UNIQUE);
CREATE TABLE kernels (
    op_name TEXT NOT NULL, op_hash TEXT NOT NULL, shape TEXT NOT NULL, dtype TEXT NOT NULL,
    target TEXT NOT NULL, halide_version TEXT NOT NULL, tuner_version TEXT NOT NULL,
    schedule_json TEXT NOT NULL, schedule_source TEXT NOT NULL, time_ms REAL NOT NULL,
    gflops REAL, default_time_ms REAL, verified INTEGER NOT NULL, trials INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (target, op_name, op_hash, shape, dtype, halide_version, tuner_version));
CREATE TABLE measurements (
    id INTEGER PRIMARY KEY AUTOINCREMENT, op_name TEXT NOT NULL, op_hash TEXT NOT NULL,
    shape TEXT NOT NULL, dtype TEXT NOT NULL, target TEXT NOT NULL,
    halide_version TEXT NOT NULL, tuner_version TEXT NOT NULL, schedule_json TEXT NOT NULL,
    features BLOB NOT NULL, feature_rows INTEGER NOT NULL, time_ms REAL, gflops REAL,
    status TEXT NOT NULL, error TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE INDEX measurements_by_key ON measurements
    (target, op_name, op_hash, shape, dtype, halide_version, tuner_version);
CREATE TABLE models (
    id INTEGER PRIMARY KEY AUTOINCREMENT, target TEXT NOT NULL, name TEXT NOT NULL,
    created_at TEXT NOT NULL, train_rows INTEGER NOT NULL, quality_json TEXT NOT NULL,
    bytes BLOB NOT NULL);
CREATE INDEX models_by_target ON models (target, name);
INSERT INTO ops VALUES ('matmul', '9f2c4e1ab7d03355');
INSERT INTO targets VALUES ('host-x86-64-avx2');
INSERT INTO kernels VALUES ('matmul', '9f2c4e1ab7d03355', 'K=512,M=512,N=512', 'f32',
    'host-x86-64-avx2', '14.0.0', '0.1.0', '{"tile":[32,32]}', 'C.vectorize(x, 16);', 0.5, 537.0,
    3.75, 1, 640, '2024-05-06T07:08:09Z');
PRAGMA user_version = 1;
)sql";

// Writes a version-1 cache holding one matmul kernel (make_key()'s) at `path`; returns `path`.
inline std::string make_version1_file(const std::string &path) {
    write_bytes(path, "");
    RawDb(path).exec(kVersion1Schema);
    return path;
}

// What version 2 added to version 1, as it shipped, and the kernel_variants table that
// VariantStore made on first use while the schema was at version 2: fixtures, like kVersion1Schema.
inline const char *const kVersion2Step = R"sql(
CREATE INDEX kernels_by_shape ON kernels (target, op_name, dtype, shape, time_ms);
ALTER TABLE ops ADD COLUMN source TEXT NOT NULL DEFAULT '';
PRAGMA user_version = 2;
)sql";
inline const char *const kVersion2Variants = R"sql(
CREATE TABLE IF NOT EXISTS kernel_variants (
    op_name TEXT NOT NULL, op_hash TEXT NOT NULL, shape TEXT NOT NULL, dtype TEXT NOT NULL,
    target TEXT NOT NULL, halide_version TEXT NOT NULL, tuner_version TEXT NOT NULL,
    level REAL NOT NULL, load TEXT NOT NULL, schedule_json TEXT NOT NULL,
    schedule_source TEXT NOT NULL, time_ms REAL NOT NULL, quiet_time_ms REAL,
    trials INTEGER NOT NULL, created_at TEXT NOT NULL,
    PRIMARY KEY (target, op_name, op_hash, shape, dtype, halide_version, tuner_version, level));
INSERT INTO kernel_variants VALUES ('matmul', '9f2c4e1ab7d03355', 'K=512,M=512,N=512', 'f32',
    'host-x86-64-avx2', '14.0.0', '0.1.0', 0.5, '1 thread x 100% streaming 64 MiB', '{"tile":[16,16]}',
    '// variant', 0.9, 0.6, 24, '2024-05-06T07:08:09Z');
)sql";

// Writes a version-2 cache at `path`: version 1's kernel, three measurements of it and one of
// another shape (created at known times), and with `with_variants` one variant; returns `path`.
inline std::string make_version2_file(const std::string &path, bool with_variants) {
    make_version1_file(path);
    RawDb raw(path);
    raw.exec(kVersion2Step);
    raw.exec(R"sql(
INSERT INTO measurements (op_name, op_hash, shape, dtype, target, halide_version, tuner_version,
                          schedule_json, features, feature_rows, time_ms, gflops, status, error,
                          created_at)
VALUES
    ('matmul', '9f2c4e1ab7d03355', 'K=512,M=512,N=512', 'f32', 'host-x86-64-avx2', '14.0.0',
     '0.1.0', 'a', x'', 0, 0.7, 380.0, 'ok', '', '2024-05-06T07:00:00Z'),
    ('matmul', '9f2c4e1ab7d03355', 'K=64,M=64,N=64', 'f32', 'host-x86-64-avx2', '14.0.0',
     '0.1.0', 'z', x'', 0, 0.01, 50.0, 'ok', '', '2024-05-06T07:00:30Z'),
    ('matmul', '9f2c4e1ab7d03355', 'K=512,M=512,N=512', 'f32', 'host-x86-64-avx2', '14.0.0',
     '0.1.0', 'b', x'', 0, NULL, NULL, 'timeout', 'ran over', '2024-05-06T07:01:00Z'),
    ('matmul', '9f2c4e1ab7d03355', 'K=512,M=512,N=512', 'f32', 'host-x86-64-avx2', '14.0.0',
     '0.1.0', 'c', x'', 0, 0.5, 537.0, 'ok', '', '2024-05-06T07:02:00Z');
)sql");
    if (with_variants) {
        raw.exec(kVersion2Variants);
    }
    return path;
}

} // namespace opgen::db::test

#endif
