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

} // namespace
} // namespace opgen::db
