// Across every bundled op, seeded random points of the legal space compile and compute results
// that match the reference: the space holds only realisable schedules. Odd, non-power-of-two
// extents on purpose, so tails are exercised. Parameterised by op so a failure names it.
#include "core/OpLibrary.h"
#include "core/ParallelLoops.h"
#include "core/StagePlacement.h"
#include "tuner/Measurer.h"
#include "core/TilingSpace.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

using namespace opgen;
using namespace opgen::tuner;

namespace {

// A small shape per bundled op; an op missing here fails the coverage test below.
const std::map<std::string, std::string> &shapes() {
    static const std::map<std::string, std::string> s = {
        {"add", "M=19,N=45"},
        {"avg_pool2d", "N=1,C=5,H=18,W=22"},
        {"batch_matmul", "BATCH=3,M=13,N=37,K=11"},
        {"batch_matmul_nt", "BATCH=2,M=11,N=35,K=19"},
        {"conv2d_bias_relu", "N=1,C=5,H=11,W=19,F=6"},
        {"conv2d_nchw", "N=2,C=3,H=13,W=18,F=7,stride=2"},
        {"conv2d_nchwc", "N=1,CB=6,H=9,W=13,FB=3,cb=5,fb=8,stride=2"},
        {"conv2d_nhwc", "N=1,H=9,W=17,C=5,F=19"},
        {"conv2d_nhwc_u8s8_requant", "N=1,H=9,W=11,C=12,F=19"},
        {"depthwise_conv2d", "N=1,C=6,H=15,W=21"},
        {"depthwise_conv2d_nchwc", "N=1,CB=2,H=15,W=11,cb=8"},
        {"gelu", "M=7,N=53"},
        {"layernorm", "M=9,N=67"},
        {"matmul", "M=29,N=41,K=23"},
        {"matmul_bias_gelu", "M=21,N=35,K=17"},
        {"matmul_bias_relu", "M=17,N=50,K=19"},
        {"matmul_bf16", "M=21,N=37,K=22"},
        {"matmul_u8s8", "M=29,N=41,K=24"},
        {"matmul_u8s8_requant", "M=29,N=41,K=24"},
        {"matmul_u8s8_requant_s8", "M=19,N=37,K=20"},
        {"max_pool2d", "N=1,C=4,H=19,W=24,KH=3,KW=3,stride=2,pad=1"},
        {"mul", "M=23,N=33"},
        {"nchw_to_nhwc", "N=1,C=19,H=7,W=9"},
        {"nhwc_to_nchw", "N=1,H=7,W=9,C=19"},
        {"reduce_max", "M=11,N=75"},
        {"reduce_sum", "M=13,N=61"},
        {"relu", "M=5,N=99"},
        {"sigmoid", "M=6,N=43"},
        {"softmax", "M=7,N=83"},
        {"transpose2d", "M=21,N=35"},
    };
    return s;
}

constexpr int kPointsPerOp = 10;

class RandomPoints : public ::testing::TestWithParam<std::string> {};

}  // namespace

TEST(RandomPointsCoverage, EveryBundledOpHasAShape) {
    for (const auto &op : OpLibrary::standard().list()) {
        EXPECT_TRUE(shapes().count(op)) << "op '" << op << "' has no shape in RandomPointsTest.cpp";
    }
    // 25 ops x 10 points: at least the 200 points the design asks for.
    EXPECT_GE(shapes().size() * kPointsPerOp, 200u);
}

TEST_P(RandomPoints, CompileAndMatchTheReference) {
    const std::string &name = GetParam();
    ComputeDef def = OpLibrary::standard().load(name);
    BoundShape shape = bind_shape(def, shapes().at(name));
    Target host = host_target();
    TilingSpace s = make_tiling_space(def, shape, host, 2);
    ASSERT_FALSE(s.legal.empty()) << name;
    TaskContext task(def, shape, host, 17);
    auto points = s.sample(kPointsPerOp, 99);
    EXPECT_EQ(points.size(), std::min<size_t>(kPointsPerOp, s.legal.size()));
    for (const auto &p : points) {
        if (std::getenv("OPGEN_TRACE_POINTS")) std::fprintf(stderr, "%s %s\n", name.c_str(), p.to_json().dump().c_str());
        MeasureResult r = measure(task, p, 0.5, 1);
        EXPECT_EQ(r.status, "ok") << name << " " << p.summary() << ": " << r.error;
    }
}

// The parallel loop chosen among the tile loops, on every bundled op: on the sampled
// tiling with the most (outer order, parallel loops) pairs, each pair with another outermost loop
// or another fusion, up to four, compiled and checked against the reference; each fuses loops of
// at least two iterations where the tiling has them.
TEST_P(RandomPoints, ParallelLoopChoicesMatchTheReference) {
    const std::string &name = GetParam();
    ComputeDef def = OpLibrary::standard().load(name);
    BoundShape shape = bind_shape(def, shapes().at(name));
    Target host = host_target();
    host.cores = std::max(host.cores, 2);
    TilingSpace s = make_tiling_space(def, shape, host, 2);
    auto points = s.sample(kPointsPerOp, 99);
    ASSERT_FALSE(points.empty()) << name;
    const SchedulePoint tiling = *std::max_element(points.begin(), points.end(), [&](const auto &a, const auto &b) {
        return loop_plan_count(s.knobs, a) < loop_plan_count(s.knobs, b);
    });
    TaskContext task(def, shape, host, 31);
    std::set<std::pair<std::string, int>> tried;  // (outermost loop, loops fused)
    for (size_t i = 0; i < loop_plan_count(s.knobs, tiling) && tried.size() < 4; i++) {
        SchedulePoint p = tiling;
        set_loop_plan(s.knobs, p, i);
        if (!tried.insert({p.outer_order.back(), p.parallel_loops}).second) continue;
        ASSERT_TRUE(s.contains(p)) << name << " " << p.summary();
        std::vector<int64_t> trips = cache_loop_trips(p, s.knobs.extents);
        if (fused_trips(trips, int(trips.size())) >= 2) {
            EXPECT_GE(fused_trips(trips, p.parallel_loops), 2) << p.summary();
        }
        LoweredOp op = lower_for_point(def, shape, &p);
        EXPECT_NE(apply_schedule(op, p, host).source().find(".parallel("), std::string::npos) << p.summary();
        MeasureResult r = measure(task, p, 0.5, 1);
        EXPECT_EQ(r.status, "ok") << name << " " << p.summary() << ": " << r.error;
    }
    EXPECT_FALSE(tried.empty()) << name;
}

