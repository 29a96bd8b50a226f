// Correctness of the kernel cache: what goes in comes out, the fastest winner stays, lookups stay
// on their target, and the schema is written as documented.
#include "store/KernelCache.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <regex>
#include <set>

#include <gtest/gtest.h>

#include "tests/store/DbTestSupport.h"

namespace opgen::db {
namespace {

using test::make_kernel;
using test::make_key;
using test::make_measurement;
using test::RawDb;
using test::ScratchDir;

void expect_same_kernel(const KernelRecord &expected, const KernelRecord &actual) {
    EXPECT_EQ(expected.key.op_name, actual.key.op_name);
    EXPECT_EQ(expected.key.op_hash, actual.key.op_hash);
    EXPECT_EQ(expected.key.shape, actual.key.shape);
    EXPECT_EQ(expected.key.dtype, actual.key.dtype);
    EXPECT_EQ(expected.key.target, actual.key.target);
    EXPECT_EQ(expected.key.halide_version, actual.key.halide_version);
    EXPECT_EQ(expected.key.tuner_version, actual.key.tuner_version);
    EXPECT_EQ(expected.schedule_json, actual.schedule_json);
    EXPECT_EQ(expected.schedule_source, actual.schedule_source);
    EXPECT_EQ(expected.time_ms, actual.time_ms);
    EXPECT_EQ(expected.gflops, actual.gflops);
    EXPECT_EQ(expected.default_time_ms, actual.default_time_ms);
    EXPECT_EQ(expected.verified, actual.verified);
    EXPECT_EQ(expected.trials, actual.trials);
    EXPECT_EQ(expected.created_at, actual.created_at);
}

// Bit patterns, so that -0.0, NaN payloads and denormals must survive exactly.
std::vector<uint32_t> bits_of(const std::vector<float> &values) {
    std::vector<uint32_t> bits(values.size());
    std::memcpy(bits.data(), values.data(), values.size() * sizeof(float));
    return bits;
}

TEST(KernelCache, RoundTripsKernelRecord) {
    ScratchDir dir;
    auto cache = open_kernel_cache(dir.file("cache.db"));
    KernelRecord record = make_kernel(make_key(), 1.25);
    record.schedule_json = R"({"tile":[64,8],"note":"quote ' and \u00e9"})";
    record.schedule_source = std::string("line one\nline two with a nul \0 inside", 37);
    record.created_at = "2024-01-02T03:04:05Z";

    EXPECT_TRUE(cache->put_kernel(record));
    std::optional<KernelRecord> found = cache->lookup(record.key);
    ASSERT_TRUE(found.has_value());
    expect_same_kernel(record, *found);
    EXPECT_EQ(cache->path(), dir.file("cache.db"));
}

TEST(KernelCache, MissesUnknownKey) {
    ScratchDir dir;
    auto cache = open_kernel_cache(dir.file("cache.db"));
    cache->put_kernel(make_kernel(make_key("K=512,M=512,N=512"), 1.0));

    EXPECT_FALSE(cache->lookup(make_key("K=512,M=512,N=256")).has_value());
    KernelKey other_version = make_key();
    other_version.halide_version = "15.0.0";
    EXPECT_FALSE(cache->lookup(other_version).has_value());
}

TEST(KernelCache, FillsCreatedAtWhenEmpty) {
    ScratchDir dir;
    auto cache = open_kernel_cache(dir.file("cache.db"));
    KernelRecord record = make_kernel(make_key(), 1.0);
    ASSERT_TRUE(record.created_at.empty());
    cache->put_kernel(record);

    std::string created_at = cache->lookup(record.key)->created_at;
    EXPECT_TRUE(std::regex_match(created_at, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")))
        << created_at;
}

TEST(KernelCache, StoresOnlyFasterWinner) {
    ScratchDir dir;
    auto cache = open_kernel_cache(dir.file("cache.db"));
    KernelKey key = make_key();

    EXPECT_TRUE(cache->put_kernel(make_kernel(key, 2.0, "first")));
    EXPECT_FALSE(cache->put_kernel(make_kernel(key, 3.0, "slower")));
    EXPECT_FALSE(cache->put_kernel(make_kernel(key, 2.0, "as fast")));
    EXPECT_EQ(cache->lookup(key)->schedule_json, "first");
    EXPECT_EQ(cache->lookup(key)->time_ms, 2.0);

    EXPECT_TRUE(cache->put_kernel(make_kernel(key, 1.5, "faster")));
    EXPECT_EQ(cache->lookup(key)->schedule_json, "faster");
    EXPECT_EQ(cache->lookup(key)->time_ms, 1.5);

    CacheStats stats = cache->stats();
    EXPECT_EQ(stats.kernels, 1);
    EXPECT_EQ(stats.ops, 1);
    EXPECT_EQ(stats.targets, 1);
}

TEST(KernelCache, LookupFiltersByTarget) {
    ScratchDir dir;
    auto cache = open_kernel_cache(dir.file("cache.db"));
    KernelKey on_avx2 = make_key("K=64,M=64,N=64", "host-x86-64-avx2");
    KernelKey on_avx512 = make_key("K=64,M=64,N=64", "host-x86-64-avx512");

    cache->put_kernel(make_kernel(on_avx2, 1.0, "avx2"));
    EXPECT_FALSE(cache->lookup(on_avx512).has_value());

    // A slower winner on another target is stored: targets never compete.
    EXPECT_TRUE(cache->put_kernel(make_kernel(on_avx512, 5.0, "avx512")));
    EXPECT_EQ(cache->lookup(on_avx2)->schedule_json, "avx2");
    EXPECT_EQ(cache->lookup(on_avx512)->schedule_json, "avx512");

    cache->put_kernel(make_kernel(make_key("K=8,M=8,N=8", "host-x86-64-avx2"), 0.1, "small"));
    cache->put_kernel(make_kernel(make_key("K=8,M=8,N=8", "host-x86-64-avx2", "conv2d"), 0.1));
    std::vector<KernelRecord> matmuls = cache->kernels_for("matmul", "host-x86-64-avx2");
    ASSERT_EQ(matmuls.size(), 2u);
    EXPECT_EQ(matmuls[0].key.shape, "K=64,M=64,N=64"); // ordered by shape
    EXPECT_EQ(matmuls[1].key.shape, "K=8,M=8,N=8");
    for (const KernelRecord &record : matmuls) {
        EXPECT_EQ(record.key.target, "host-x86-64-avx2");
        EXPECT_EQ(record.key.op_name, "matmul");
    }
    EXPECT_EQ(cache->kernels_for("matmul", "host-x86-64-avx512").size(), 1u);
    EXPECT_TRUE(cache->kernels_for("matmul", "cuda-sm90").empty());
    EXPECT_EQ(cache->stats().targets, 2);
}

TEST(KernelCache, RoundTripsMeasurementsWithExactFeatures) {
    ScratchDir dir;
    auto cache = open_kernel_cache(dir.file("cache.db"));
    KernelKey key = make_key();

    MeasurementRecord exotic = make_measurement(key, R"({"tile":[1]})", 0.75);
    float quiet_nan_with_payload;
    uint32_t nan_bits = 0x7fc01234u;
    std::memcpy(&quiet_nan_with_payload, &nan_bits, 4);
    exotic.features = {1.0f,
                       -0.0f,
                       std::numeric_limits<float>::denorm_min(),
                       std::numeric_limits<float>::max(),
                       std::numeric_limits<float>::lowest(),
                       std::numeric_limits<float>::infinity(),
                       quiet_nan_with_payload,
                       3.14159274f};
    exotic.feature_rows = 4;

    MeasurementRecord failed = make_measurement(key, R"({"tile":[2]})", std::nan(""));
    failed.features.clear();
    failed.feature_rows = 0;
    failed.gflops = std::nan("");
    failed.status = "timeout";
    failed.error = "killed after 2000 ms";

    MeasurementRecord slow = make_measurement(key, R"({"tile":[3]})", 9.5);
    cache->record_measurements({exotic, failed, slow});
    cache->record_measurements({}); // an empty batch is no transaction at all

    std::vector<MeasurementRecord> found = cache->measurements_for(key);
    ASSERT_EQ(found.size(), 3u);
    EXPECT_EQ(found[0].schedule_json, exotic.schedule_json);
    EXPECT_EQ(bits_of(found[0].features), bits_of(exotic.features));
    EXPECT_EQ(found[0].feature_rows, 4);
    EXPECT_EQ(found[0].time_ms, 0.75);
    EXPECT_EQ(found[0].gflops, exotic.gflops);
    EXPECT_EQ(found[0].status, "ok");
    EXPECT_EQ(found[0].error, "");

    EXPECT_TRUE(found[1].features.empty());
    EXPECT_EQ(found[1].feature_rows, 0);
    EXPECT_TRUE(std::isnan(found[1].time_ms));
    EXPECT_TRUE(std::isnan(found[1].gflops));
    EXPECT_EQ(found[1].status, "timeout");
    EXPECT_EQ(found[1].error, "killed after 2000 ms");

    EXPECT_EQ(found[2].schedule_json, slow.schedule_json);
    EXPECT_EQ(bits_of(found[2].features), bits_of(slow.features));
    for (const MeasurementRecord &record : found) {
        EXPECT_EQ(record.key.target, key.target);
        EXPECT_EQ(record.key.shape, key.shape);
    }
    EXPECT_EQ(cache->stats().measurements, 3);
}

TEST(KernelCache, StoresFeaturesAsLittleEndianFloat32) {
    ScratchDir dir;
    {
        auto cache = open_kernel_cache(dir.file("cache.db"));
        MeasurementRecord record = make_measurement(make_key(), "{}", 1.0);
        record.features = {1.0f, -2.5f};
        record.feature_rows = 1;
        cache->record_measurements({record});
    }
    RawDb raw(dir.file("cache.db"));
    EXPECT_EQ(raw.text("SELECT hex(features) FROM measurements"), "0000803F000020C0");
}

TEST(KernelCache, MeasurementsOnKeepsOkRowsOfOneTarget) {
    ScratchDir dir;
    auto cache = open_kernel_cache(dir.file("cache.db"));
    KernelKey a = make_key("M=1", "target-a");
    KernelKey a2 = make_key("M=2", "target-a", "conv2d");
    KernelKey b = make_key("M=1", "target-b");
    MeasurementRecord crashed = make_measurement(a, "crashed", 1.0);
    crashed.status = "crash";
    crashed.error = "signal 11";
    cache->record_measurements({make_measurement(a, "a1", 1.0), crashed,
                                make_measurement(b, "b1", 1.0), make_measurement(a2, "a2", 2.0)});

    std::vector<MeasurementRecord> on_a = cache->measurements_on("target-a");
    ASSERT_EQ(on_a.size(), 2u);
    EXPECT_EQ(on_a[0].schedule_json, "a1");
    EXPECT_EQ(on_a[0].key.shape, "M=1");
    EXPECT_EQ(on_a[1].schedule_json, "a2");
    EXPECT_EQ(on_a[1].key.op_name, "conv2d");
    EXPECT_EQ(cache->measurements_on("target-b").size(), 1u);
    EXPECT_TRUE(cache->measurements_on("target-c").empty());
    EXPECT_EQ(cache->measurements_for(a).size(), 2u); // failures are kept for resuming
}

// Measurements taken under a contention load carry it in their target (target + ":load<level>"):
// they are training data of the same target, never measurements of the quiet key.
TEST(KernelCache, MeasurementsOnIncludesThoseUnderLoadOfTheSameTarget) {
    ScratchDir dir;
    auto cache = open_kernel_cache(dir.file("cache.db"));
    KernelKey quiet = make_key("M=1", "target-a:t1");
    KernelKey loaded = make_key("M=1", "target-a:t1:load0.5");
    KernelKey other_threads = make_key("M=1", "target-a:t12");
    KernelKey other_loaded = make_key("M=1", "target-a:t12:load1");
    cache->record_measurements({make_measurement(quiet, "q", 1.0), make_measurement(loaded, "l", 2.0),
                                make_measurement(other_threads, "o", 3.0),
                                make_measurement(other_loaded, "ol", 4.0)});
    std::vector<MeasurementRecord> on = cache->measurements_on("target-a:t1");
    ASSERT_EQ(on.size(), 2u);
    EXPECT_EQ(on[0].schedule_json, "q");
    EXPECT_EQ(on[1].schedule_json, "l");
    EXPECT_EQ(on[1].key.target, "target-a:t1:load0.5");
    ASSERT_EQ(cache->measurements_for(quiet).size(), 1u);
    EXPECT_EQ(cache->measurements_for(quiet)[0].schedule_json, "q");
    EXPECT_EQ(cache->measurements_on("target-a:t12").size(), 2u);
}

TEST(KernelCache, WritesSchemaVersion) {
    ScratchDir dir;
    std::string path = dir.file("cache.db");
    EXPECT_EQ(kernel_cache_schema_version(), 7);
    EXPECT_EQ(open_kernel_cache(path)->stats().schema_version, kernel_cache_schema_version());

    RawDb raw(path);
    EXPECT_EQ(raw.integer("PRAGMA user_version"), kernel_cache_schema_version());
    EXPECT_EQ(raw.text("PRAGMA journal_mode"), "wal");
    EXPECT_EQ(raw.text("SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_master "
                       "WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name)"),
              "generic_code,generic_timings,kernel_code,kernel_variants,kernels,measurements,models,ops,targets,tuning_runs");
    EXPECT_EQ(raw.integer("SELECT count(*) FROM sqlite_master WHERE type = 'index' "
                          "AND name IN ('measurements_by_key', 'kernels_by_shape', "
                          "'tuning_runs_by_key', 'measurements_by_run')"),
              4);
}

TEST(KernelCache, CreatesSchemaInEmptyFile) {
    ScratchDir dir;
    std::string path = dir.file("cache.db");
    test::write_bytes(path, "");
    auto cache = open_kernel_cache(path);
    EXPECT_EQ(cache->stats().schema_version, kernel_cache_schema_version());
}

TEST(KernelCache, ReopensWithEverythingKept) {
    ScratchDir dir;
    std::string path = dir.file("cache.db");
    KernelRecord record = make_kernel(make_key(), 0.5);
    record.created_at = "2024-05-06T07:08:09Z";
    {
        auto cache = open_kernel_cache(path);
        cache->put_kernel(record);
        cache->record_measurements(
            {make_measurement(record.key, "m1", 0.5), make_measurement(record.key, "m2", 0.6)});
    }
    for (OpenMode mode : {OpenMode::ReadWrite, OpenMode::ReadOnly}) {
        auto cache = open_kernel_cache(path, mode);
        std::optional<KernelRecord> found = cache->lookup(record.key);
        ASSERT_TRUE(found.has_value());
        expect_same_kernel(record, *found);
        EXPECT_EQ(cache->measurements_for(record.key).size(), 2u);
        CacheStats stats = cache->stats();
        EXPECT_EQ(stats.kernels, 1);
        EXPECT_EQ(stats.measurements, 2);
        EXPECT_EQ(stats.ops, 1);
        EXPECT_EQ(stats.targets, 1);
        EXPECT_EQ(stats.schema_version, kernel_cache_schema_version());
    }
}

TEST(KernelCache, SharesOneFileBetweenConnections) {
    ScratchDir dir;
    std::string path = dir.file("cache.db");
    auto writer = open_kernel_cache(path);
    auto reader = open_kernel_cache(path, OpenMode::ReadOnly);
    KernelKey key = make_key();
    EXPECT_FALSE(reader->lookup(key).has_value());
    writer->put_kernel(make_kernel(key, 1.0));
    EXPECT_TRUE(reader->lookup(key).has_value());
}

TuningRun make_run(const KernelKey &key) {
    TuningRun run;
    run.key = key;
    run.op_source = "op matmul\nparam M, N, K\n";
    run.target_description = "a test machine";
    run.target_fingerprint = "x86-64-avx2;l1=32768";
    run.options_json = R"({"trials":8,"seed":1})";
    return run;
}

TEST(KernelCache, RecordsTuningRunsThatMeasurementsName) {
    ScratchDir dir;
    std::string path = dir.file("cache.db");
    auto cache = open_kernel_cache(path);
    KernelKey key = make_key();
    int64_t first = cache->begin_run(make_run(key));
    MeasurementRecord m = make_measurement(key, "a", 1.0);
    m.run_id = first;
    cache->record_measurements({m, make_measurement(key, "no run", 2.0)});
    cache->end_run(first, "done", 2);
    int64_t second = cache->begin_run(make_run(key));
    cache->end_run(second, "failed", 0, "no candidate produced a correct result");
    EXPECT_GT(second, first);

    std::vector<TuningRun> runs = cache->runs_for(key);
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[0].id, first);
    EXPECT_EQ(runs[0].status, "done");
    EXPECT_EQ(runs[0].trials, 2);
    EXPECT_EQ(runs[0].options_json, R"({"trials":8,"seed":1})");
    EXPECT_TRUE(std::regex_match(runs[0].started_at, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
    EXPECT_GE(runs[0].finished_at, runs[0].started_at);
    EXPECT_EQ(runs[1].status, "failed");
    EXPECT_EQ(runs[1].error, "no candidate produced a correct result");
    EXPECT_TRUE(cache->runs_for(make_key("K=1,M=1,N=1")).empty());

    std::vector<MeasurementRecord> measured = cache->measurements_for(key);
    ASSERT_EQ(measured.size(), 2u);
    EXPECT_EQ(measured[0].run_id, first);
    EXPECT_EQ(measured[1].run_id, 0);
    EXPECT_EQ(cache->stats().tuning_runs, 2);

    // The run fills in what the op and target rows lack, and never overwrites it.
    RawDb raw(path);
    EXPECT_EQ(raw.text("SELECT source FROM ops"), "op matmul\nparam M, N, K\n");
    EXPECT_EQ(raw.text("SELECT description || ' | ' || fingerprint FROM targets"),
              "a test machine | x86-64-avx2;l1=32768");
    TuningRun changed = make_run(key);
    changed.op_source = "op matmul # edited";
    changed.target_fingerprint = "another";
    cache->end_run(cache->begin_run(changed), "done", 0);
    EXPECT_EQ(raw.text("SELECT source FROM ops"), "op matmul\nparam M, N, K\n");
    EXPECT_EQ(raw.text("SELECT fingerprint FROM targets"), "x86-64-avx2;l1=32768");
}

TEST(KernelCache, RefusesMeasurementOfUnknownRunAndEndOfUnknownRun) {
    ScratchDir dir;
    auto cache = open_kernel_cache(dir.file("cache.db"));
    KernelKey key = make_key();
    MeasurementRecord m = make_measurement(key, "a", 1.0);
    m.run_id = 42;
    std::string message = test::db_error_of([&] { cache->record_measurements({make_measurement(key, "b", 1.0), m}); });
    EXPECT_NE(message.find("FOREIGN KEY constraint failed"), std::string::npos) << message;
    EXPECT_EQ(cache->stats().measurements, 0); // all or none
    EXPECT_EQ(test::db_error_of([&] { cache->end_run(7, "done", 1); }),
              "database '" + dir.file("cache.db") +
                  "': recording the end of tuning run 7: there is no run 7");
}

TEST(KernelCache, ReadOnlyCacheRefusesToBeginARun) {
    ScratchDir dir;
    std::string path = dir.file("cache.db");
    open_kernel_cache(path);
    auto cache = open_kernel_cache(path, OpenMode::ReadOnly);
    std::string message = test::db_error_of([&] { cache->begin_run(make_run(make_key())); });
    EXPECT_NE(message.find("is opened read-only: recording the start of a tuning run"), std::string::npos)
        << message;
    EXPECT_EQ(cache->stats().tuning_runs, 0);
}

} // namespace
} // namespace opgen::db
