// Files written by older builds: a version-1 cache (as shipped before the lookup library) and a
// version-2 cache (before tuning runs, with or without the variants table made outside the
// versions) are brought to the current version at a read-write open with every row kept, and
// refused, untouched, by a read-only open or while another process holds the write lock.
#include <string>

#include <gtest/gtest.h>

#include "store/KernelCache.h"
#include "store/VariantStore.h"
#include "tests/store/DbTestSupport.h"

namespace opgen::db {
namespace {

using test::db_error_of;
using test::RawDb;
using test::ScopedEnv;
using test::ScratchDir;

TEST(SchemaMigration, UpgradesVersion1KeepingRows) {
    ScratchDir dir;
    std::string path = test::make_version1_file(dir.file("v1.db"));
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
    std::string path = test::make_version1_file(dir.file("v1.db"));
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

TEST(SchemaMigration, UpgradesVersion2GivingOldMeasurementsOneRunPerKey) {
    ScratchDir dir;
    std::string path = test::make_version2_file(dir.file("v2.db"), false);
    auto cache = open_kernel_cache(path);
    EXPECT_EQ(cache->stats().schema_version, kernel_cache_schema_version());
    EXPECT_EQ(cache->stats().measurements, 4);
    EXPECT_EQ(cache->stats().tuning_runs, 2);

    std::vector<TuningRun> runs = cache->runs_for(test::make_key());
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].status, "migrated");
    EXPECT_EQ(runs[0].trials, 3);
    EXPECT_EQ(runs[0].started_at, "2024-05-06T07:00:00Z");
    EXPECT_EQ(runs[0].finished_at, "2024-05-06T07:02:00Z");
    // Every measurement names the run of its own key; the failed one is kept as it was.
    std::vector<MeasurementRecord> measured = cache->measurements_for(test::make_key());
    ASSERT_EQ(measured.size(), 3u);
    for (const MeasurementRecord &m : measured) {
        EXPECT_EQ(m.run_id, runs[0].id) << m.schedule_json;
    }
    EXPECT_EQ(measured[1].status, "timeout");
    EXPECT_EQ(measured[1].error, "ran over");
    std::vector<TuningRun> other = cache->runs_for(test::make_key("K=64,M=64,N=64"));
    ASSERT_EQ(other.size(), 1u);
    EXPECT_NE(other[0].id, runs[0].id);
    EXPECT_EQ(cache->measurements_for(test::make_key("K=64,M=64,N=64")).at(0).run_id, other[0].id);

    RawDb raw(path);
    EXPECT_EQ(raw.integer("SELECT count(*) FROM measurements WHERE run_id IS NULL"), 0);
    EXPECT_EQ(raw.integer("SELECT count(*) FROM sqlite_master WHERE name = 'kernel_variants'"), 1);
    EXPECT_EQ(raw.text("SELECT fingerprint FROM targets"), "");
    EXPECT_TRUE(cache->lookup(test::make_key()).has_value());
}

TEST(SchemaMigration, KeepsTheVariantsTableMadeOutsideTheVersions) {
    ScratchDir dir;
    std::string path = test::make_version2_file(dir.file("v2.db"), true);
    open_kernel_cache(path);
    std::vector<VariantRecord> variants = variants_for(path, test::make_key());
    ASSERT_EQ(variants.size(), 1u);
    EXPECT_DOUBLE_EQ(variants[0].level, 0.5);
    EXPECT_EQ(variants[0].schedule_json, R"({"tile":[16,16]})");
    EXPECT_DOUBLE_EQ(variants[0].quiet_time_ms, 0.6);
    EXPECT_EQ(open_kernel_cache(path, OpenMode::ReadOnly)->stats().variants, 1);
}

TEST(SchemaMigration, ReadOnlyOpenRefusesVersion2Untouched) {
    ScratchDir dir;
    std::string path = test::make_version2_file(dir.file("v2.db"), true);
    std::string before = test::read_bytes(path);
    EXPECT_EQ(db_error_of([&] { open_kernel_cache(path, OpenMode::ReadOnly); }),
              "database '" + path + "' has schema version 2, older than version " +
                  std::to_string(kernel_cache_schema_version()) +
                  "; open it read-write once to create or upgrade the schema");
    std::string message = db_error_of([&] { variants_for(path, test::make_key()); });
    EXPECT_NE(message.find("has schema version 2"), std::string::npos) << message;
    EXPECT_EQ(test::read_bytes(path), before);
}

// Another process holds the write lock: the upgrade waits out the busy timeout, says so, and
// leaves the file at version 2 with nothing half done; once the lock is gone it goes through.
TEST(SchemaMigration, LockedFileIsLeftAtItsVersionAndUpgradedLater) {
    ScratchDir dir;
    std::string path = test::make_version2_file(dir.file("v2.db"), false);
    RawDb(path).exec("PRAGMA journal_mode = WAL");
    ScopedEnv timeout("OPGEN_DB_BUSY_TIMEOUT_MS", "200");
    {
        RawDb other(path);
        other.exec("BEGIN IMMEDIATE");
        std::string message = db_error_of([&] { open_kernel_cache(path); });
        EXPECT_NE(message.find("is locked: upgrading the schema to version " +
                               std::to_string(kernel_cache_schema_version())),
                  std::string::npos)
            << message;
        EXPECT_EQ(other.integer("PRAGMA user_version"), 2);
        EXPECT_EQ(other.integer("SELECT count(*) FROM sqlite_master WHERE name = 'tuning_runs'"), 0);
        other.exec("COMMIT");
    }
    EXPECT_EQ(open_kernel_cache(path)->stats().schema_version, kernel_cache_schema_version());
}

} // namespace
} // namespace opgen::db