// Every placement the stage knob offers (the stage knob, docs/design.md §2.4: each other statement at root, in the output's
// cache tile, per register tile of its rows, or inlined), on every bundled op: for each choice, the
// first plan holding it, on a sampled tiling made to have whole rows in cache tiles of several
// register tiles of rows, the row loop outermost; compiled and checked against the reference.
// A choice at row computes its statement at the rows' register-tile loop. An op with no statement
// to place offers plans that place nothing (exact math, and fast math where it applies).
TEST_P(RandomPoints, EveryStageChoiceMatchesTheReference) {
    const std::string &name = GetParam();
    ComputeDef def = OpLibrary::standard().load(name);
    BoundShape shape = bind_shape(def, shapes().at(name));
    Target host = host_target();
    TilingSpace s = make_tiling_space(def, shape, host, 2);
    const auto &plans = s.knobs.stage_plans;
    if (placeable_statements(def).empty()) {
        ASSERT_EQ(plans.size(), fast_math_applies(def) ? 2u : 1u) << name;  // exact and fast math
        for (const auto &plan : plans) EXPECT_TRUE(plan.stages.empty()) << name;
        return;
    }
    std::vector<SchedulePoint> rows_tiled;  // whole rows, several register tiles of rows per tile
    const Statement &out = *def.statement_for(def.output().name);
    for (SchedulePoint p : s.sample(400, 41)) {
        if (p.axes.size() != 2 || p.axes[0].tile != shape.var_extent(out, p.axes[0].var) ||
            p.axes[1].tile <= p.axes[1].reg) {
            continue;
        }
        p.outer_order = {p.axes[0].var, p.axes[1].var};
        snap_parallel_loops(s.knobs, p);
        if (s.contains(p)) rows_tiled.push_back(p);
    }
    ASSERT_FALSE(rows_tiled.empty()) << name;
    const std::string row_loop = ".compute_at(" + def.output().name + ", " + rows_tiled.front().axes[1].var + "__r)";
    TaskContext task(def, shape, host, 43);
    std::set<std::string> tried;  // "tensor@at/lanes"
    for (const auto &plan : plans) {
        for (const StageChoice &c : plan.stages) {
            if (!tried.insert(c.tensor + "@" + c.at + "/" + std::to_string(c.lanes)).second) continue;
            SchedulePoint p = rows_tiled[tried.size() % rows_tiled.size()];
            p.stages = plan.stages;
            p.fast_math = fast_math_applies(def) && tried.size() % 2 == 1;
            ASSERT_TRUE(s.contains(p)) << name << " " << p.summary();
            if (c.at == "row") {
                LoweredOp op = lower_for_point(def, shape, &p);
                std::string src = apply_schedule(op, p, host).source();
                EXPECT_NE(src.find(row_loop), std::string::npos) << p.summary() << "\n" << src;
            }
            MeasureResult r = measure(task, p, 0.5, 1);
            EXPECT_EQ(r.status, "ok") << name << " " << p.summary() << ": " << r.error;
        }
    }
    std::set<std::string> places;
    for (const auto &t : tried) places.insert(t.substr(t.find('@') + 1, t.find('/') - t.find('@') - 1));
    EXPECT_TRUE(places.count("root") && places.count("tile") && places.count("row")) << name;
}

INSTANTIATE_TEST_SUITE_P(BundledOps, RandomPoints, ::testing::ValuesIn([] {
                             std::vector<std::string> names;
                             for (const auto &[n, s] : shapes()) names.push_back(n);
                             return names;
                         }()),
                         [](const ::testing::TestParamInfo<std::string> &info) { return info.param; });

