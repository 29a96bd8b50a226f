// Whole-file operations (store/CacheFiles.h) and the lookup library's share of the fault suite:
// merge keeps the best kernel per key and every measurement, refuses mismatched, newer, corrupt
// and missing inputs and an existing output, and leaves nothing behind when it fails; export
// writes every kernel as JSON; the lookup refuses corrupt, newer and locked files clearly.
#include <filesystem>
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "store/CacheFiles.h"
#include "runtime/Lookup.h"
#include "store/VariantStore.h"
#include "tests/store/DbTestSupport.h"

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

// A tuning run with recognisable op source and target fingerprint.
TuningRun make_run(const KernelKey &key, const std::string &source, const std::string &fingerprint) {
    TuningRun run;
    run.key = key;
    run.op_source = source;
    run.target_fingerprint = fingerprint;
    run.options_json = R"({"trials":4})";
    return run;
}

VariantRecord make_variant(const KernelKey &key, double level, double time_ms, const std::string &from) {
    VariantRecord v;
    v.key = key;
    v.level = level;
    v.load = "1 thread streaming";
    v.schedule_json = R"({"from":")" + from + R"("})";
    v.time_ms = time_ms;
    v.trials = 8;
    return v;
}

// Runs and measurements of both inputs are kept, each measurement still naming the run (of its own
// input) it came from; op sources and target fingerprints travel; variants keep the best per level.
TEST(Merge, CarriesTuningRunsSourcesAndVariants) {
    ScratchDir dir;
    std::string a = dir.file("a.db"), b = dir.file("b.db"), out = dir.file("out.db");
    KernelKey key = make_key();
    {
        auto cache = open_kernel_cache(a);
        for (const char *name : {"a1", "a2"}) {
            int64_t run = cache->begin_run(make_run(key, "", ""));
            MeasurementRecord m = make_measurement(key, name, 2.0);
            m.run_id = run;
            cache->record_measurements({m});
            cache->end_run(run, "done", 1);
        }
    }
    put_variant(a, make_variant(key, 0.5, 3.0, "a"));
    put_variant(a, make_variant(key, 1.0, 1.0, "a"));
    {
        auto cache = open_kernel_cache(b);
        int64_t run = cache->begin_run(make_run(key, "op matmul # source", "fp-b"));
        MeasurementRecord m = make_measurement(key, "b1", 1.5);
        m.run_id = run;
        cache->record_measurements({m, make_measurement(key, "b-without-run", 1.6)});
        cache->end_run(run, "failed", 1, "stopped");
    }
    put_variant(b, make_variant(key, 0.5, 2.0, "b"));
    put_variant(b, make_variant(key, 1.0, 4.0, "b"));

    MergeReport report = merge_kernel_caches({a, b}, out);
    EXPECT_EQ(report.tuning_runs, 3);
    EXPECT_EQ(report.measurements, 4);
    EXPECT_EQ(report.variants, 2);

    auto merged = open_kernel_cache(out, OpenMode::ReadOnly);
    std::vector<TuningRun> runs = merged->runs_for(key);
    ASSERT_EQ(runs.size(), 3u);
    EXPECT_EQ(runs[2].status, "failed");
    EXPECT_EQ(runs[2].error, "stopped");
    EXPECT_EQ(runs[2].options_json, R"({"trials":4})");
    std::map<std::string, int64_t> run_of;
    for (const MeasurementRecord &m : merged->measurements_for(key)) run_of[m.schedule_json] = m.run_id;
    EXPECT_EQ(run_of["a1"], runs[0].id);
    EXPECT_EQ(run_of["a2"], runs[1].id);
    EXPECT_EQ(run_of["b1"], runs[2].id);
    EXPECT_EQ(run_of["b-without-run"], 0);

    RawDb raw(out);
    EXPECT_EQ(raw.text("SELECT source FROM ops"), "op matmul # source");
    EXPECT_EQ(raw.text("SELECT fingerprint FROM targets"), "fp-b");
    std::vector<VariantRecord> variants = variants_for(out, key);
    ASSERT_EQ(variants.size(), 2u);
    EXPECT_EQ(variants[0].schedule_json, R"({"from":"b"})");
    EXPECT_EQ(variants[1].schedule_json, R"({"from":"a"})");
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

TEST(Export, WritesTuningRunsOpSourcesAndVariants) {
    ScratchDir dir;
    std::string path = dir.file("cache.db");
    KernelKey key = make_key();
    {
        auto cache = open_kernel_cache(path);
        int64_t run = cache->begin_run(make_run(key, "op matmul # source", "fp"));
        MeasurementRecord m = make_measurement(key, "m", 0.1);
        m.run_id = run;
        cache->record_measurements({m});
        cache->end_run(run, "done", 1);
    }
    put_variant(path, make_variant(key, 0.5, 2.0, "v"));
    std::ostringstream out;
    export_kernel_cache(path, true, out);
    nlohmann::json doc = nlohmann::json::parse(out.str());
    ASSERT_EQ(doc["ops"].size(), 1u);
    EXPECT_EQ(doc["ops"][0]["source"], "op matmul # source");
    EXPECT_EQ(doc["targets"][0]["fingerprint"], "fp");
    ASSERT_EQ(doc["tuning_runs"].size(), 1u);
    EXPECT_EQ(doc["tuning_runs"][0]["status"], "done");
    EXPECT_EQ(doc["tuning_runs"][0]["trials"], 1);
    EXPECT_EQ(doc["tuning_runs"][0]["options"]["trials"], 4);
    EXPECT_EQ(doc["tuning_runs"][0]["shape"], key.shape);
    EXPECT_EQ(doc["measurements"][0]["run_id"], doc["tuning_runs"][0]["id"]);
    ASSERT_EQ(doc["variants"].size(), 1u);
    EXPECT_EQ(doc["variants"][0]["schedule"]["from"], "v");
    EXPECT_EQ(count_kernels(path).at(0).tuning_runs, 1);
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
