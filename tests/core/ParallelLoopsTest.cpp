// Which cache-tile loops run in parallel (core/ParallelLoops.h, docs/design.md §2.4): trip counts, the
// fusions offered, and the hand-written starting point's choice on shapes whose outermost loop has
// one tile (a batch-1 convolution's image loop, matmul 64x1024x4096's m).
#include "core/OpLibrary.h"
#include "core/ParallelLoops.h"

#include <gtest/gtest.h>

using namespace opgen;

TEST(ParallelLoops, CountsTripsOutermostFirst) {
    SchedulePoint p;
    p.axes = {{"n", 64, 16}, {"m", 48, 4}};
    p.outer_order = {"n", "m"};  // innermost first: m outermost
    EXPECT_EQ(cache_loop_trips(p, {1024, 100}), (std::vector<int64_t>{3, 16}));  // 100 / 48 rounds up
    EXPECT_EQ(fused_trips({3, 16}, 0), 1);
    EXPECT_EQ(fused_trips({3, 16}, 2), 48);
}

TEST(ParallelLoops, OffersTheFewestLoopsReachingTheCores) {
    EXPECT_EQ(parallel_loop_choices({1, 1, 7, 4}, 2), (std::vector<int>{3, 4}));  // skips the one-tile loops
    EXPECT_EQ(parallel_loop_choices({8, 1}, 2), (std::vector<int>{1}));           // one more adds nothing
    EXPECT_EQ(parallel_loop_choices({2, 3}, 4), (std::vector<int>{2}));
    EXPECT_EQ(parallel_loop_choices({1, 3, 1}, 4), (std::vector<int>{2}));        // none reaches 4: the most
    EXPECT_EQ(parallel_loop_choices({1, 1}, 2), (std::vector<int>{1}));           // one tile in all
    EXPECT_EQ(parallel_loop_choices({5, 5}, 1), (std::vector<int>{0}));           // one core: serial
}

// The starting point parallelizes loops with a tile per core on shapes where "the outermost loop"
// has one (before the parallel-loop knob both ran serially on two cores).
TEST(ParallelLoops, HeuristicPointGivesEveryCoreATile) {
    Target two = host_target();
    two.cores = 2;
    for (const auto &[name, dims] : std::vector<std::pair<std::string, std::string>>{
             {"matmul", "M=64,N=1024,K=4096"},
             {"conv2d_nchw", "N=1,C=256,H=14,W=14,F=256"},
             {"conv2d_nchwc", "N=1,CB=8,H=28,W=28,FB=8"}}) {
        ComputeDef def = OpLibrary::standard().load(name);
        BoundShape shape = bind_shape(def, dims);
        SchedulePoint p = heuristic_point(def, shape, two);
        std::vector<int64_t> extents;
        for (const auto &a : p.axes) extents.push_back(shape.var_extent(*def.statement_for(def.output().name), a.var));
        std::vector<int64_t> trips = cache_loop_trips(p, extents);
        EXPECT_GE(fused_trips(trips, p.parallel_loops), 2) << name << " " << p.summary();
    }
}

// Row operations hand each core one tile of whole rows (Halide's pool pays per task: 32-128 small
// row tiles on 2 threads ran no faster than one thread), their other statements computed per row
// ("row": a 64-row tile's intermediates would not stay in cache); on one core the row tile is as
// many rows as fit 16 KiB of L1, its statements at tile.
TEST(ParallelLoops, RowOpsHandEachCoreOneRowTile) {
    Target two = host_target();
    two.cores = 2;
    Target one = two;
    one.cores = 1;
    for (const std::string name : {"softmax", "layernorm"}) {
        ComputeDef def = OpLibrary::standard().load(name);
        BoundShape shape = bind_shape(def, "M=128,N=768");
        SchedulePoint p2 = heuristic_point(def, shape, two);
        ASSERT_EQ(p2.axes.size(), 2u);
        EXPECT_EQ(p2.axes[1].tile, 64) << name << " " << p2.summary();
        EXPECT_EQ(p2.axes[1].reg, 1) << name << " " << p2.summary();
        EXPECT_EQ(p2.axes[0].tile, 768) << name << " " << p2.summary();
        EXPECT_EQ(p2.parallel_loops, 1) << name << " " << p2.summary();
        ASSERT_FALSE(p2.stages.empty()) << name;
        for (const StageChoice &c : p2.stages) {
            if (c.at != "inline") {
                EXPECT_EQ(c.at, "row") << name << " " << p2.summary();
            }
        }
        SchedulePoint p1 = heuristic_point(def, shape, one);
        EXPECT_EQ(p1.axes[1].reg, 1) << name << " " << p1.summary();
        for (const StageChoice &c : p1.stages) {
            if (c.at != "inline") {
                EXPECT_EQ(c.at, "tile") << name << " " << p1.summary();
            }
        }
        EXPECT_EQ(p1.axes[1].tile, 4) << name << " " << p1.summary();  // 4 rows of 3 KiB
    }
}