// The knobs beyond split factors, each compiled and checked against the reference: a
// double-buffered panel buffer (async producers), prefetching, the register-tile loop order,
// half-width vectors and no unrolling.
TEST(ScheduleKnobs, CompileAndMatchTheReference) {
    ComputeDef def = OpLibrary::standard().load("matmul");
    BoundShape shape = bind_shape(def, "M=40,N=64,K=96");
    Target t = host_target();
    for (auto &b : t.buffers) {
        if (b.name == "L2") b.double_buffered = true;
    }
    TaskContext task(def, shape, t, 5);
    int lanes = t.vector_lanes(4);
    SchedulePoint base = heuristic_point(def, shape, t);
    base.axes[0] = {"n", 64, 2 * lanes <= 64 ? 2 * lanes : lanes};
    base.axes[1] = {"m", 20, 4};
    base.reduce[0].block = 32;
    base.packed = {"A", "B"};
    base.parallel_loops = 1;

    SchedulePoint async_panels = base;  // blocked, both panels double-buffered
    SchedulePoint prefetch = base;
    prefetch.reduce[0].block = 96;
    prefetch.packed = {"A"};
    prefetch.prefetch = 4;
    prefetch.axes[0] = {"n", 64, lanes / 2 >= 4 ? lanes / 2 : lanes};
    prefetch.vector_width = prefetch.axes[0].reg;
    prefetch.tile_order = {"m", "n"};
    SchedulePoint blocked_prefetch = base;
    blocked_prefetch.packed = {};
    blocked_prefetch.prefetch = 2;
    blocked_prefetch.unroll = false;
    for (const SchedulePoint &p : {async_panels, prefetch, blocked_prefetch}) {
        LoweredOp op = lower_to_halide(def, shape);
        std::string src = apply_schedule(op, p, t).source();
        MeasureResult r = measure(task, p, 0.5, 1);
        EXPECT_EQ(r.status, "ok") << p.summary() << ": " << r.error << "\n" << src;
        if (&p == &async_panels) {
            EXPECT_NE(src.find(".async()"), std::string::npos) << src;
        }
        if (p.prefetch) {
            EXPECT_NE(src.find(".prefetch(B"), std::string::npos) << src;
        }
    }
}

// A reduction extent with no block that divides it (1115 = 5 x 223) still has a legal space: its
// blocks leave a guarded last block, and such points compute the right result.
TEST(ScheduleKnobs, NonDividingReductionBlocksMatchTheReference) {
    ComputeDef def = OpLibrary::standard().load("matmul");
    BoundShape shape = bind_shape(def, "M=48,N=64,K=1115");
    Target host = host_target();
    TilingSpace s = make_tiling_space(def, shape, host, 1);
    ASSERT_FALSE(s.legal.empty());
    TaskContext task(def, shape, host, 3);
    int tried = 0;
    for (const auto &p : s.sample(400, 7)) {
        if (p.reduce[0].block == 1115 || 1115 % p.reduce[0].block == 0 || tried == 3) continue;
        tried++;
        MeasureResult r = measure(task, p, 0.5, 1);
        EXPECT_EQ(r.status, "ok") << p.summary() << ": " << r.error;
    }
    EXPECT_EQ(tried, 3);
}

// Every stage plan of the row operations (the stage knob, docs/design.md §2.4: each other statement at root, in the output's
// tile, per register tile of its rows or inlined; reductions in one or several vectors of partial results; exp exact or fast),
// each on a different sampled tiling, compiled and checked against the reference. Extents that
// the lanes divide, so the partial-result choices are offered.
TEST(StagePlans, EveryPlanOfTheRowOpsMatchesTheReference) {
    Target host = host_target();
    for (const auto &[name, dims] : std::vector<std::pair<std::string, std::string>>{{"softmax", "M=7,N=96"},
                                                                                      {"layernorm", "M=9,N=64"}}) {
        ComputeDef def = OpLibrary::standard().load(name);
        BoundShape shape = bind_shape(def, dims);
        TilingSpace s = make_tiling_space(def, shape, host, 2);
        const auto &plans = s.knobs.stage_plans;
        ASSERT_GT(plans.size(), 4u) << name;
        bool lanes = false;
        for (const auto &plan : plans) {
            for (const auto &c : plan.stages) lanes |= c.lanes > 1;
        }
        EXPECT_TRUE(lanes) << name << ": no plan keeps partial results in lanes";
        auto tilings = s.sample(plans.size(), 5);
        ASSERT_FALSE(tilings.empty());
        TaskContext task(def, shape, host, 23);
        for (size_t i = 0; i < plans.size(); i++) {
            SchedulePoint p = tilings[i % tilings.size()];
            p.stages = plans[i].stages;
            p.fast_math = plans[i].fast_math;
            ASSERT_TRUE(s.contains(p)) << p.summary();
            MeasureResult r = measure(task, p, 0.5, 1);
            EXPECT_EQ(r.status, "ok") << name << " " << p.summary() << ": " << r.error;
        }
    }
}

// Rows of 16 vectors: every reduction may keep 2, 4 or 8 vectors of partial sums (independent add
// chains, combined by one vector reduction). Each lane count, with the reductions in the output's
// tile and at root, on a sampled tiling with exact and fast math, matches the reference.
TEST(StagePlans, EveryPartialSumWidthMatchesTheReference) {
    Target host = host_target();
    const int v = host.vector_lanes(4);
    const std::string dims = "M=5,N=" + std::to_string(16 * v);
    for (const std::string name : {"softmax", "layernorm"}) {
        ComputeDef def = OpLibrary::standard().load(name);
        BoundShape shape = bind_shape(def, dims);
        std::vector<int> want{1};
        if (v > 1) want = {1, 2 * v, 4 * v, 8 * v};
        EXPECT_EQ(reduction_lanes(*def.statement_for(name == "softmax" ? "rsum" : "mean"), shape, v), want) << name;
        TilingSpace s = make_tiling_space(def, shape, host, 2);
        auto tilings = s.sample(8, 7);
        ASSERT_FALSE(tilings.empty());
        TaskContext task(def, shape, host, 29);
        int tried = 0;
        for (int lanes : want) {
            for (const char *at : {"tile", "root"}) {
                std::vector<StageChoice> plan = heuristic_placement(def, shape, host);
                for (auto &c : plan) {
                    if (c.lanes > 1 || def.statement_for(c.tensor)->reduce != ReduceKind::None) {
                        c.lanes = lanes;
                        c.at = at;
                    }
                    if (std::string(at) == "root") c.at = "root";  // nothing at root may read a tile
                }
                SchedulePoint p = tilings[size_t(tried) % tilings.size()];
                p.stages = plan;
                p.fast_math = tried % 2 == 1;
                ASSERT_TRUE(s.contains(p)) << name << " " << p.summary();
                if (lanes > 1) {
                    LoweredOp op = lower_for_point(def, shape, &p);
                    std::string src = apply_schedule(op, p, host).source();
                    EXPECT_NE(src.find(".update().atomic().vectorize("), std::string::npos) << src;
                }
                MeasureResult r = measure(task, p, 0.5, 1);
                EXPECT_EQ(r.status, "ok") << name << " " << p.summary() << ": " << r.error;
                tried++;
            }
        }
    }
}

