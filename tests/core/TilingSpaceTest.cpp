// The legal space: hand-counted sizes on the toy target, capacity respected by every sampled
// point, membership and seeded sampling.
#include "core/OpLibrary.h"
#include "core/ParallelLoops.h"
#include "core/Parser.h"
#include "core/TilingSpace.h"

#include <gtest/gtest.h>

#include <set>

using namespace opgen;

namespace {
ComputeDef matmul() { return OpLibrary::standard().load("matmul"); }

// The bytes `tensor` holds in `buffer` under `p`; -1 when it has no group there.
int64_t bytes_in(const ComputeDef &def, const BoundShape &shape, const Target &target, const TilingSpace &s,
                 const SchedulePoint &p, const std::string &tensor, const std::string &buffer) {
    for (const auto &f : footprints(def, shape, target, s.groups, p)) {
        if (f.tensor == tensor && f.buffer == buffer) return f.bytes;
    }
    return -1;
}
}  // namespace

// Toy target: 4 lanes of f32, REG = 64 B (four 16-byte registers), L1 = 256 B, L2 = 1 KiB.
// matmul M=4 N=8 K=8, one thread:
//   n: regs {4, 8}, (reg, tile) pairs (4,4) (4,8) (8,8)                          -> 3
//   m: regs {1,2,3,4}, pairs (1,1) (1,2) (1,4) (2,2) (2,4) (3,3) (3,4) (4,4)      -> 8
//   k: blocks {4, 8}: at 1 FLOP per compulsory byte the op streams its operands
//      (core/Streaming.h), so blocks of 4 rows are offered besides the whole loop.
// Knobs per tiling: 2 cache-tile orders x 1 parallel choice x 7 (packing, prefetch) pairs
//   ({} {A} {B} each with prefetch off/on, {A,B} without) x 2 unroll = 28, doubled by the
//   register-tile order where both axes hold several register tiles per cache tile (n (4,8) with
//   m (1,2) (1,4) (2,4) (3,4): 4 tilings, per block).
//   total 28 * 2 * (24 + 4) = 1568.
// REG holds A (one broadcast register, 16 B), B (4*rn bytes) and the accumulator (4*rm*rn):
//   16 + 4 rn (1 + rm) <= 64  =>  rn = 4 and rm <= 2.
// L1 holds A rm x k and B k x rn floats: 32 (rm + rn) <= 256, true for those. L2 always fits,
// and the blocked tilings' cache tiles hold whole register tiles.
// Legal tilings per block: n in {(4,4), (4,8)} x m in {(1,1),(1,2),(1,4),(2,2),(2,4)} = 10, of
// which 3 (n (4,8) with m (1,2) (1,4) (2,4)) have both tile orders: 2 * 28 * (10 + 3) = 728.
TEST(TilingSpace, CountsMatmulSpaceOnToyTarget) {
    ComputeDef def = matmul();
    BoundShape shape = bind_shape(def, "M=4,N=8,K=8");
    Target toy = load_target("toy");
    TilingSpace s = make_tiling_space(def, shape, toy, 1);
    EXPECT_EQ(s.reduce[0].blocks, (std::vector<int64_t>{4, 8}));
    EXPECT_EQ(s.total_tilings, 48);
    EXPECT_EQ(s.total_points, 1568);
    EXPECT_EQ(s.legal.tilings().size(), 20u);
    EXPECT_EQ(s.legal.size(), 728u);
    std::set<std::string> distinct;
    for (const auto &p : s.legal) {
        distinct.insert(p.to_json().dump());
        EXPECT_TRUE(s.contains(p)) << p.summary();
        EXPECT_EQ(p.axes[0].reg, 4);
        EXPECT_LE(p.axes[1].reg, 2);
    }
    EXPECT_EQ(distinct.size(), 728u);
}

