// The cache's contract, checked on both implementations of store/KernelCache.h: the SQLite file and
// the in-memory cache that tests of other modules use. Which winner a key keeps, which code is
// current, what is refused (and that a refusal stores nothing), and the order rows come back in
// must not depend on the implementation.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>

#include "store/KernelCache.h"
#include "store/MemoryCache.h"
#include "tests/store/DbTestSupport.h"

namespace opgen::db {
namespace {

using test::make_kernel;
using test::make_key;
using test::make_measurement;

enum class Kind { Sqlite, Memory };

class CacheContract : public ::testing::TestWithParam<Kind> {
protected:
    void SetUp() override {
        cache_ = GetParam() == Kind::Sqlite ? open_kernel_cache(dir_.file("contract.db")) : open_memory_cache();
    }

    // Exact code compiled from `schedule_json`, with a digest that matches it.
    static KernelCode code_for_schedule(const std::string &schedule_json, uint8_t fill = 7) {
        KernelCode code;
        code.halide_target = "x86-64-linux-avx2-no_runtime";
        code.halide_version = "14.0.0";
        code.function = "opgen_matmul";
        code.signature = "A:in:f32:4,4;B:in:f32:4,4;C:out:f32:4,4";
        code.schedule_json = schedule_json;
        code.bytes = {fill, 1, 2, 3};
        code.size = 4;
        code.digest = code_digest(code);
        return code;
    }

    static GenericCodeRecord generic_row(const KernelKey &key, uint8_t fill = 9) {
        GenericCodeRecord row;
        row.key = key;
        row.code = code_for_schedule("{}", fill);
        row.code.generic = true;
        row.code.symbols = "K,M,N";
        row.code.signature = "A:in:f32:M,K;B:in:f32:K,N;C:out:f32:M,N";
        row.code.digest = code_digest(row.code);
        row.checked_shapes = "K=1,M=1,N=1";
        return row;
    }

    static GenericTimingRecord timing(const GenericCodeRecord &row, const std::string &at, double ratio) {
        GenericTimingRecord t;
        t.key = row.key;
        t.digest = row.code.digest;
        t.at_shape = at;
        t.time_ms = ratio;
        t.tuned_ms = 1;
        t.ratio = ratio;
        return t;
    }

    static std::vector<std::string> shapes(const std::vector<KernelRecord> &records) {
        std::vector<std::string> out;
        for (const KernelRecord &r : records) out.push_back(r.key.op_name + " " + r.key.shape + " " + r.key.target);
        return out;
    }