// Output channels as the vectorized axis of an NCHW convolution (rows of 7 leave a partial vector):
// unblocked and blocked reductions, weights read in place (gathered along f) or packed into a panel
// re-laid out with f contiguous, the input packed, a bias-ReLU epilogue, two threads; every one
// compiled and checked against the reference, and its schedule vectorizing f.
TEST(ScheduleKnobs, OutputChannelVectorsMatchTheReference) {
    Target host = host_target();
    const int lanes = host.vector_lanes(4);
    for (const char *op : {"conv2d_nchw", "conv2d_bias_relu"}) {
        ComputeDef def = OpLibrary::standard().load(op);
        BoundShape shape = bind_shape(def, "N=1,C=32,H=7,W=7,F=" + std::to_string(2 * lanes));
        TilingSpace s = make_tiling_space(def, shape, host, 2);
        TaskContext task(def, shape, host, 11);
        std::set<std::string> kinds;  // (blocked, packed) combinations tried
        for (const auto &p : s.sample(4000, 5)) {
            if (p.vector_axis != 2) continue;
            bool blocked = p.reduce.back().block < 32;
            std::string kind = std::to_string(blocked) + ":" + std::to_string(p.packed.size()) + ":" +
                               (p.packed.empty() ? "" : p.packed.back());
            if (!kinds.insert(kind).second) continue;
            LoweredOp lowered = lower_to_halide(def, shape);
            std::string src = apply_schedule(lowered, p, host).source();
            EXPECT_NE(src.find(".vectorize(f__i, " + std::to_string(lanes)), std::string::npos) << src;
            MeasureResult r = measure(task, p, 0.5, 1);
            EXPECT_EQ(r.status, "ok") << op << " " << p.summary() << ": " << r.error << "\n" << src;
        }
        // Whole and blocked, each with nothing, X, Wt and both packed.
        EXPECT_GE(kinds.size(), 6u) << op;
    }
}

// The channel loop innermost with the window loops around it (SchedulePoint::channels_innermost,
// offered for a window inside channels): on an NCHW convolution and its bias-ReLU twin, rows of 7
// (output channels vectorized) and of 19 (rows vectorized, a tail), unblocked and blocked
// reductions, stride 2 on the second; every one compiled and checked against the reference, with
// the channel loop first among the update's reduction loops.
TEST(ScheduleKnobs, ChannelsInnermostMatchesTheReference) {
    Target host = host_target();
    const int lanes = host.vector_lanes(4);
    const std::vector<std::pair<const char *, std::string>> cases = {
        {"conv2d_nchw", "N=1,C=32,H=7,W=7,F=" + std::to_string(2 * lanes)},
        {"conv2d_bias_relu", "N=1,C=32,H=9,W=19,F=6,stride=2"},
    };
    for (const auto &[op, shape_text] : cases) {
        ComputeDef def = OpLibrary::standard().load(op);
        BoundShape shape = bind_shape(def, shape_text);
        TilingSpace s = make_tiling_space(def, shape, host, 1);
        ASSERT_EQ(s.knobs.channel_orders, (std::vector<bool>{false, true})) << op;
        TaskContext task(def, shape, host, 13);
        std::set<std::string> kinds;  // (vector axis, blocked) combinations tried
        for (const auto &p : s.sample(4000, 7)) {
            if (!p.channels_innermost) continue;
            bool blocked = p.reduce.back().block < s.reduce.back().extent;
            if (!kinds.insert(std::to_string(p.vector_axis) + ":" + std::to_string(blocked)).second) continue;
            LoweredOp lowered = lower_to_halide(def, shape);
            std::string src = apply_schedule(lowered, p, host).source();
            EXPECT_NE(src.find(blocked ? "c__i, rx__i, ry__i" : ", c, rx, ry"), std::string::npos) << src;
            MeasureResult r = measure(task, p, 0.5, 1);
            EXPECT_EQ(r.status, "ok") << op << " " << p.summary() << ": " << r.error << "\n" << src;
        }
        EXPECT_GE(kinds.size(), 2u) << op;
    }
}

namespace {

// The heuristic point on `t.cores` cores, serial on one (as the tuner's reference is).
SchedulePoint starting_point(const ComputeDef &def, const BoundShape &shape, const Target &t) {
    SchedulePoint p = heuristic_point(def, shape, t);
    if (t.cores <= 1) p.parallel_loops = 0;
    return p;
}

}  // namespace