// The same space on two cores. A tiling needs a cache tile per core (the shape has
// them), and a point fuses the outermost cache-tile loops of its order into its parallel loop: the
// space offers, per tiling and order, the fewest loops whose iterations reach 2 and one loop more
// where that loop has several; never a fusion of fewer than 2 iterations where one reaches 2.
// Trips: n (4,4) 2, n (4,8) 1; m (1,1) 4, (1,2) (2,2) 2, (1,4) (2,4) 1. So n (4,8) with m (1,4)
// or (2,4), one tile in all, is out: 8 legal (n, m) tilings, each with k unblocked or in blocks of
// 4 (M=4 streams, as above): 16 tilings. Pairs (order, parallel loops) per tiling,
// m outermost then n outermost:
//   n (4,4), m 4 or 2 trips: {1,2} + {1,2} = 4 (three tilings);  m 1 trip: {2} + {1} = 2 (two)
//   n (4,8), m 4 or 2 trips: {1} + {2} = 2 (three)
// n (4,4): 4 * 3 + 2 * 2 = 16 pairs; n (4,8): 2 * 3 = 6 pairs, of which m (1,2)'s count twice (both
// tile orders): 8. Each pair times 7 (packing, prefetch) x 2 unroll = 14:
//   14 * (16 + 8) = 336 per k choice, 672 in all (one thread: 728; "fuse 1 or 2 loops" on every
//   tiling: 1456).
TEST(TilingSpace, CountsParallelLoopChoicesOnToyTarget) {
    ComputeDef def = matmul();
    BoundShape shape = bind_shape(def, "M=4,N=8,K=8");
    Target toy = load_target("toy");
    TilingSpace s = make_tiling_space(def, shape, toy, 2);
    EXPECT_EQ(s.legal.tilings().size(), 16u);
    EXPECT_EQ(s.legal.size(), 672u);
    std::set<std::string> distinct;
    std::set<std::pair<std::string, int>> plans;  // (outermost loop, parallel loops)
    for (const auto &p : s.legal) {
        distinct.insert(p.to_json().dump());
        EXPECT_TRUE(s.contains(p)) << p.summary();
        EXPECT_GE(fused_trips(cache_loop_trips(p, {8, 4}), p.parallel_loops), 2) << p.summary();
        plans.insert({p.outer_order.back(), p.parallel_loops});
    }
    EXPECT_EQ(distinct.size(), 672u);
    // Both loops carry the threads somewhere: alone (1) and fused with the other (2).
    EXPECT_EQ(plans, (std::set<std::pair<std::string, int>>{{"m", 1}, {"m", 2}, {"n", 1}, {"n", 2}}));
    // A fusion of one iteration where one of two exists is not a point of the space.
    SchedulePoint one_trip = s.legal.front();
    one_trip.axes[1] = {"m", 4, 1};  // m in one tile, n in two
    one_trip.outer_order = {"n", "m"};
    one_trip.parallel_loops = 1;
    EXPECT_FALSE(s.contains(one_trip)) << one_trip.summary();
    one_trip.parallel_loops = 2;
    EXPECT_TRUE(s.contains(one_trip)) << one_trip.summary();
    // Nor is a tiling of one tile, whatever its parallel loop.
    SchedulePoint one_tile = one_trip;
    one_tile.axes[0] = {"n", 8, 4};
    one_tile.parallel_loops = 1;
    EXPECT_FALSE(s.contains(one_tile)) << one_tile.summary();
    EXPECT_FALSE(is_legal_point(s, def, shape, toy, one_tile));
}

// The stage knob on the toy target (4 lanes), softmax M=2 N=8: rmax and rsum each at
// root, tile or row with 1 or 4 partial-result lanes (8 lanes would not leave a loop), ex inlined,
// at tile, at root or at row: 6 x 4 x 6 = 144 placements. Root, tile and row are ever deeper in the
// output's loops (0, 1, 2), and a statement may not read, directly or through the inlined ex, one
// placed deeper than itself:
//   ex inlined: rsum reads rmax, depth(rmax) <= depth(rsum): 6 of the 9 depth pairs, x 4 lanes -> 24
//   ex at depth e: depth(rmax) <= e <= depth(rsum): 10 of the 27 depth triples, x 4 lanes       -> 40
// 64 placements plus today's (none placed), each with exact and fast exp: 130 plans, each on every
// tiling and knob choice. Matmul's space above is unchanged (one plan).
TEST(TilingSpace, CountsSoftmaxStagePlansOnToyTarget) {
    ComputeDef def = OpLibrary::standard().load("softmax");
    BoundShape shape = bind_shape(def, "M=2,N=8");
    Target toy = load_target("toy");
    TilingSpace s = make_tiling_space(def, shape, toy, 1);
    EXPECT_EQ(s.knobs.stage_plans.size(), 130u);
    ASSERT_FALSE(s.legal.empty());
    EXPECT_EQ(s.legal.size() % 130, 0u);
    std::set<std::string> plans;
    for (const auto &p : s.legal) {
        SchedulePoint only;
        only.stages = p.stages;
        only.fast_math = p.fast_math;
        plans.insert(only.to_json().dump());
    }
    EXPECT_EQ(plans.size(), 130u);
    EXPECT_EQ(make_tiling_space(matmul(), bind_shape(matmul(), "M=4,N=8,K=8"), toy, 1).knobs.stage_plans.size(), 1u);
}