    test::ScratchDir dir_;
    std::unique_ptr<KernelCache> cache_;
};

TEST_P(CacheContract, KeepsTheFasterWinnerOfAKey) {
    KernelKey key = make_key();
    EXPECT_TRUE(cache_->put_kernel(make_kernel(key, 2.0, R"({"a":1})")));
    EXPECT_FALSE(cache_->put_kernel(make_kernel(key, 3.0, R"({"a":2})")));
    EXPECT_FALSE(cache_->put_kernel(make_kernel(key, 2.0, R"({"a":3})")));  // not strictly faster
    EXPECT_TRUE(cache_->put_kernel(make_kernel(key, 1.5, R"({"a":4})")));
    std::optional<KernelRecord> got = cache_->lookup(key);
    ASSERT_TRUE(got);
    EXPECT_EQ(got->schedule_json, R"({"a":4})");
    EXPECT_DOUBLE_EQ(got->time_ms, 1.5);
    EXPECT_FALSE(got->created_at.empty());
    EXPECT_FALSE(cache_->lookup(make_key("K=1,M=1,N=1")));
    EXPECT_THROW(cache_->put_kernel(make_kernel(make_key("K=2,M=2,N=2"), NAN)), DbError);
    EXPECT_FALSE(cache_->lookup(make_key("K=2,M=2,N=2")));
}

TEST_P(CacheContract, ListsWinnersInKeyOrder) {
    for (const char *shape : {"M=3", "M=1", "M=2"}) {
        cache_->put_kernel(make_kernel(make_key(shape, "t-b"), 1.0));
        cache_->put_kernel(make_kernel(make_key(shape, "t-a"), 1.0));
        cache_->put_kernel(make_kernel(make_key(shape, "t-a", "conv"), 1.0));
    }
    EXPECT_EQ(shapes(cache_->kernels_for("matmul", "t-a")),
              (std::vector<std::string>{"matmul M=1 t-a", "matmul M=2 t-a", "matmul M=3 t-a"}));
    EXPECT_EQ(shapes(cache_->kernels_at("t-a", "M=2")),
              (std::vector<std::string>{"conv M=2 t-a", "matmul M=2 t-a"}));
    EXPECT_EQ(shapes(cache_->kernels_of_op("matmul")),
              (std::vector<std::string>{"matmul M=1 t-a", "matmul M=2 t-a", "matmul M=3 t-a",
                                        "matmul M=1 t-b", "matmul M=2 t-b", "matmul M=3 t-b"}));
}

TEST_P(CacheContract, CodeIsCurrentOnlyForTheWinnersSchedule) {
    KernelKey key = make_key();
    EXPECT_FALSE(cache_->put_code(key, code_for_schedule(R"({"a":1})")));  // no kernel yet
    cache_->put_kernel(make_kernel(key, 2.0, R"({"a":1})"));
    EXPECT_FALSE(cache_->put_code(key, code_for_schedule(R"({"a":9})")));  // another schedule
    EXPECT_EQ(cache_->kernels_without_code().size(), 1u);
    EXPECT_TRUE(cache_->put_code(key, code_for_schedule(R"({"a":1})")));
    ASSERT_TRUE(cache_->code_for(key));
    EXPECT_EQ(cache_->code_for(key)->bytes, code_for_schedule(R"({"a":1})").bytes);
    EXPECT_TRUE(cache_->kernels_without_code().empty());
    EXPECT_EQ(cache_->stats().kernels_with_code, 1);

    cache_->put_kernel(make_kernel(key, 1.0, R"({"a":2})"));  // a faster winner: the code is stale
    EXPECT_FALSE(cache_->code_for(key));
    EXPECT_EQ(cache_->kernels_without_code().size(), 1u);

    KernelCode bad = code_for_schedule(R"({"a":2})");
    bad.bytes.pop_back();  // truncated: no longer its size
    EXPECT_THROW(cache_->put_code(key, bad), DbError);
    bad = code_for_schedule(R"({"a":2})");
    bad.bytes[0] ^= 1;  // flipped: no longer its digest
    EXPECT_THROW(cache_->put_code(key, bad), DbError);
    EXPECT_FALSE(cache_->code_for(key));
}

TEST_P(CacheContract, GenericCodeAndItsTimingsAreAllOrNone) {
    GenericCodeRecord a = generic_row(make_key("K=8,M=8,N=8"));
    GenericCodeRecord b = generic_row(make_key("K=4,M=4,N=4"), 11);
    GenericCodeRecord exact = a;
    exact.code.generic = false;
    exact.code.digest = code_digest(exact.code);
    EXPECT_THROW(cache_->put_generic_code(exact), DbError);
    cache_->put_generic_code(a);
    cache_->put_generic_code(b);
    std::vector<GenericCodeRecord> rows = cache_->generic_code_for("matmul", a.key.target);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].key.shape, "K=4,M=4,N=4");  // key order
    EXPECT_EQ(rows[1].code.digest, a.code.digest);
    EXPECT_TRUE(cache_->generic_code_for("conv", a.key.target).empty());

    GenericTimingRecord unknown = timing(a, "K=16,M=16,N=16", 1.2);
    unknown.digest = "0000";
    EXPECT_THROW(cache_->put_generic_timings({timing(a, "K=16,M=16,N=16", 1.2), unknown}), DbError);
    EXPECT_THROW(cache_->put_generic_timings({timing(a, "K=16,M=16,N=16", -1)}), DbError);
    EXPECT_TRUE(cache_->generic_timings_for("matmul", a.key.target).empty());

    cache_->put_generic_timings({timing(a, "K=32,M=32,N=32", 1.3), timing(a, "K=16,M=16,N=16", 1.2),
                                 timing(b, "K=16,M=16,N=16", 1.1)});
    cache_->put_generic_timings({timing(a, "K=16,M=16,N=16", 1.25)});  // replaces its (key, at_shape)
    std::vector<GenericTimingRecord> t = cache_->generic_timings_for("matmul", a.key.target);
    ASSERT_EQ(t.size(), 3u);
    EXPECT_EQ(t[0].key.shape, "K=4,M=4,N=4");
    EXPECT_EQ(t[1].at_shape, "K=16,M=16,N=16");
    EXPECT_DOUBLE_EQ(t[1].ratio, 1.25);
    EXPECT_EQ(t[2].at_shape, "K=32,M=32,N=32");
    EXPECT_EQ(cache_->stats().generic_code, 2);
    EXPECT_EQ(cache_->stats().generic_timings, 3);
}