// The starting point of an NCHW convolution whose rows are shorter than a vector
// (core/ConvWindow.h short_row_conv_point): output channels vectorized, channels in blocks of 16
// innermost, input and weights packed (a 1x1: channels whole, weights only). On the AVX-512 target (16 lanes, 32 registers) at ResNet-50's
// 14x14x256->256: 7 pixels x 2 rows x 2 vectors = 28 accumulators; at 7x7x512->512, whose rows must
// divide the column (one row) and whose registers leave room for 2 weight vectors of 3 (48 does
// not divide 512): 7 x 1 x 2 = 14. Under a 3x3 window rows of 56 and 28 (a partial vector on 16
// lanes) start the same way, 7 x 2 x 2. Each a point of the space on one and two threads. At a
// small shape with a row of 7 it compiles on the host and matches the reference. Rows of 28 under a
// 1x1 window over 128 channels, and of 32 under a 3x3, keep the row-vector point.
TEST(ScheduleKnobs, ShortRowConvolutionStartsFromChannelVectors) {
    Target avx512 = load_target("x86-64-avx512");
    ComputeDef def = OpLibrary::standard().load("conv2d_nchw");
    for (const auto &[text, accumulators] : std::vector<std::pair<const char *, int64_t>>{
             {"N=1,C=256,H=14,W=14,F=256", 28},
             {"N=1,C=512,H=7,W=7,F=512", 14},
             {"N=1,C=64,H=56,W=56,F=64", 28},
             {"N=1,C=128,H=28,W=28,F=128", 28},
             {"N=1,C=128,H=56,W=56,F=128,stride=2", 28}}) {
        BoundShape shape = bind_shape(def, text);
        for (int threads : {1, 2}) {
            Target t = avx512;
            t.cores = threads;
            SchedulePoint p = starting_point(def, shape, t);
            EXPECT_EQ(p.vector_axis, 2) << text;
            EXPECT_TRUE(p.channels_innermost) << text;
            EXPECT_EQ(p.axes[0].reg * p.axes[1].reg * p.axes[2].reg / 16, accumulators) << p.summary();
            EXPECT_EQ(p.packed, (std::vector<std::string>{"X", "Wt"})) << p.summary();
            TilingRules rules = make_tiling_rules(def, shape, t, threads);
            // At stride 2 the register tile's input slice (15 x 5 pixels) overflows the space's REG
            // count beside 28 accumulators, as at a 1x1 below: not a point of the space.
            if (shape.values.at("stride") == 1) {
                EXPECT_TRUE(is_legal_point(rules, def, shape, t, p)) << p.summary();
            }
        }
    }
    Target host = host_target();
    const int lanes = host.vector_lanes(4);
    // A 1x1 convolution at stride 2 (ResNet-50's 28x28x512->1024) is a GEMM over whole output rows
    // whose input is gathered (core/Gather.h, strided_row_gemm_point; tests/core/GatherTest.cpp):
    // rows of 14 as one vector, two rows a register tile, 8 output channels, the channels whole,
    // only the (gathered) input packed. Not a point of the space, as the channel-vector point before
    // it was not: the space offers no register tile of a whole ragged row (14 on 16 lanes), and it
    // counts the input's bounding box at stride 2 and the 2 MiB of weights as L2-resident. The
    // tuner measures it first all the same (the reference every trial is paired with).
    {
        BoundShape one = bind_shape(def, "N=1,C=512,H=28,W=28,F=1024,KH=1,KW=1,pad=0,stride=2");
        for (int threads : {1, 2}) {
            Target t = avx512;
            t.cores = threads;
            SchedulePoint g = starting_point(def, one, t);
            EXPECT_EQ(g.vector_axis, 0);
            EXPECT_FALSE(g.channels_innermost);
            EXPECT_EQ(g.packed, (std::vector<std::string>{"X"})) << g.summary();
            ASSERT_EQ(g.reduce.back().var, "c");
            EXPECT_EQ(g.reduce.back().block, 512) << g.summary();
            EXPECT_EQ(g.axes[0].reg, 14) << g.summary();
            EXPECT_EQ(g.axes[1].reg, 2) << g.summary();
            TilingRules rules = make_tiling_rules(def, one, t, threads);
            EXPECT_FALSE(offered_tiling(rules, g)) << g.summary();
        }
    }
    // At stride 1 the op's view flattens the pixels into one row (ComputeDef::views), and the
    // starting point is the packed-panel GEMM over them (core/GemmPanel.h): 2 vectors of pixels x
    // 8 output channels, a cache tile one register tile of pixels by every output channel, the
    // channels whole, the input's pixels packed; a point of the space on one and two threads (its
    // panels stream: the 4 MiB of weights of F=2048 do not fit L2, nor 64 KiB of input L1).
    for (const char *text : {"N=1,C=256,H=14,W=14,F=1024,KH=1,KW=1,pad=0", "N=1,C=512,H=7,W=7,F=2048,KH=1,KW=1,pad=0",
                             "N=1,C=1024,H=14,W=14,F=256,KH=1,KW=1,pad=0", "N=1,C=512,H=28,W=28,F=128,KH=1,KW=1,pad=0",
                             "N=1,C=64,H=56,W=56,F=256,KH=1,KW=1,pad=0"}) {
        BoundShape one = bind_shape(def, text);
        ASSERT_EQ(one.values.at("H"), 1) << text;
        for (int threads : {1, 2}) {
            Target t = avx512;
            t.cores = threads;
            SchedulePoint g = starting_point(def, one, t);
            EXPECT_EQ(g.vector_axis, 0) << text;
            EXPECT_EQ(g.axes[0].reg, 32) << g.summary();
            EXPECT_EQ(g.axes[2].reg, 8) << g.summary();
            EXPECT_EQ(g.axes[0].tile, 32) << g.summary();
            EXPECT_EQ(g.axes[2].tile, one.values.at("F")) << g.summary();
            EXPECT_EQ(g.packed, (std::vector<std::string>{"X"})) << g.summary();
            ASSERT_EQ(g.reduce.back().var, "c");
            EXPECT_EQ(g.reduce.back().block, one.values.at("C")) << g.summary();
            EXPECT_TRUE(is_legal_point(make_tiling_rules(def, one, t, threads), def, one, t, g)) << g.summary();
        }
    }
    // Rows of 28 under a 1x1 window with padding (not flattened), and rows of 32 (two whole
    // vectors) under a 3x3, keep the row-vector point.
    for (const char *text : {"N=1,C=128,H=28,W=28,F=128,KH=1,KW=1,pad=1", "N=1,C=128,H=32,W=32,F=128"}) {
        SchedulePoint wide = heuristic_point(def, bind_shape(def, text), avx512);
        EXPECT_EQ(wide.vector_axis, 0) << text;
        EXPECT_FALSE(wide.channels_innermost) << text;
    }

    // Small shapes with a row of 7: a 3x3 window, a 1x1 at stride 2 (the input read in place,
    // every other pixel) and a 1x1 at stride 1 (flattened: the pixel GEMM) compile on the host and
    // match the reference.
    const std::string f = ",F=" + std::to_string(3 * lanes);
    for (const auto &[text, axis] : std::vector<std::pair<std::string, int>>{
             {"N=1,C=48,H=7,W=7" + f, 2},
             {"N=1,C=40,H=14,W=14,KH=1,KW=1,pad=0,stride=2" + f, 2},
             {"N=1,C=48,H=7,W=7,KH=1,KW=1,pad=0" + f, 0}}) {
        BoundShape small = bind_shape(def, text);
        SchedulePoint p = heuristic_point(def, small, host);
        ASSERT_EQ(p.vector_axis, axis) << text;
        TaskContext task(def, small, host, 17);
        MeasureResult r = measure(task, p, 0.5, 1);
        EXPECT_EQ(r.status, "ok") << text << ": " << p.summary() << ": " << r.error;
    }
}