TEST(TilingSpace, GroupsOneTensorPerBuffer) {
    ComputeDef def = matmul();
    Target toy = load_target("toy");
    StageGraph g = build_stages(def, toy);
    auto groups = group_stages(g);
    // A and B each through DRAM, L2, L1, REG; C's accumulator in REG and its copy to DRAM.
    ASSERT_EQ(groups.size(), 10u);
    std::set<std::string> names;
    for (const auto &gr : groups) names.insert(gr.tensor + "@" + gr.buffer);
    EXPECT_TRUE(names.count("A@L1"));
    EXPECT_TRUE(names.count("B@REG"));
    EXPECT_TRUE(names.count("C@REG"));
    EXPECT_TRUE(names.count("C@DRAM"));
    for (const auto &gr : groups) {
        if (gr.tensor == "C" && gr.buffer == "REG") {
            EXPECT_EQ(gr.axes, (std::vector<std::string>{"m", "n", "k"}));
        }
    }
}

TEST(TilingSpace, NoSampledPointExceedsABuffer) {
    ComputeDef def = matmul();
    BoundShape shape = bind_shape(def, "M=512,N=512,K=512");
    Target host = load_target("x86-64-avx512");
    TilingSpace s = make_tiling_space(def, shape, host, 2);
    ASSERT_GT(s.legal.size(), 1000u);
    for (const auto &p : s.sample(500, 11)) {
        auto fp = footprints(def, shape, host, s.groups, p);
        for (const auto &b : host.buffers) {
            if (b.capacity == 0) continue;
            int64_t sum = 0;
            for (const auto &f : fp) sum += f.buffer == b.name ? f.bytes : 0;
            EXPECT_LE(sum, b.capacity) << p.summary() << " in " << b.name;
        }
    }
}

TEST(TilingSpace, SamplingIsSeededAndDistinct) {
    ComputeDef def = matmul();
    BoundShape shape = bind_shape(def, "M=256,N=256,K=256");
    Target host = load_target("x86-64-avx512");
    TilingSpace s = make_tiling_space(def, shape, host, 2);
    auto a = s.sample(50, 3), b = s.sample(50, 3), c = s.sample(50, 4);
    ASSERT_EQ(a.size(), 50u);
    EXPECT_TRUE(a == b);
    EXPECT_FALSE(a == c);
    std::set<std::string> distinct;
    for (const auto &p : a) distinct.insert(p.to_json().dump());
    EXPECT_EQ(distinct.size(), 50u);
    for (const auto &p : a) EXPECT_TRUE(s.contains(p));
}

TEST(TilingSpace, RejectsPointsOutsideTheSpace) {
    ComputeDef def = matmul();
    BoundShape shape = bind_shape(def, "M=4,N=8,K=8");
    Target toy = load_target("toy");
    TilingSpace s = make_tiling_space(def, shape, toy, 1);
    SchedulePoint p = s.legal.front();
    p.axes[1].reg = 4;  // 16 + 4*4*(1+4) = 96 bytes of registers: over the toy's 64
    p.axes[1].tile = 4;
    EXPECT_FALSE(s.contains(p));
    EXPECT_FALSE(fits_buffers(toy, footprints(def, shape, toy, s.groups, p)));
}

// The well-known fast shape of a CPU matmul is in the space: a register tile of 16 accumulators
// (2 zmm wide x 8 rows), packed panels, a parallel outer loop.
TEST(TilingSpace, ContainsRegisterBlockedPackedParallelSchedule) {
    ComputeDef def = matmul();
    BoundShape shape = bind_shape(def, "M=1024,N=1024,K=1024");
    Target host = load_target("x86-64-avx512");
    TilingSpace s = make_tiling_space(def, shape, host, 2);
    bool found = false;
    for (const auto &t : s.legal.tilings()) {
        if (t.axes[0].reg == 32 && t.axes[1].reg == 8 && t.reduce[0].block < 1024) {
            SchedulePoint p = t;
            p.packed = {"A", "B"};
            p.parallel_loops = 1;
            found = s.contains(p);
            if (found) break;
        }
    }
    EXPECT_TRUE(found);
}

// Toy target, conv2d_nchw 1x1: N=1 C=2 H=4 W=4 F=2, one thread. Output axes (innermost first):
//   x extent 4: reg {4}, pairs (4,4)                                              -> 1
//   y extent 4: pairs (1,1) (1,2) (1,4) (2,2) (2,4) (3,3) (3,4) (4,4)             -> 8
//   f extent 2: pairs (1,1) (1,2) (2,2)                                           -> 3
//   n: 1; reductions rx, ry, c whole                                            -> 24 tilings
// Knobs: 6 cache-tile orders (every order of x, y, f; n outermost) x 7 (packing, prefetch) pairs x
//   2 unroll = 84 (x is a single register tile, so the register-tile order never matters).
//   total 24 * 84 = 2016.
// REG (64 B): X row slice 4*ry floats (16*ry B), one Wt register (16 B), accumulator 16*ry*rf B:
//   16 ry + 16 + 16 ry rf <= 64  =>  ry (1 + rf) <= 3  =>  ry = 1.
// L1 (32 ry + 8 rf B) and L2 (32 ty + 8 tf B) always fit.
// Legal: y in {(1,1), (1,2), (1,4)} x 3 f pairs = 9 tilings x 84 knobs = 756.
TEST(TilingSpace, CountsConvSpaceOnToyTarget) {
    ComputeDef def = OpLibrary::standard().load("conv2d_nchw");
    BoundShape shape = bind_shape(def, "N=1,C=2,H=4,W=4,F=2,KH=1,KW=1,pad=0");
    Target toy = load_target("toy");
    TilingSpace s = make_tiling_space(def, shape, toy, 1);
    EXPECT_EQ(s.total_points, 2016);
    EXPECT_EQ(s.legal.size(), 756u);
    for (const auto &p : s.legal) EXPECT_EQ(p.axes[1].reg, 1) << p.summary();
}