TEST_P(CacheContract, RunsAndMeasurementsAreTrainingData) {
    KernelKey key = make_key();
    TuningRun run;
    run.key = key;
    run.op_source = "op matmul\n";
    int64_t id = cache_->begin_run(run);
    EXPECT_GT(id, 0);
    EXPECT_EQ(cache_->op_source(key.op_name, key.op_hash), std::optional<std::string>("op matmul\n"));
    EXPECT_FALSE(cache_->op_source(key.op_name, "other"));

    MeasurementRecord ok = make_measurement(key, R"({"a":1})", 2.0);
    ok.run_id = id;
    MeasurementRecord failed = make_measurement(key, R"({"a":2})", 0);
    failed.status = "timeout";
    failed.run_id = id;
    KernelKey loaded = key;
    loaded.target += ":load1";
    MeasurementRecord under_load = make_measurement(loaded, R"({"a":3})", 3.0);
    KernelKey elsewhere = key;
    elsewhere.target += "-other";
    MeasurementRecord other_target = make_measurement(elsewhere, R"({"a":4})", 3.0);
    MeasurementRecord orphan = make_measurement(key, R"({"a":5})", 1.0);
    orphan.run_id = id + 1000;
    EXPECT_ANY_THROW(cache_->record_measurements({ok, orphan}));
    EXPECT_TRUE(cache_->measurements_for(key).empty());

    cache_->record_measurements({ok, failed, under_load, other_target});
    std::vector<MeasurementRecord> mine = cache_->measurements_for(key);
    ASSERT_EQ(mine.size(), 2u);
    EXPECT_EQ(mine[0].schedule_json, R"({"a":1})");
    EXPECT_EQ(mine[0].features, ok.features);
    EXPECT_EQ(mine[1].status, "timeout");
    std::vector<MeasurementRecord> on = cache_->measurements_on(key.target);
    ASSERT_EQ(on.size(), 2u);  // the ok one and the one under load; not the failed one
    EXPECT_EQ(on[0].schedule_json, R"({"a":1})");
    EXPECT_EQ(on[1].key.target, loaded.target);

    cache_->end_run(id, "done", 2);
    std::vector<TuningRun> runs = cache_->runs_for(key);
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].status, "done");
    EXPECT_EQ(runs[0].trials, 2);
    EXPECT_FALSE(runs[0].finished_at.empty());
    EXPECT_THROW(cache_->end_run(id + 1000, "done", 0), DbError);
    EXPECT_EQ(cache_->stats().tuning_runs, 1);
    EXPECT_EQ(cache_->stats().measurements, 4);
}

TEST_P(CacheContract, TheNewestModelOfATargetAndNameIsTheLatest) {
    ModelRecord m;
    m.target = "t";
    m.name = "xgboost";
    m.bytes = {1};
    cache_->put_model(m);
    m.bytes = {2};
    cache_->put_model(m);
    m.name = "random";
    m.bytes = {3};
    cache_->put_model(m);
    ASSERT_TRUE(cache_->latest_model("t", "xgboost"));
    EXPECT_EQ(cache_->latest_model("t", "xgboost")->bytes, (std::vector<uint8_t>{2}));
    EXPECT_FALSE(cache_->latest_model("u", "xgboost"));
}

TEST_P(CacheContract, VariantsByLevelOneAtEachLevel) {
    KernelKey key = make_key();
    auto variant = [&](double level, double time_ms) {
        VariantRecord v;
        v.key = key;
        v.level = level;
        v.schedule_json = "{}";
        v.time_ms = time_ms;
        return v;
    };
    cache_->put_variant(variant(1.0, 3.0));
    cache_->put_variant(variant(0.5, 2.5));
    cache_->put_variant(variant(0.5, 2.25));  // replaces the first 0.5
    EXPECT_THROW(cache_->put_variant(variant(2.0, 0)), DbError);
    std::vector<VariantRecord> got = cache_->variants_for(key);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_DOUBLE_EQ(got[0].level, 0.5);
    EXPECT_DOUBLE_EQ(got[0].time_ms, 2.25);
    EXPECT_DOUBLE_EQ(got[1].level, 1.0);
    EXPECT_TRUE(cache_->variants_for(make_key("M=1")).empty());
    EXPECT_EQ(cache_->stats().variants, 2);
}

INSTANTIATE_TEST_SUITE_P(BothImplementations, CacheContract, ::testing::Values(Kind::Sqlite, Kind::Memory),
                         [](const ::testing::TestParamInfo<Kind> &info) {
                             return std::string(info.param == Kind::Sqlite ? "Sqlite" : "Memory");
                         });

}  // namespace
}  // namespace opgen::db