// A 1x1 convolution's weights, gathered across their rows into a panel with the output channels
// contiguous (core/Schedule.cpp copy_rows_before_panel): rows 4 KiB apart or more (1024 channels
// and up) are copied a vector of channels at a time into a small buffer before the gather; nearer
// rows (512 channels, 2 KiB) and a 3x3's weights (runs of 3) are gathered in place. Blocked
// (the heuristic's channel blocks at 1024) and whole (1048: a partial vector of channels at the
// end of each row), on one and two threads; every one compiled and checked against the reference.
TEST(ScheduleKnobs, FarApartWeightRowsAreCopiedBeforeTheirPanel) {
    Target host = host_target();
    const int lanes = host.vector_lanes(4);
    // The 1x1s as written, rows of 7 (the op's view would flatten them into the pixel GEMM, whose
    // starting point packs nothing); the tuner's channel-vector points pack the weights the same way.
    ComputeDef def = OpLibrary::standard().load("conv2d_nchw");
    def.views.clear();
    const std::string f = ",F=" + std::to_string(2 * lanes);
    for (const auto &[text, copied] : std::vector<std::pair<std::string, bool>>{
             {"N=1,C=1024,H=7,W=7,KH=1,KW=1,pad=0" + f, true},
             {"N=1,C=1048,H=7,W=7,KH=1,KW=1,pad=0" + f, true},
             {"N=1,C=512,H=7,W=7,KH=1,KW=1,pad=0" + f, false},
             {"N=1,C=64,H=7,W=7" + f, false}}) {
        BoundShape shape = bind_shape(def, text);
        for (int threads : {1, 2}) {
            Target t = host;
            t.cores = threads;
            SchedulePoint p = heuristic_point(def, shape, t);
            ASSERT_EQ(p.vector_axis, 2) << text;
            ASSERT_NE(std::find(p.packed.begin(), p.packed.end(), "Wt"), p.packed.end()) << p.summary();
            LoweredOp lowered = lower_to_halide(def, shape);
            std::string src = apply_schedule(lowered, p, t).source();
            EXPECT_EQ(src.find("Wt_rows.compute_at(Wt_panel, Wt_run__o);") != std::string::npos, copied)
                << text << "\n" << src;
            EXPECT_EQ(src.find("Wt_panel.split(_2, Wt_run__o, Wt_run__i, " + std::to_string(lanes)) != std::string::npos,
                      copied)
                << text << "\n" << src;
            TaskContext task(def, shape, t, 29);
            MeasureResult r = measure(task, p, 0.5, 1);
            EXPECT_EQ(r.status, "ok") << text << " " << threads << " threads, " << p.summary() << ": " << r.error;
        }
    }
}