// The same toy convolution with a 3x3 window (pad 1 keeps the 4x4 output) and C = 8: the channel
// loop (8 steps, more than a window's 4) holds the window loops (3 x 3), so the space offers the
// channel loop innermost (SchedulePoint::channels_innermost) as one more knob of two choices.
// Tilings: the 1x1 space's 24, times c whole or in blocks of 4 (at F = 2 the reduction streams,
// core/Streaming.h) = 48; knobs 6 orders x 7 (packing, prefetch) x 2 unroll x 2 channel orders =
// 168 per tiling: 8064 points (none fits the toy's 64-byte REG with a 3-wide window). On the host at
// 14x14x256->256, every legal tiling has 6 orders x (2 tile orders where they matter, else 1) x 7 x
// 2 x 2 knobs, and half of its points run the channels innermost. The 1x1 space above (a window
// of one step) has no such knob, nor a channel loop no longer than a window, nor conv2d_nchwc (its
// channel loop ci is innermost already).
TEST(TilingSpace, OffersChannelsInnermostForAWindowInsideChannels) {
    ComputeDef def = OpLibrary::standard().load("conv2d_nchw");
    Target toy = load_target("toy");
    TilingSpace s = make_tiling_space(def, bind_shape(def, "N=1,C=8,H=4,W=4,F=2,KH=3,KW=3,pad=1"), toy, 1);
    EXPECT_EQ(s.knobs.channel_orders, (std::vector<bool>{false, true}));
    EXPECT_EQ(s.total_tilings, 48);
    EXPECT_EQ(s.total_points, 8064);

    BoundShape shape = bind_shape(def, "N=1,C=256,H=14,W=14,F=256");
    Target host = load_target("x86-64-avx512");
    TilingSpace h = make_tiling_space(def, shape, host, 1);
    ASSERT_FALSE(h.legal.empty());
    for (size_t t = 0; t < h.legal.tilings().size(); t++) {
        EXPECT_EQ(h.legal.knob_count(t), 6 * (tile_order_matters(h.legal.tilings()[t]) ? 2 : 1) * 7 * 2 * 2);
    }
    size_t inner = 0;
    for (size_t i = 0; i < size_t(h.legal.knob_count(0)); i++) inner += h.legal[i].channels_innermost;
    EXPECT_EQ(2 * inner, size_t(h.legal.knob_count(0)));
    // Members either way; read back from JSON, where the field is written only when set.
    SchedulePoint p = h.legal.front();
    p.channels_innermost = true;
    EXPECT_TRUE(h.contains(p));
    EXPECT_TRUE(is_legal_point(h, def, shape, host, p));
    EXPECT_EQ(SchedulePoint::from_json(p.to_json()), p);
    EXPECT_FALSE(h.legal.front().to_json().contains("channels_innermost"));

    TilingSpace one = make_tiling_space(def, bind_shape(def, "N=1,C=8,H=4,W=4,F=2,KH=1,KW=1,pad=0"), toy, 1);
    EXPECT_EQ(one.knobs.channel_orders, (std::vector<bool>{false}));
    SchedulePoint q = one.legal.front();
    q.channels_innermost = true;
    EXPECT_FALSE(one.contains(q));
    TilingSpace few = make_tiling_space(def, bind_shape(def, "N=1,C=4,H=4,W=4,F=2,KH=3,KW=3,pad=1"), toy, 1);
    EXPECT_EQ(few.knobs.channel_orders, (std::vector<bool>{false}));
    ComputeDef blocked = OpLibrary::standard().load("conv2d_nchwc");
    TilingSpace b = make_tiling_space(blocked, bind_shape(blocked, "N=1,CB=8,H=4,W=4,FB=1,cb=4,fb=4"), toy, 1);
    EXPECT_EQ(b.knobs.channel_orders, (std::vector<bool>{false}));
}

