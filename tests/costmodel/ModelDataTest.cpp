// Training data for the cost model (tuner/ModelData) and where models are kept (tuner/ModelStore):
// measured records become one candidate per point with features recomputed from the schedule,
// times corrected by the interleaved reference kernel; model files and the cache's models table
// round-trip, and damaged or missing files raise errors naming the file.
#include "store/KernelCache.h"
#include "base/Error.h"
#include "core/OpLibrary.h"
#include "tuner/Features.h"
#include "tuner/ModelData.h"
#include "tuner/ModelStore.h"
#include "tuner/Tuner.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace opgen;
using namespace opgen::tuner;
namespace fs = std::filesystem;

namespace {

struct Task {
    ComputeDef def = OpLibrary::standard().load("matmul");
    BoundShape shape = bind_shape(def, "M=64,N=64,K=64");
    Target target = load_target("x86-64-avx512");
    TilingSpace space = make_tiling_space(def, shape, target, 1);
    db::KernelKey key = kernel_key(def, shape, target, 1);

    db::MeasurementRecord record(const SchedulePoint &p, double ms, const std::string &status = "ok") const {
        db::MeasurementRecord m;
        m.key = key;
        m.schedule_json = p.to_json().dump();
        m.time_ms = ms;
        m.status = status;
        return m;
    }
};

class TempDir : public ::testing::Test {
protected:
    fs::path dir;
    void SetUp() override {
        dir = fs::temp_directory_path() / ("opgen-modeldata-" + std::to_string(::getpid()) + "-" +
                                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir);
        fs::create_directories(dir);
    }
    void TearDown() override { fs::remove_all(dir); }
};

}  // namespace

TEST(ModelData, CorrectsTimesByTheInterleavedReference) {
    Task t;
    auto pts = t.space.sample(3, 5);
    ASSERT_EQ(pts.size(), 3u);
    const SchedulePoint &ref = pts[0];
    // The clock runs at normal speed around P1 and twice as slow around P2 (the references on
    // either side take 1 and 3 ms): P2's 6 ms is 3 ms at the task's median speed.
    std::vector<db::MeasurementRecord> recs = {t.record(ref, 1.0), t.record(pts[1], 2.0), t.record(ref, 1.0),
                                               t.record(pts[2], 6.0), t.record(ref, 3.0)};
    ModelData d = build_model_data(recs, OpLibrary::standard(), t.target);
    ASSERT_EQ(d.set.throughput.size(), 3u);
    EXPECT_EQ(d.task_names, std::vector<std::string>{"matmul K=64,M=64,N=64"});
    EXPECT_DOUBLE_EQ(d.set.throughput[0], 1.0);  // the reference: median of its corrected times
    EXPECT_DOUBLE_EQ(d.set.throughput[1], 1.0 / 2.0);
    EXPECT_DOUBLE_EQ(d.set.throughput[2], 1.0 / 3.0);
    EXPECT_EQ(d.roofline_scores.size(), 3u);
    EXPECT_EQ(d.dropped, 0u);
}

TEST(ModelData, RecomputesFeaturesFromTheSchedule) {
    Task t;
    auto pts = t.space.sample(2, 9);
    std::vector<db::MeasurementRecord> recs = {t.record(pts[0], 1.0), t.record(pts[1], 2.0)};
    recs[0].features = {1, 2, 3};  // stale rows from an older feature set are not used
    ModelData d = build_model_data(recs, OpLibrary::standard(), t.target);
    std::vector<float> rows;
    int n = group_features(t.def, t.shape, t.target, t.space, pts[1], 1, rows);
    ASSERT_EQ(d.set.batch.num_candidates(), 2u);
    EXPECT_EQ(d.set.batch.num_features, num_features());
    EXPECT_EQ(d.set.batch.row_begin[2] - d.set.batch.row_begin[1], n);
    std::vector<float> got(d.set.batch.rows.begin() + d.set.batch.row_begin[1] * num_features(), d.set.batch.rows.end());
    EXPECT_EQ(got, rows);
    EXPECT_DOUBLE_EQ(d.roofline_scores[1], -roofline_seconds(t.def, t.shape, t.target, t.space, pts[1], 1));
}

// Measurements taken under a contention load (their key's target ends ":load<level>") are training
// data with their level: a task of their own, with the level in the last column and the thread
// count still read from the key.
TEST(ModelData, MeasurementsUnderLoadAreATaskOfTheirOwnWithTheirLevel) {
    Task t;
    auto pts = t.space.sample(2, 11);
    std::vector<db::MeasurementRecord> recs = {t.record(pts[0], 1.0), t.record(pts[1], 2.0)};
    for (auto r : {t.record(pts[0], 3.0), t.record(pts[1], 2.5)}) {
        r.key = loaded_key(t.key, 0.5);
        recs.push_back(r);
    }
    ModelData d = build_model_data(recs, OpLibrary::standard(), t.target);
    ASSERT_EQ(d.set.throughput.size(), 4u);
    EXPECT_EQ(d.set.task, (std::vector<int32_t>{0, 0, 1, 1}));
    EXPECT_EQ(d.task_names.size(), 2u);
    const size_t width = size_t(num_features());
    for (size_t c = 0; c < 4; c++) {
        std::vector<float> rows;
        group_features(t.def, t.shape, t.target, t.space, pts[c % 2], 1, rows, c < 2 ? 0.0 : 0.5);
        std::vector<float> got(d.set.batch.rows.begin() + std::ptrdiff_t(size_t(d.set.batch.row_begin[c]) * width),
                               d.set.batch.rows.begin() + std::ptrdiff_t(size_t(d.set.batch.row_begin[c + 1]) * width));
        EXPECT_EQ(got, rows) << "candidate " << c;
        EXPECT_EQ(got.back(), c < 2 ? 0.0f : 0.5f);
    }
    EXPECT_DOUBLE_EQ(d.set.throughput[2], 1.0 / 3.0);
}