// The starting point of a channel-blocked convolution (core/ConvWindow.h blocked_conv_point): on
// the AVX-512 target (48 KiB L1) at ResNet-50's blocked shapes, 7 pixels of one row x 2 vectors of
// output channels (14 accumulators, each broadcast input value feeding 2 of them), whole rows per
// tile on one core and the row halved on two (a row of 7: one row per tile), input-channel blocks
// reduced 2 at a time (2 x 18 KiB of paired weights within 3/4 of the L1; 1 on a 32 KiB L1), only
// the input packed; each a point of the space. An odd count of output blocks keeps one vector x 7
// pixels x 2 rows, reduced 4 blocks at a time. (A flattened 1x1: 8 pixels of its one row x
// 2 vectors.) The depthwise twin (no channel loop) keeps the generic point. At small shapes with
// a row of 14 and one of 7 it compiles on the host, on one and two threads, and matches the
// reference.
TEST(ScheduleKnobs, BlockedConvolutionStartsFromRowPieces) {
    Target avx512 = load_target("x86-64-avx512");
    ComputeDef def = OpLibrary::standard().load("conv2d_nchwc");
    struct Case {
        const char *shape;
        int64_t row, rows_reg, blocks_reg, blocks;
    };
    for (const Case &c : std::vector<Case>{{"N=1,CB=16,H=14,W=14,FB=16", 14, 1, 2, 2},
                                           {"N=1,CB=8,H=28,W=28,FB=8", 28, 1, 2, 2},
                                           {"N=1,CB=4,H=56,W=56,FB=4", 56, 1, 2, 2},
                                           {"N=1,CB=2,H=7,W=7,FB=32", 7, 1, 2, 2},
                                           {"N=1,CB=8,H=28,W=28,FB=3", 28, 2, 1, 4}}) {
        BoundShape shape = bind_shape(def, c.shape);
        const char *text = c.shape;
        const int64_t row = c.row;
        for (int threads : {1, 2}) {
            Target t = avx512;
            t.cores = threads;
            SchedulePoint p = starting_point(def, shape, t);
            EXPECT_EQ(p.vector_axis, 0) << text;
            EXPECT_EQ(p.axes[0].reg, 16) << p.summary();
            EXPECT_EQ(p.axes[1].reg, 7) << p.summary();
            EXPECT_EQ(p.axes[2].reg, c.rows_reg) << p.summary();
            EXPECT_EQ(p.axes[3].reg, c.blocks_reg) << p.summary();
            EXPECT_EQ(p.axes[1].tile, threads == 1 || row == 7 ? row : row / 2) << p.summary();
            EXPECT_EQ(p.axes[2].tile, threads == 2 && row == 7 ? 1 : row) << p.summary();
            EXPECT_EQ(p.reduce.back().var, "co");
            EXPECT_EQ(p.reduce.back().block, c.blocks) << p.summary();
            EXPECT_EQ(p.packed, (std::vector<std::string>{"X"})) << p.summary();
            TilingRules rules = make_tiling_rules(def, shape, t, threads);
            EXPECT_TRUE(is_legal_point(rules, def, shape, t, p)) << text << " " << p.summary();
        }
    }
    // On a 32 KiB L1 the paired weights of 2 input blocks (36 KiB) would not stay: 1 at a time.
    Target small_l1 = avx512;
    for (BufferLevel &b : small_l1.buffers) {
        if (b.name == "L1") b.capacity = 32 * 1024;
    }
    EXPECT_EQ(starting_point(def, bind_shape(def, "N=1,CB=8,H=28,W=28,FB=8"), small_l1).reduce.back().block, 1);
    // A 1x1 at stride 1, flattened by the op's view into one row of 3136 pixels: 8 of them x two
    // vectors of output channels, the whole row per tile on one core and on two 128 register tiles
    // (a power of two, the space's cache tiles) per tile, four tiles.
    BoundShape flat = bind_shape(def, "N=1,CB=4,H=56,W=56,FB=16,KH=1,KW=1,pad=0");
    for (int threads : {1, 2}) {
        Target t = avx512;
        t.cores = threads;
        SchedulePoint p = starting_point(def, flat, t);
        EXPECT_EQ(p.axes[1].reg, 8) << p.summary();
        EXPECT_EQ(p.axes[2].reg, 1) << p.summary();
        EXPECT_EQ(p.axes[3].reg, 2) << p.summary();
        EXPECT_EQ(p.axes[1].tile, threads == 1 ? 3136 : 128 * 8) << p.summary();
        EXPECT_EQ(p.reduce.back().block, 4) << p.summary();
        EXPECT_TRUE(is_legal_point(make_tiling_rules(def, flat, t, threads), def, flat, t, p)) << p.summary();
    }
    ComputeDef dw = OpLibrary::standard().load("depthwise_conv2d_nchwc");
    SchedulePoint d = heuristic_point(dw, bind_shape(dw, "N=1,CB=2,H=112,W=112"), avx512);
    EXPECT_NE(d.axes[1].reg, 7) << d.summary();

    Target host = host_target();
    const int lanes = host.vector_lanes(4);
    for (const char *extents : {"H=5,W=14", "H=4,W=7"}) {
        BoundShape small = bind_shape(def, std::string("N=1,CB=3,FB=2,") + extents + ",cb=" + std::to_string(lanes) +
                                               ",fb=" + std::to_string(lanes));
        for (int threads : {1, 2}) {
            Target t = host;
            t.cores = threads;
            SchedulePoint p = heuristic_point(def, small, t);
            ASSERT_EQ(p.axes[1].reg, 7) << p.summary();
            TaskContext task(def, small, t, 23);
            MeasureResult r = measure(task, p, 0.5, 1);
            EXPECT_EQ(r.status, "ok") << extents << " " << threads << " threads, " << p.summary() << ": " << r.error;
        }
    }
}

// A GEMV streams its operand (core/Streaming.h): the space offers reduction blocks of 4 and 8
// rows besides the cache blocks, and the heuristic point streams (blocked by 8, the vectorized
// axis outermost). Sampled points with each streaming block and the heuristic point, one and two
// threads, compiled and checked against the reference; odd N leaves a partial register tile, and
// M = 5 a cache tile that the heuristic cuts to whole register tiles (4).
TEST(ScheduleKnobs, StreamingBlocksMatchTheReference) {
    ComputeDef def = OpLibrary::standard().load("matmul");
    BoundShape shape = bind_shape(def, "M=5,N=45,K=40");
    Target host = host_target();
    for (int threads : {1, 2}) {
        TilingSpace s = make_tiling_space(def, shape, host, threads);
        EXPECT_EQ(s.reduce[0].blocks, (std::vector<int64_t>{4, 8, 40}));
        Target t = host;
        t.cores = threads;
        TaskContext task(def, shape, t, 13);
        SchedulePoint h = heuristic_point(def, shape, t);
        EXPECT_EQ(h.reduce[0].block, 8);
        EXPECT_EQ(h.outer_order.back(), "n");
        EXPECT_EQ(h.axes[1].tile % h.axes[1].reg, 0);
        std::vector<SchedulePoint> points{h};
        std::set<int64_t> blocks;
        for (const auto &p : s.sample(400, 3)) {
            if (p.reduce[0].block < 16 && blocks.insert(p.reduce[0].block).second) points.push_back(p);
        }
        EXPECT_EQ(blocks, (std::set<int64_t>{4, 8}));
        for (const auto &p : points) {
            MeasureResult r = measure(task, p, 0.5, 1);
            EXPECT_EQ(r.status, "ok") << threads << " threads, " << p.summary() << ": " << r.error;
        }
    }
}