// Point i of the space is computed, not stored: the same index gives the same point, every point
// is a member, and a knob outside the choices (or a tile order where it changes nothing) is not.
TEST(TilingSpace, IndexedPointsAreStableMembers) {
    ComputeDef def = matmul();
    BoundShape shape = bind_shape(def, "M=1024,N=1024,K=1024");
    Target host = load_target("x86-64-avx512");
    TilingSpace s = make_tiling_space(def, shape, host, 2);
    ASSERT_GT(s.legal.size(), 100000u);
    for (size_t i : {size_t(0), s.legal.size() / 3, s.legal.size() - 1}) {
        SchedulePoint p = s.legal[i];
        EXPECT_EQ(p, s.legal[i]);
        EXPECT_TRUE(s.contains(p)) << p.summary();
        SchedulePoint q = p;
        q.prefetch = 3;
        EXPECT_FALSE(s.contains(q));
        q = p;
        q.parallel_loops = 5;
        EXPECT_FALSE(s.contains(q));
    }
    SchedulePoint t = s.legal.tilings().front();
    t.tile_order = {"m", "n"};
    EXPECT_EQ(s.contains(t), t.axes[0].tile > t.axes[0].reg && t.axes[1].tile > t.axes[1].reg);
}

// The accelerator target (docs/design.md §7.1): A through UB, L1 and L0A, B through UB, L1 and L0B, the result from
// L0C through UB to DDR; one group per tensor and buffer, double buffers counted twice.
TEST(TilingSpace, AcceleratorGroupsFollowEachInputsPath) {
    ComputeDef def = matmul();
    Target acc = load_target("accelerator");
    StageGraph g = build_stages(def, acc);
    std::set<std::string> names;
    for (const auto &gr : group_stages(g)) names.insert(gr.tensor + "@" + gr.buffer);
    EXPECT_EQ(names, (std::set<std::string>{"A@DDR", "A@UB", "A@L1", "A@L0A", "B@DDR", "B@UB", "B@L1", "B@L0B",
                                            "C@L0C", "C@UB", "C@DDR"}));
    BoundShape shape = bind_shape(def, "M=1024,N=1024,K=1024");
    TilingSpace s = make_tiling_space(def, shape, acc, 1);
    ASSERT_FALSE(s.legal.empty());
    for (const auto &p : s.sample(200, 5)) {
        for (const auto &f : footprints(def, shape, acc, s.groups, p)) {
            EXPECT_EQ(f.bytes % 2, 0) << f.tensor << "@" << f.buffer;
            EXPECT_LE(f.bytes, acc.find_buffer(f.buffer)->capacity) << f.tensor << "@" << f.buffer;
        }
    }
}

// Where the full vector width leaves a remainder (56 = 3 x 16 + 8), half-width vectors are offered
// and a whole row fits in registers: the register tile 56 x 2 of a 56x56 convolution. Under a 3x3
// window the output channels (64 = 4 x 16) are offered as the vector axis too (rows leaving a
// tail, core/TilingRules.cpp add_outer_vector_axes), and the space holds the starting point's
// register tile of 7 pixels x 2 rows x 2 channel vectors; a 1x1 window with the same rows keeps
// the row vectors only.
TEST(TilingSpace, OffersHalfWidthVectorsWhereTheyAvoidATail) {
    ComputeDef def = OpLibrary::standard().load("conv2d_nchw");
    BoundShape shape = bind_shape(def, "N=1,C=64,H=56,W=56,F=64,KH=3,KW=3,pad=1");
    Target host = load_target("x86-64-avx512");
    TilingSpace s = make_tiling_space(def, shape, host, 1);
    EXPECT_EQ(s.vector_widths, (std::vector<int>{16, 8, 16}));
    EXPECT_EQ(s.vector_axes, (std::vector<int>{0, 0, 2}));
    bool found = false, channels = false;
    for (const auto &t : s.legal.tilings()) {
        found |= t.vector_width == 8 && t.axes[0].reg == 56 && t.axes[1].reg == 2;
        channels |= t.vector_axis == 2 && t.axes[0].reg == 7 && t.axes[1].reg == 2 && t.axes[2].reg == 32;
    }
    EXPECT_TRUE(found);
    EXPECT_TRUE(channels);
    // The 1x1 is flattened by the op's view into one row of 3136 pixels: whole vectors only.
    TilingSpace one = make_tiling_space(def, bind_shape(def, "N=1,C=64,H=56,W=56,F=64,KH=1,KW=1,pad=0"), host, 1);
    EXPECT_EQ(one.vector_widths, (std::vector<int>{16}));
    EXPECT_EQ(one.vector_axes, (std::vector<int>{0}));
}