TEST(ModelData, BatchFeaturesAreTheSameOnAnyNumberOfWorkers) {
    Task t;
    auto pts = t.space.sample(37, 5);
    costmodel::FeatureBatch one = batch_features(t.def, t.shape, t.target, t.space, pts, 1, 1);
    ASSERT_EQ(one.num_candidates(), pts.size());
    std::vector<float> rows;
    int n = group_features(t.def, t.shape, t.target, t.space, pts[36], 1, rows);
    EXPECT_EQ(one.row_begin[37] - one.row_begin[36], n);
    EXPECT_EQ(std::vector<float>(one.rows.end() - std::ptrdiff_t(rows.size()), one.rows.end()), rows);
    for (int workers : {2, 3, 64}) {
        costmodel::FeatureBatch many = batch_features(t.def, t.shape, t.target, t.space, pts, 1, workers);
        EXPECT_EQ(many.rows, one.rows) << workers << " workers";
        EXPECT_EQ(many.row_begin, one.row_begin) << workers << " workers";
    }
    EXPECT_EQ(batch_features(t.def, t.shape, t.target, t.space, {}, 1, 4).num_candidates(), 0u);
}

TEST(ModelData, SkipsFailuresAndDropsUnknownOps) {
    Task t;
    auto pts = t.space.sample(3, 2);
    std::vector<db::MeasurementRecord> recs = {t.record(pts[0], 1.0), t.record(pts[1], 0, "wrong_result"),
                                               t.record(pts[2], 2.0)};
    db::MeasurementRecord alien = t.record(pts[0], 1.0);
    alien.key.op_name = "no_such_op";
    recs.push_back(alien);
    ModelData d = build_model_data(recs, OpLibrary::standard(), t.target);
    EXPECT_EQ(d.set.throughput.size(), 2u);
    EXPECT_EQ(d.task_names.size(), 1u);
    EXPECT_EQ(d.dropped, 1u);
}

TEST_F(TempDir, ModelFileRoundTripsAndDamageIsNamed) {
    Task t;
    auto pts = t.space.sample(12, 3);
    std::vector<db::MeasurementRecord> recs;
    for (size_t i = 0; i < pts.size(); i++) recs.push_back(t.record(pts[i], 1.0 + double(i)));
    ModelData d = build_model_data(recs, OpLibrary::standard(), t.target);
    auto model = costmodel::make_xgboost_model(num_features());
    costmodel::TrainOptions o;
    o.rounds = 5;
    model->train(d.set, o);
    const std::string path = (dir / "m.model").string();
    save_model_file(*model, path);
    EXPECT_FALSE(fs::exists(path + ".tmp"));
    auto back = load_model_file(path);
    EXPECT_EQ(back->predict(d.set.batch), model->predict(d.set.batch));

    fs::resize_file(path, fs::file_size(path) - 7);
    try {
        load_model_file(path);
        FAIL() << "a truncated model file loaded";
    } catch (const costmodel::ModelError &e) {
        EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
    EXPECT_THROW(load_model_file((dir / "missing.model").string()), UserError);
    EXPECT_THROW(save_model_file(*model, (dir / "no-such-dir" / "m.model").string()), UserError);
}

TEST_F(TempDir, CacheKeepsModelsPerTargetNewestFirst) {
    auto cache = db::open_kernel_cache((dir / "c.db").string());
    EXPECT_FALSE(cache->latest_model("x86-64-avx512:t1", "xgboost").has_value());
    db::ModelRecord a;
    a.target = "x86-64-avx512:t1";
    a.name = "xgboost";
    a.train_rows = 10;
    a.quality_json = R"({"pairwise_accuracy": 0.7})";
    a.bytes = {1, 2, 3};
    cache->put_model(a);
    db::ModelRecord b = a;
    b.train_rows = 20;
    b.bytes = {4, 5};
    cache->put_model(b);
    db::ModelRecord other = a;
    other.target = "x86-64-avx2:t1";
    other.train_rows = 99;
    cache->put_model(other);
    auto got = cache->latest_model("x86-64-avx512:t1", "xgboost");
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->train_rows, 20);
    EXPECT_EQ(got->bytes, (std::vector<uint8_t>{4, 5}));
    EXPECT_EQ(got->quality_json, a.quality_json);
    EXPECT_FALSE(got->created_at.empty());
}
