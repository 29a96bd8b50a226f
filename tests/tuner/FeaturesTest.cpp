// The contention level in the tuner's features and estimates: it is the last feature
// column, on every group row, and leaves every other column as it was; the contended roofline is
// the quiet one at level 0 and, as the level grows, charges the bytes from outside L2, so that its
// best points move toward more reuse; measurement keys under load name their level.
#include "tuner/Features.h"
#include "tuner/Tuner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "core/OpLibrary.h"

namespace opgen::tuner {
namespace {

// The variants benchmark's matmul: B (16 MB) is re-read once per m-tile that does not cover M.
struct Matmul {
    ComputeDef def;
    BoundShape shape;
    Target target;
    TilingSpace space;
    Matmul()
        : def(OpLibrary::standard().load("matmul")), shape(bind_shape(def, "M=64,N=1024,K=4096")),
          target(load_target("x86-64-avx512")), space(make_tiling_space(def, shape, target, 1)) {}
};

TEST(Features, ContentionLevelIsTheLastColumnOfEveryRow) {
    Matmul m;
    EXPECT_EQ(feature_names().back(), "contention_level");
    const size_t width = size_t(num_features());
    for (const SchedulePoint &p : m.space.sample(5, 3)) {
        std::vector<float> quiet, loaded, plain;
        int rows = group_features(m.def, m.shape, m.target, m.space, p, 1, quiet, 0);
        ASSERT_EQ(group_features(m.def, m.shape, m.target, m.space, p, 1, loaded, 1.5), rows);
        group_features(m.def, m.shape, m.target, m.space, p, 1, plain);
        EXPECT_EQ(plain, quiet);  // the default is a quiet machine
        ASSERT_EQ(quiet.size(), size_t(rows) * width);
        for (size_t r = 0; r < size_t(rows); r++) {
            EXPECT_EQ(quiet[r * width + width - 1], 0.0f);
            EXPECT_EQ(loaded[r * width + width - 1], 1.5f);
            // Every other column keeps its meaning.
            EXPECT_TRUE(std::equal(quiet.begin() + std::ptrdiff_t(r * width),
                                   quiet.begin() + std::ptrdiff_t(r * width + width - 1),
                                   loaded.begin() + std::ptrdiff_t(r * width)));
        }
    }
    auto pts = m.space.sample(6, 4);
    costmodel::FeatureBatch batch = batch_features(m.def, m.shape, m.target, m.space, pts, 1, 2, 0.5);
    for (size_t r = 0; r < batch.rows.size() / width; r++) EXPECT_EQ(batch.rows[r * width + width - 1], 0.5f);
}

TEST(Features, ContendedRooflineChargesBytesFromOutsideL2ByLevel) {
    Matmul m;
    auto pts = m.space.sample(400, 7);
    ASSERT_GE(pts.size(), 100u);
    for (const SchedulePoint &p : pts) {
        double quiet = roofline_seconds(m.def, m.shape, m.target, m.space, p, 1);
        EXPECT_DOUBLE_EQ(contended_roofline_seconds(m.def, m.shape, m.target, m.space, p, 1, 0), quiet);
        double half = contended_roofline_seconds(m.def, m.shape, m.target, m.space, p, 1, 0.5);
        double one = contended_roofline_seconds(m.def, m.shape, m.target, m.space, p, 1, 1);
        EXPECT_GE(half, quiet);
        EXPECT_GE(one, half);
        EXPECT_GT(dram_bytes(m.def, m.shape, m.target, m.space, p, 1), 0);
    }
    // The best estimated point under heavy contention moves no more bytes than the quiet best.
    auto best_at = [&](double level) {
        return *std::min_element(pts.begin(), pts.end(), [&](const SchedulePoint &a, const SchedulePoint &b) {
            return contended_roofline_seconds(m.def, m.shape, m.target, m.space, a, 1, level) <
                   contended_roofline_seconds(m.def, m.shape, m.target, m.space, b, 1, level);
        });
    };
    SchedulePoint quiet_best = best_at(0), loaded_best = best_at(4);
    EXPECT_LE(dram_bytes(m.def, m.shape, m.target, m.space, loaded_best, 1),
              dram_bytes(m.def, m.shape, m.target, m.space, quiet_best, 1));
}

TEST(Features, LoadedKeysNameTheirLevel) {
    Matmul m;
    db::KernelKey key = kernel_key(m.def, m.shape, m.target, 1);
    EXPECT_EQ(key.target, "x86-64-avx512:t1");
    EXPECT_EQ(loaded_key(key, 0).target, key.target);
    EXPECT_EQ(loaded_key(key, 1).target, "x86-64-avx512:t1:load1");
    EXPECT_EQ(loaded_key(key, 0.5).target, "x86-64-avx512:t1:load0.5");
    EXPECT_EQ(loaded_key(key, 1).shape, key.shape);
    EXPECT_DOUBLE_EQ(contention_level_of(loaded_key(key, 0.5).target), 0.5);
    EXPECT_DOUBLE_EQ(contention_level_of(loaded_key(key, 2).target), 2.0);
    EXPECT_EQ(contention_level_of(key.target), 0);
    EXPECT_EQ(contention_level_of("x86-64-avx512:t1:loadx"), 0);
    EXPECT_EQ(contention_level_of("x86-64-avx512:t1:load-1"), 0);
}

// The roofline counts the cores a point's parallel loop keeps busy: on 2 threads, the
// same tiling parallel over m's one tile runs at one core's peak, over m x n's eight tiles at two,
// and over three tiles at 1.5 (the last round half idle). Compute-bound tiles, so the peak decides.
TEST(Features, RooflineCountsTheParallelLoopsIterations) {
    Matmul m;
    TilingSpace two = make_tiling_space(m.def, m.shape, m.target, 2);
    SchedulePoint p = heuristic_point(m.def, m.shape, m.target);
    p.axes = {{"n", 128, 64}, {"m", 64, 8}};  // n in 8 tiles, m in 1
    p.reduce = {{"k", 256}};                    // small panels: the compute term dominates
    p.outer_order = {"n", "m"};                // m outermost
    p.parallel_loops = 1;
    const double one_tile = roofline_seconds(m.def, m.shape, m.target, two, p, 2);
    p.parallel_loops = 2;
    const double eight_tiles = roofline_seconds(m.def, m.shape, m.target, two, p, 2);
    EXPECT_NEAR(one_tile / eight_tiles, 2.0, 1e-9);
    p.axes[0].tile = 384;  // n in 3 tiles (the last shifted inwards)
    p.axes[0].reg = 64;
    const double three_tiles = roofline_seconds(m.def, m.shape, m.target, two, p, 2);
    p.parallel_loops = 1;
    EXPECT_NEAR(roofline_seconds(m.def, m.shape, m.target, two, p, 2) / three_tiles, 1.5, 1e-9);
    // One thread: the parallel choice changes nothing.
    const double serial = roofline_seconds(m.def, m.shape, m.target, m.space, p, 1);
    p.parallel_loops = 2;
    EXPECT_DOUBLE_EQ(roofline_seconds(m.def, m.shape, m.target, m.space, p, 1), serial);
}

// Issue 40: an int8 point is told apart from a float32 one of the same loop nest by the element
// bytes and the dot-product group, and the roofline rates its compute at the group's products a
// lane: the same point with vpdpbusd (4 products) is estimated 4 times faster where compute decides.
TEST(Features, Int8PointsNameTheirTypesAndTheirDotProduct) {
    const ComputeDef def = OpLibrary::standard().load("matmul_u8s8");
    const BoundShape shape = bind_shape(def, "M=256,N=256,K=256");
    Target target = load_target("x86-64-avx512");
    target.features = {"avx512_vnni"};
    const TilingSpace space = make_tiling_space(def, shape, target, 1);
    SchedulePoint p = heuristic_point(def, shape, target);
    ASSERT_EQ(p.dot_product, 4);
    const auto names = feature_names();
    const auto column = [&](const std::string &name) {
        return size_t(std::find(names.begin(), names.end(), name) - names.begin());
    };
    std::vector<float> row;
    ASSERT_GT(group_features(def, shape, target, space, p, 1, row), 0);
    EXPECT_EQ(row[column("input_bytes_min")], 1.0f);
    EXPECT_EQ(row[column("dot_product_group")], 4.0f);
    EXPECT_EQ(row[column("amx_tile")], 0.0f);

    const double grouped = roofline_seconds(def, shape, target, space, p, 1);
    SchedulePoint plain = p;
    plain.dot_product = 0;
    EXPECT_NEAR(roofline_seconds(def, shape, target, space, plain, 1) / grouped, 4.0, 1e-9);

    Matmul f32;
    std::vector<float> f32_row;
    group_features(f32.def, f32.shape, f32.target, f32.space, heuristic_point(f32.def, f32.shape, f32.target), 1,
                   f32_row);
    EXPECT_EQ(f32_row[column("input_bytes_min")], 4.0f);
    EXPECT_EQ(f32_row[column("dot_product_group")], 0.0f);
}

}  // namespace

// Issue 19: the stage plan is described on every row, statement by statement, so two points that
// differ only in where softmax's `ex` is computed differ in their features, in ex's slot.
TEST(Features, DescribeWhereEachStatementIsComputed) {
    ComputeDef def = OpLibrary::standard().load("softmax");
    BoundShape shape = bind_shape(def, "M=64,N=768");
    Target target = load_target("x86-64-avx512");
    TilingSpace space = make_tiling_space(def, shape, target, 1);
    const auto &names = feature_names();
    auto col = [&](const std::string &name) {
        return size_t(std::find(names.begin(), names.end(), name) - names.begin());
    };
    auto slot_of_ex = [](const SchedulePoint &p) {
        for (size_t i = 0; i < p.stages.size(); i++) {
            if (p.stages[i].tensor == "ex") return int(i);
        }
        return -1;
    };
    // Two legal points with the same loops and plan but for where `ex` is computed.
    std::optional<SchedulePoint> a, b;
    for (const SchedulePoint &p : space.legal) {
        const int i = slot_of_ex(p);
        if (i < 0) continue;
        if (!a) {
            a = p;
            continue;
        }
        SchedulePoint moved = *a;
        moved.stages[size_t(i)].at = p.stages[size_t(i)].at;
        if (moved == p && p.stages[size_t(i)].at != a->stages[size_t(i)].at) {
            b = p;
            break;
        }
    }
    ASSERT_TRUE(a && b) << "no two points differ only in where ex is computed";
    const std::string slot = "stage" + std::to_string(slot_of_ex(*a)) + "_depth";
    ASSERT_LT(col(slot), names.size());
    const size_t width = size_t(num_features());
    std::vector<float> fa, fb;
    int rows = group_features(def, shape, target, space, *a, 1, fa);
    ASSERT_EQ(group_features(def, shape, target, space, *b, 1, fb), rows);
    ASSERT_GE(rows, 1);
    for (size_t r = 0; r < size_t(rows); r++) {
        EXPECT_NE(fa[r * width + col(slot)], fb[r * width + col(slot)]);
        EXPECT_GE(fa[r * width + col(slot)], 0.0f);
        const float placed = fa[r * width + col("stages_inline")] + fa[r * width + col("stages_root")] +
                             fa[r * width + col("stages_tile")] + fa[r * width + col("stages_row")];
        EXPECT_EQ(placed, float(a->stages.size()));
        if (a->stages.size() <= 3) {
            EXPECT_EQ(fa[r * width + col("stage3_depth")], -1.0f);  // an absent slot
        }
    }
}

}  // namespace opgen::tuner