// Seed 004, paragraph 73: on a scratchpad target a broadcast expands its data. matmul_bias_relu
// M=4 N=8 K=8 on a 64-byte REG scratchpad: under the smallest tiling (4 x 1) A takes 16 B, B 16 B,
// the accumulator 16 B and the epilogue its tile plus the expanded bias, 32 B: 80 B together, over
// 64. Split into subgroups that are resident one after another, REG holds 16 + 16 + max(16, 32) =
// 64 B, so the space is not empty, and no sampled point overflows.
TEST(TilingSpace, SplitsAGroupThatCannotFitIntoSubgroups) {
    ComputeDef def = OpLibrary::standard().load("matmul_bias_relu");
    BoundShape shape = bind_shape(def, "M=4,N=8,K=8");
    Target t = load_target("toy");
    t.explicit_buffers = true;
    TilingSpace s = make_tiling_space(def, shape, t, 1);
    std::vector<int> subgroups;
    for (const auto &g : s.groups) {
        if (g.tensor == "C" && g.buffer == "REG") subgroups.push_back(g.subgroup);
    }
    EXPECT_EQ(subgroups, (std::vector<int>{1, 2}));
    ASSERT_FALSE(s.legal.empty());
    for (const auto &p : s.sample(50, 1)) EXPECT_TRUE(fits_buffers(t, footprints(def, shape, t, s.groups, p)));
    // Whole, the same groups leave nothing legal.
    auto whole = group_stages(s.graph);
    EXPECT_FALSE(fits_buffers(t, footprints(def, shape, t, whole, s.legal.tilings().front())));
    // On a cache (not a scratchpad) the epilogue streams through registers: no split.
    TilingSpace c = make_tiling_space(def, shape, load_target("toy"), 1);
    for (const auto &g : c.groups) EXPECT_EQ(g.subgroup, 0) << g.tensor << "@" << g.buffer;
}

// conv2d_nchwc's outermost reduction loop steps over channel blocks (CB), each a cb x KH x KW slab
// of products: it is blocked in powers of two, the longest loop (here cb = 16 > CB = 8) in
// multiples of 16 as before (none below 16), the window loops stay whole. On the toy target with
// CB = 8, cb = 4: co {1, 2, 4, 8}; ci {4}: cb = 4 is the longest and has no block below itself.
TEST(TilingSpace, BlocksChannelBlockStepsOfABlockedConv) {
    ComputeDef def = OpLibrary::standard().load("conv2d_nchwc");
    BoundShape toy_shape = bind_shape(def, "N=1,CB=8,H=4,W=4,FB=1,cb=4,fb=4");
    TilingSpace t = make_tiling_space(def, toy_shape, load_target("toy"), 1);
    ASSERT_EQ(t.reduce.size(), 4u);  // innermost first: ci, rx, ry, co
    EXPECT_EQ(t.reduce[0].var, "ci");
    EXPECT_EQ(t.reduce[0].blocks, (std::vector<int64_t>{4}));
    EXPECT_EQ(t.reduce[1].blocks, (std::vector<int64_t>{3}));
    EXPECT_EQ(t.reduce[2].blocks, (std::vector<int64_t>{3}));
    EXPECT_EQ(t.reduce[3].var, "co");
    EXPECT_EQ(t.reduce[3].blocks, (std::vector<int64_t>{1, 2, 4, 8}));

    // On the host (L1 = 48 KiB) at 14x14x256->256: one output block's weights take 9 KiB per co
    // step (16 x 3 x 3 x 16 floats), so whole (co = 16, 147 KiB) nothing fits; blocks of up to
    // 4 steps (36 KiB) can, 8 (74 KiB) cannot.
    BoundShape shape = bind_shape(def, "N=1,CB=16,H=14,W=14,FB=16");
    Target host = load_target("x86-64-avx512");
    TilingSpace s = make_tiling_space(def, shape, host, 1);
    EXPECT_EQ(s.reduce[3].blocks, (std::vector<int64_t>{1, 2, 4, 8, 16}));
    ASSERT_FALSE(s.legal.empty());
    std::set<int64_t> used;
    for (const auto &tiling : s.legal.tilings()) used.insert(tiling.reduce[3].block);
    EXPECT_EQ(used, (std::set<int64_t>{1, 2, 4}));
    for (const auto &p : s.sample(100, 3)) EXPECT_TRUE(fits_buffers(host, footprints(def, shape, host, s.groups, p)));

    // From 4 steps on (ResNet-50's 56x56x64 3x3: CB = 4, whose whole slab of 36 KiB left no legal
    // point on a 32 KiB L1) the loop is blocked. Loops of fewer steps (a window, CB < 4) or thin
    // steps (1x1 with cb = 4) are not blocked so: the spaces of the NCHW and NHWC convolutions keep
    // their reduction options.
    TilingSpace four = make_tiling_space(def, bind_shape(def, "N=1,CB=4,H=56,W=56,FB=4"), host, 1);
    EXPECT_EQ(four.reduce[3].blocks, (std::vector<int64_t>{1, 2, 4}));
    Target small_l1 = host;
    for (BufferLevel &b : small_l1.buffers) {
        if (b.name == "L1") b.capacity = 32 * 1024;
    }
    EXPECT_FALSE(make_tiling_space(def, bind_shape(def, "N=1,CB=4,H=56,W=56,FB=4"), small_l1, 1).legal.empty());
    TilingSpace few = make_tiling_space(def, bind_shape(def, "N=1,CB=3,H=8,W=8,FB=1"), host, 1);
    EXPECT_EQ(few.reduce[3].blocks, (std::vector<int64_t>{3}));
    TilingSpace thin =
        make_tiling_space(def, bind_shape(def, "N=1,CB=8,H=8,W=8,FB=4,KH=1,KW=1,pad=0,cb=4,fb=4"), host, 1);
    EXPECT_EQ(thin.reduce[3].blocks, (std::vector<int64_t>{8}));
    ComputeDef nchw = OpLibrary::standard().load("conv2d_nchw");
    TilingSpace c = make_tiling_space(nchw, bind_shape(nchw, "N=1,C=64,H=14,W=14,F=64"), host, 1);
    EXPECT_EQ(c.reduce.back().blocks, (std::vector<int64_t>{16, 32, 64}));
}

