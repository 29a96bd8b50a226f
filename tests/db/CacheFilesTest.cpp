// Whole-file operations (db/CacheFiles.h) and the lookup library's share of the fault suite:
// merge keeps the best kernel per key and every measurement, refuses mismatched, newer, corrupt
// and missing inputs and an existing output, and leaves nothing behind when it fails; export
// writes every kernel as JSON; the lookup refuses corrupt, newer and locked files clearly.
#include <filesystem>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "db/CacheFiles.h"
#include "db/Lookup.h"
#include "tests/db/DbTestSupport.h"

namespace opgen::db {
namespace {

using test::db_error_of;
using test::make_kernel;
using test::make_key;
using test::make_measurement;
using test::RawDb;
using test::ScopedEnv;
using test::ScratchDir;


// Nothing at `path`, and no temporary left beside it.
void expect_nothing_written(const ScratchDir &dir, const std::string &path) {
    EXPECT_FALSE(std::filesystem::exists(path)) << path;
    for (const auto &entry : std::filesystem::directory_iterator(dir.path())) {
        EXPECT_EQ(entry.path().string().find(".merging-"), std::string::npos) << entry.path();
    }
}

TEST(Merge, KeepsBestPerKeyAndEveryMeasurement) {
    ScratchDir dir;
    std::string a = dir.file("a.db"), b = dir.file("b.db"), out = dir.file("out.db");
    KernelKey shared = make_key("K=512,M=512,N=512");
    KernelKey only_a = make_key("K=64,M=64,N=64");
    KernelKey only_b = make_key("K=512,M=512,N=512", "arm64-neon:t4");
    {
        auto cache = open_kernel_cache(a);
        cache->put_kernel(make_kernel(shared, 2.0, R"({"from":"a"})"));
        cache->put_kernel(make_kernel(only_a, 0.1));
        cache->record_measurements({make_measurement(shared, "a1", 2.0), make_measurement(shared, "a2", 3.0)});
    }
    {
        auto cache = open_kernel_cache(b);
        cache->put_kernel(make_kernel(shared, 1.5, R"({"from":"b"})"));
        cache->put_kernel(make_kernel(only_b, 4.0));
        cache->record_measurements({make_measurement(shared, "b1", 1.5)});
    }
    std::string a_before = test::read_bytes(a);
    MergeReport report = merge_kernel_caches({a, b}, out);
    EXPECT_EQ(report.kernels_read, 4);
    EXPECT_EQ(report.kernels, 3);
    EXPECT_EQ(report.measurements, 3);
    EXPECT_EQ(test::read_bytes(a), a_before);

    auto merged = open_kernel_cache(out, OpenMode::ReadOnly);
    EXPECT_EQ(merged->lookup(shared)->schedule_json, R"({"from":"b"})");
    EXPECT_DOUBLE_EQ(merged->lookup(shared)->time_ms, 1.5);
    EXPECT_TRUE(merged->lookup(only_a).has_value());
    EXPECT_TRUE(merged->lookup(only_b).has_value());
    EXPECT_EQ(merged->measurements_for(shared).size(), 3u);
    CacheStats stats = merged->stats();
    EXPECT_EQ(stats.targets, 2);
    EXPECT_EQ(stats.schema_version, kernel_cache_schema_version());
    // The merged file stands alone: no WAL beside it.
    EXPECT_FALSE(std::filesystem::exists(out + "-wal") &&
                 std::filesystem::file_size(out + "-wal") > 0);
}

TEST(Merge, RefusesMismatchedSchemaVersions) {
    ScratchDir dir;
    std::string a = dir.file("a.db"), out = dir.file("out.db");
    open_kernel_cache(a)->put_kernel(make_kernel(make_key(), 1.0));
    std::string old = test::make_version1_file(dir.file("old.db"));
    EXPECT_EQ(db_error_of([&] { merge_kernel_caches({a, old}, out); }),
              "cannot merge databases of different schema versions: '" + a + "' has version " +
                  std::to_string(kernel_cache_schema_version()) + ", '" + old + "' has version 1");
    expect_nothing_written(dir, out);
    EXPECT_EQ(RawDb(old).integer("PRAGMA user_version"), 1); // the input is not upgraded
}

TEST(Merge, RefusesNewerCorruptMissingInputsAndExistingOutput) {
    ScratchDir dir;
    std::string a = dir.file("a.db"), out = dir.file("out.db");
    open_kernel_cache(a)->put_kernel(make_kernel(make_key(), 1.0));

    std::string newer = dir.file("newer.db");
    open_kernel_cache(newer);
    RawDb(newer).exec("PRAGMA user_version = 99");
    EXPECT_NE(db_error_of([&] { merge_kernel_caches({a, newer}, out); }).find("has schema version 99, newer"),
              std::string::npos);
    expect_nothing_written(dir, out);

    std::string corrupt = dir.file("corrupt.db");
    test::write_bytes(corrupt, std::string(8192, 'x'));
    std::string message = db_error_of([&] { merge_kernel_caches({a, corrupt}, out); });
    EXPECT_EQ(message.rfind("database '" + corrupt + "' is not an opgen kernel cache", 0), 0u) << message;
    expect_nothing_written(dir, out);

    std::string missing = dir.file("missing.db");
    EXPECT_EQ(db_error_of([&] { merge_kernel_caches({a, missing}, out); }),
              "database '" + missing + "' does not exist");
    expect_nothing_written(dir, out);

    EXPECT_EQ(db_error_of([&] { merge_kernel_caches({a}, a); }),
              "database '" + a + "' already exists; merge writes a new file");
}

TEST(Export, WritesEveryKernelAsJson) {
    ScratchDir dir;
    std::string path = dir.file("cache.db");
    {
        auto cache = open_kernel_cache(path);
        cache->put_kernel(make_kernel(make_key("K=64,M=64,N=64"), 0.1, R"({"tile":[8,8]})"));
        cache->put_kernel(make_kernel(make_key("K=512,M=512,N=512"), 2.0, "not json"));
        cache->record_measurements({make_measurement(make_key("K=64,M=64,N=64"), "m", 0.1)});
    }
    std::ostringstream out;
    export_kernel_cache(path, true, out);
    nlohmann::json doc = nlohmann::json::parse(out.str());
    EXPECT_EQ(doc["schema_version"], kernel_cache_schema_version());
    ASSERT_EQ(doc["kernels"].size(), 2u);
    EXPECT_EQ(doc["kernels"][0]["shape"], "K=512,M=512,N=512");
    EXPECT_EQ(doc["kernels"][0]["schedule"], "not json");
    EXPECT_EQ(doc["kernels"][1]["schedule"]["tile"][1], 8);
    EXPECT_EQ(doc["kernels"][1]["target"], "host-x86-64-avx2");
    ASSERT_EQ(doc["measurements"].size(), 1u);
    EXPECT_EQ(doc["measurements"][0]["features"].size(), 6u);

    std::vector<KernelCount> counts = count_kernels(path);
    ASSERT_EQ(counts.size(), 1u);
    EXPECT_EQ(counts[0].kernels, 2);
    EXPECT_EQ(counts[0].measurements, 1);
}

TEST(LookupFaults, RefusesCorruptNewerAndMissingFiles) {
    ScratchDir dir;
    std::string corrupt = dir.file("corrupt.db");
    test::write_bytes(corrupt, std::string(8192, 'x'));
    std::string before = test::read_bytes(corrupt);
    EXPECT_EQ(db_error_of([&] { open_kernel_lookup(corrupt); })
                  .rfind("database '" + corrupt + "' is not an opgen kernel cache", 0),
              0u);
    EXPECT_EQ(test::read_bytes(corrupt), before);

    std::string newer = dir.file("newer.db");
    open_kernel_cache(newer);
    RawDb(newer).exec("PRAGMA user_version = 99");
    EXPECT_NE(db_error_of([&] { open_kernel_lookup(newer); }).find("newer than version"), std::string::npos);

    std::string missing = dir.file("missing.db");
    EXPECT_EQ(db_error_of([&] { open_kernel_lookup(missing); }), "database '" + missing + "' does not exist");
    EXPECT_FALSE(std::filesystem::exists(missing));
}

TEST(LookupFaults, ReportsLockedFileAndRecovers) {
    ScratchDir dir;
    std::string path = dir.file("cache.db");
    ScopedEnv timeout("OPGEN_DB_BUSY_TIMEOUT_MS", "200");
    open_kernel_cache(path)->put_kernel(make_kernel(make_key(), 1.0));
    auto lookup = open_kernel_lookup(path);
    LookupRequest request;
    request.op_name = "matmul";
    request.shape = "M=512,N=512,K=512";
    request.target = "host-x86-64-avx2";
    {
        // A writer in exclusive locking mode shuts readers out, even in WAL mode.
        RawDb other(path);
        other.exec("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; DELETE FROM kernels");
        std::string message = db_error_of([&] { lookup->find(request); });
        EXPECT_NE(message.find("database '" + path + "' is locked"), std::string::npos) << message;
        EXPECT_NE(message.find("gave up after waiting 200 ms"), std::string::npos) << message;
        other.exec("ROLLBACK");
    }
    EXPECT_EQ(lookup->find(request).kind, AnswerKind::Exact);
}

} // namespace
} // namespace opgen::db
