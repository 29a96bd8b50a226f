// Files written by older builds: a version-1 cache (as shipped before the lookup library) is
// brought to the current version at a read-write open with every row kept, and refused, untouched,
// by a read-only open.
#include <string>

#include <gtest/gtest.h>

#include "db/KernelCache.h"
#include "tests/db/DbTestSupport.h"

namespace opgen::db {
namespace {

using test::RawDb;
using test::ScratchDir;

// The version-1 schema as it shipped: a fixture, since files written by it exist. It must not
// follow later edits of db/Schema.cpp.
const char *const kVersion1Schema = R"sql(
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

std::string make_version1_file(const ScratchDir &dir) {
    std::string path = dir.file("v1.db");
    test::write_bytes(path, "");
    RawDb(path).exec(kVersion1Schema);
    return path;
}

TEST(SchemaMigration, UpgradesVersion1KeepingRows) {
    ScratchDir dir;
    std::string path = make_version1_file(dir);
    auto cache = open_kernel_cache(path);
    EXPECT_EQ(cache->stats().schema_version, kernel_cache_schema_version());
    std::optional<KernelRecord> found = cache->lookup(test::make_key());
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(found->schedule_json, R"({"tile":[32,32]})");
    EXPECT_DOUBLE_EQ(found->time_ms, 0.5);
    EXPECT_EQ(found->created_at, "2024-05-06T07:08:09Z");

    RawDb raw(path);
    EXPECT_EQ(raw.integer("PRAGMA user_version"), kernel_cache_schema_version());
    EXPECT_EQ(raw.integer("SELECT count(*) FROM sqlite_master WHERE name = 'kernels_by_shape'"), 1);
    EXPECT_EQ(raw.text("SELECT source FROM ops WHERE name = 'matmul'"), "");
}

TEST(SchemaMigration, ReadOnlyOpenRefusesOldVersionUntouched) {
    ScratchDir dir;
    std::string path = make_version1_file(dir);
    std::string before = test::read_bytes(path);
    try {
        open_kernel_cache(path, OpenMode::ReadOnly);
        FAIL() << "expected a DbError";
    } catch (const DbError &e) {
        EXPECT_EQ(std::string(e.what()),
                  "database '" + path + "' has schema version 1, older than version " +
                      std::to_string(kernel_cache_schema_version()) +
                      "; open it read-write once to create or upgrade the schema");
    }
    EXPECT_EQ(test::read_bytes(path), before);
}

} // namespace
} // namespace opgen::db