// Toy target (4 lanes, REG = 64 B = four registers): conv2d_nchw 1x1 at 3x3 pixels, C = 2, F = 8.
// Rows of 3 fill no vector (and half a vector, 2 lanes, is below the 4-lane minimum): the innermost
// axis is scalar (width 1, register tile the whole row). The output channels (8 = 2 x 4) fill
// whole vectors and are offered as the vectorized axis; the rows (y, 3) are not. On f the register
// tile is 1 or 2 vectors (4, 8); x then takes the row axis's register tiles (1, 2, 3).
// REG holds the X slice (rx * ry floats: one register for up to 4), the Wt vectors (rf / 4) and the
// accumulators (rx * ry * rf / 4): 1 + rf/4 (1 + rx ry) <= 4, so rf = 4 with rx ry <= 2, and
// rf = 8 never.
TEST(TilingSpace, OffersOutputChannelVectorsWhereRowsLeaveATail) {
    ComputeDef def = OpLibrary::standard().load("conv2d_nchw");
    def.views.clear();  // the 1x1 as written, 3 x 3 pixels (its view would make them one row of 9)
    BoundShape shape = bind_shape(def, "N=1,C=2,H=3,W=3,F=8,KH=1,KW=1,pad=0");
    Target toy = load_target("toy");
    TilingSpace s = make_tiling_space(def, shape, toy, 1);
    EXPECT_EQ(s.vector_widths, (std::vector<int>{1, 4}));
    EXPECT_EQ(s.vector_axes, (std::vector<int>{0, 2}));
    std::set<std::pair<int64_t, int64_t>> regs;  // (x reg * y reg, f reg) of the f-vector tilings
    size_t on_f = 0;
    for (const auto &t : s.legal.tilings()) {
        if (t.vector_axis != 2) continue;
        on_f++;
        EXPECT_EQ(t.vector_width, 4);
        regs.insert({t.axes[0].reg * t.axes[1].reg, t.axes[2].reg});
        EXPECT_TRUE(fits_buffers(toy, footprints(def, shape, toy, s.groups, t))) << t.summary();
    }
    EXPECT_GT(on_f, 0u);
    EXPECT_EQ(regs, (std::set<std::pair<int64_t, int64_t>>{{1, 4}, {2, 4}}));
    // Members with their vector axis; the same tiling on y, which the rules do not offer, is not.
    SchedulePoint p = s.legal.front();
    for (const auto &q : s.legal) {
        if (q.vector_axis == 2) {
            p = q;
            break;
        }
    }
    ASSERT_EQ(p.vector_axis, 2);
    EXPECT_TRUE(s.contains(p));
    SchedulePoint on_y = p;
    on_y.vector_axis = 1;
    EXPECT_FALSE(s.contains(on_y));
    // The field is written only off the innermost axis, and read back.
    EXPECT_EQ(SchedulePoint::from_json(p.to_json()), p);
    EXPECT_EQ(p.to_json().at("vector_axis"), 2);
    EXPECT_FALSE(s.legal.tilings().front().to_json().contains("vector_axis"));
}