// Q K^T (batch_matmul_nt): B is read across its rows, so a packed B panel is re-laid out with n,
// the vectorized axis, contiguous (filled a vector of rows at a time); the update then loads whole
// vectors of it. Unblocked and blocked, compiled and checked against the reference.
TEST(ScheduleKnobs, TransposedOperandPanelsMatchTheReference) {
    ComputeDef def = OpLibrary::standard().load("batch_matmul_nt");
    BoundShape shape = bind_shape(def, "BATCH=2,M=9,N=40,K=32");
    Target host = host_target();
    TilingSpace s = make_tiling_space(def, shape, host, 2);
    TaskContext task(def, shape, host, 19);
    std::set<bool> blocked_seen;
    for (const auto &p : s.sample(2000, 8)) {
        if (p.vector_width <= 1 || p.packed != std::vector<std::string>{"B"}) continue;
        bool blocked = p.reduce[0].block < 32;
        if (!blocked_seen.insert(blocked).second) continue;
        LoweredOp lowered = lower_to_halide(def, shape);
        std::string src = apply_schedule(lowered, p, host).source();
        EXPECT_NE(src.find("B_panel.reorder_storage(_1, _0, _2)"), std::string::npos) << src;  // n (dimension 1) first
        // The copy fills one vector of n (16 rows of B) across the panel before the next.
        EXPECT_NE(src.find("B_panel.reorder(B_panel_lanes__i, _0, _2, B_panel_lanes__o)"), std::string::npos) << src;
        MeasureResult r = measure(task, p, 0.5, 1);
        EXPECT_EQ(r.status, "ok") << p.summary() << ": " << r.error << "\n" << src;
    }
    EXPECT_EQ(blocked_seen.size(), 2u);
}

// The heuristic point of Q K^T packs B, keeps the rows of a batch in one cache tile (B packed once
// per batch) and, where half the vector registers hold it, widens the register tile to 4 vectors;
// it lies in the legal space and matches the reference.
TEST(ScheduleKnobs, TransposedOperandHeuristicPointMatchesTheReference) {
    ComputeDef def = OpLibrary::standard().load("batch_matmul_nt");
    Target host = host_target();
    const int v = host.vector_lanes(4);
    BoundShape shape = bind_shape(def, "BATCH=2,M=96,N=" + std::to_string(8 * v) + ",K=32");
    SchedulePoint p = heuristic_point(def, shape, host);
    EXPECT_EQ(p.packed, std::vector<std::string>{"B"});
    ASSERT_GE(p.axes.size(), 2u);
    EXPECT_EQ(p.axes[1].tile, 96);  // above the default 64-row tile
    int64_t want_reg = 4 * p.axes[1].reg <= host.vector_registers / 2 ? 4 * v : 2 * v;
    EXPECT_EQ(p.axes[0].reg, want_reg) << p.summary();
    TilingSpace s = make_tiling_space(def, shape, host, 2);
    EXPECT_TRUE(s.contains(p)) << p.summary();
    TaskContext task(def, shape, host, 31);
    MeasureResult r = measure(task, p, 0.5, 1);
    EXPECT_EQ(r.status, "ok") << p.summary() << ": " << r.error;
}

// The packed-panel GEMM (core/GemmPanel.h) as a matmul's starting point: one register tile of
// two vectors per panel, every row in one cache tile, B packed. Where the panel over the whole K
// would take more than a quarter of L2 the reduction is blocked (to the space's longest block,
// 1024), but only when every cache tile
// holds whole register tiles (a blocked reduction accumulates per cache tile): at M=100 the rows
// do not divide by 8, so K stays whole. Each point applies and is a point of the space.
TEST(ScheduleKnobs, MatmulStartsFromThePackedPanelGemm) {
    ComputeDef def = OpLibrary::standard().load("matmul");
    Target t = load_target("x86-64-avx512");
    t.cores = 1;
    for (const auto &[text, block] : std::vector<std::pair<const char *, int64_t>>{
             {"M=128,N=784,K=512", 512}, {"M=128,N=64,K=8192", 1024}, {"M=100,N=64,K=8192", 8192}}) {
        BoundShape shape = bind_shape(def, text);
        SchedulePoint p = starting_point(def, shape, t);
        EXPECT_EQ(p.axes[0].reg, 32) << p.summary();
        EXPECT_EQ(p.axes[0].tile, 32) << p.summary();
        EXPECT_EQ(p.axes[1].tile, shape.values.at("M")) << p.summary();
        EXPECT_EQ(p.packed, (std::vector<std::string>{"B"})) << p.summary();
        EXPECT_EQ(p.reduce[0].block, block) << p.summary();
        LoweredOp op = lower_for_point(def, shape, &p);
        EXPECT_NO_THROW(apply_schedule(op, p, t)) << p.summary();
        EXPECT_TRUE(is_legal_point(make_tiling_rules(def, shape, t, 1), def, shape, t, p)) << p.summary();
    }
}