// A register tile reads its slice of an operand without a sliding window once, in the order of
// the reduction, so on a cache L1 holds kStreamedSteps steps of it; one level out the same holds
// for a cache tile one register tile wide along the axes the operand is not read along. Matmul
// 128x784x512, the packed-panel GEMM: n 32/32, m 128/8, k whole.
TEST(TilingSpace, StreamsOperandSlicesThatNoTileReuses) {
    ComputeDef def = matmul();
    BoundShape shape = bind_shape(def, "M=128,N=784,K=512");
    Target host = load_target("x86-64-avx512");
    TilingSpace s = make_tiling_space(def, shape, host, 1);
    SchedulePoint p = s.legal.front();
    p.vector_width = 16;
    p.axes = {{"n", 32, 32}, {"m", 128, 8}};
    p.reduce = {{"k", 512}};
    p.packed = {"B"};
    auto bytes = [&](const SchedulePoint &q, const std::string &tensor, const std::string &buffer) {
        return bytes_in(def, shape, host, s, q, tensor, buffer);
    };
    EXPECT_EQ(bytes(p, "A", "L1"), 8 * kStreamedSteps * 4);
    EXPECT_EQ(bytes(p, "B", "L1"), 32 * kStreamedSteps * 4);
    EXPECT_EQ(bytes(p, "A", "L2"), 128 * kStreamedSteps * 4);  // one register tile of n: not reused
    EXPECT_EQ(bytes(p, "B", "L2"), 32 * 512 * 4);              // reused by the 16 row tiles
    EXPECT_TRUE(s.contains(p)) << p.summary();
    SchedulePoint wide = p;
    wide.axes[0].tile = 64;  // two register tiles of n reuse A's rows
    EXPECT_EQ(bytes(wide, "A", "L2"), 128 * 512 * 4);
    // An explicit buffer holds what it is given: nothing streams.
    Target scratch = host;
    for (auto &b : scratch.buffers) b.double_buffered = false;
    scratch.explicit_buffers = true;
    EXPECT_EQ(bytes_in(def, shape, scratch, s, p, "B", "L1"), 32 * 512 * 4);
}

// An input read through a sliding window (a 3x3 convolution's X) holds its whole channel block.
TEST(TilingSpace, DoesNotStreamAWindowedInput) {
    ComputeDef def = OpLibrary::standard().load("conv2d_nchw");
    BoundShape shape = bind_shape(def, "N=1,C=64,H=14,W=14,F=64");
    Target host = load_target("x86-64-avx512");
    TilingSpace s = make_tiling_space(def, shape, host, 1);
    SchedulePoint p = heuristic_point(def, shape, host);
    auto x_l1 = [&](int64_t block) {
        SchedulePoint q = p;
        for (auto &r : q.reduce) {
            if (r.var == "c") r.block = block;
        }
        return bytes_in(def, shape, host, s, q, "X", "L1");
    };
    ASSERT_GT(x_l1(16), 0);
    EXPECT_EQ(x_l1(64), 4 * x_l1(16));
}

// The output-channel blocks of a channel-blocked convolution (the fourth output axis, fo) join the
// register tile beside rows of pixels, not only beside a flattened 1x1's one row: its input does
// not depend on fo, so one broadcast input value feeds a vector of each block. A depthwise
// convolution reads its input at the output's own channel block, so its blocks stay out; every
// sampled point with paired blocks fits the registers.
TEST(TilingSpace, OffersOutputChannelBlocksInTheRegisterTileOfAConvolution) {
    Target host = load_target("x86-64-avx512");
    ComputeDef conv = OpLibrary::standard().load("conv2d_nchwc");
    BoundShape shape = bind_shape(conv, "N=1,CB=8,H=28,W=28,FB=8");
    TilingSpace s = make_tiling_space(conv, shape, host, 1);
    ASSERT_EQ(s.axes.size(), 5u);  // innermost first: fi, x, y, fo, n
    EXPECT_EQ(s.axes[3].var, "fo");
    EXPECT_EQ(s.axes[3].regs, (std::vector<int64_t>{1, 2, 4, 8}));
    size_t paired = 0;
    for (const auto &p : s.sample(200, 5)) {
        if (p.axes[3].reg < 2) continue;
        paired++;
        EXPECT_LE(p.axes[3].reg * p.axes[2].reg * p.axes[1].reg, 32) << p.summary();
        EXPECT_TRUE(fits_buffers(host, footprints(conv, shape, host, s.groups, p))) << p.summary();
    }
    EXPECT_GT(paired, 0u);
    ComputeDef dw = OpLibrary::standard().load("depthwise_conv2d_nchwc");
    TilingSpace d = make_tiling_space(dw, bind_shape(dw, "N=1,CB=4,H=28,W=28"), host, 1);
    ASSERT_EQ(d.axes.size(), 5u);  // ci, x, y, co, n
    EXPECT_EQ(d.axes[3].var, "co");
    EXPECT_EQ(d.axes[3].regs, (std::vector<int64_t>{1}));
}

