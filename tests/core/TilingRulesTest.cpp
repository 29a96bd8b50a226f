// Single points of the legal space without its enumeration: is_legal_point agrees with the
// enumerated space on points in and out of it, repair_point finds the same nearest legal tiling a
// walk over every legal tiling finds, and sample_legal_points draws distinct, seeded, legal points.
#include "core/OpLibrary.h"
#include "core/TilingRules.h"
#include "core/TilingSpace.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <set>

using namespace opgen;

namespace {

struct Case {
    std::string op, shape, target;
    int threads;
};

const std::vector<Case> &cases() {
    static const std::vector<Case> c = {
        {"matmul", "M=4,N=8,K=8", "toy", 1},
        {"matmul", "M=256,N=256,K=256", "x86-64-avx512", 2},
        {"matmul", "M=200,N=72,K=1115", "x86-64-avx512", 1},
        {"conv2d_nchw", "N=1,C=64,H=28,W=28,F=64", "x86-64-avx512", 1},
        {"conv2d_nchw", "N=1,C=32,H=14,W=14,F=48", "x86-64-avx2", 2},
    };
    return c;
}

// A point drawn from the offered options, in range but not necessarily legal: every coordinate and
// knob uniform, and now and then a factor no rule offers.
SchedulePoint any_point(const TilingRules &r, std::mt19937_64 &rng) {
    auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
    size_t v = pick(r.vector_widths.size());
    SchedulePoint p;
    p.vector_width = r.vector_widths[v];
    p.vector_axis = r.vector_axes[v];
    for (size_t i = 0; i < r.axes.size(); i++) {
        auto [reg, tile] = r.pairs[v][i][pick(r.pairs[v][i].size())];
        p.axes.push_back({r.axes[i].var, tile, reg});
    }
    for (const auto &red : r.reduce) p.reduce.push_back({red.var, red.blocks[pick(red.blocks.size())]});
    p.outer_order = r.knobs.outer_orders[pick(r.knobs.outer_orders.size())];
    size_t t = pick(r.knobs.tile_orders.size());
    p.tile_order = t == 0 ? std::vector<std::string>{} : r.knobs.tile_orders[t];
    // The parallel choices offered for this tiling and order, and now and then any fusion.
    std::vector<int> par = parallel_choices(r.knobs, p);
    p.parallel_loops = pick(4) == 0 ? int(pick(3)) : par[pick(par.size())];
    auto pp = r.knobs.pack_prefetch[pick(r.knobs.pack_prefetch.size())];
    p.packed = pp.first;
    p.prefetch = pp.second;
    p.unroll = pick(2) == 0;
    if (pick(10) == 0) p.axes[pick(p.axes.size())].reg += 1;
    if (pick(10) == 0 && !p.reduce.empty()) p.reduce.back().block += 16;
    return p;
}

double distance(const SchedulePoint &a, const SchedulePoint &b) {
    auto gap = [](int64_t x, int64_t y) { return std::fabs(std::log(double(x) / double(y))); };
    double d = (a.vector_width == b.vector_width ? 0 : 1) + (a.vector_axis == b.vector_axis ? 0 : 1);
    for (size_t i = 0; i < a.axes.size(); i++) d += gap(a.axes[i].tile, b.axes[i].tile) + gap(a.axes[i].reg, b.axes[i].reg);
    for (size_t j = 0; j < a.reduce.size(); j++) d += gap(a.reduce[j].block, b.reduce[j].block);
    return d;
}

}  // namespace

TEST(TilingRules, LegalityOfOnePointAgreesWithTheEnumeratedSpace) {
    for (const Case &c : cases()) {
        ComputeDef def = OpLibrary::standard().load(c.op);
        BoundShape shape = bind_shape(def, c.shape);
        Target target = load_target(c.target);
        TilingSpace space = make_tiling_space(def, shape, target, c.threads);
        TilingRules rules = make_tiling_rules(def, shape, target, c.threads);
        std::mt19937_64 rng(17);
        int legal = 0;
        for (int i = 0; i < 3000; i++) {
            SchedulePoint p = any_point(rules, rng);
            bool in = space.contains(p);
            legal += in;
            EXPECT_EQ(is_legal_point(rules, def, shape, target, p), in) << c.op << " " << c.shape << ": " << p.summary();
        }
        for (const SchedulePoint &p : space.sample(300, 5)) EXPECT_TRUE(is_legal_point(rules, def, shape, target, p));
        EXPECT_GT(legal, 0) << c.op << " " << c.shape;
    }
}

TEST(TilingRules, RepairFindsTheNearestLegalTiling) {
    for (const Case &c : cases()) {
        ComputeDef def = OpLibrary::standard().load(c.op);
        BoundShape shape = bind_shape(def, c.shape);
        Target target = load_target(c.target);
        TilingSpace space = make_tiling_space(def, shape, target, c.threads);
        TilingRules rules = make_tiling_rules(def, shape, target, c.threads);
        std::mt19937_64 rng(23);
        for (int i = 0; i < 40; i++) {
            SchedulePoint p = any_point(rules, rng);
            std::optional<SchedulePoint> q = repair_point(rules, def, shape, target, p);
            ASSERT_TRUE(q.has_value()) << p.summary();
            EXPECT_TRUE(space.contains(*q)) << p.summary() << " -> " << q->summary();
            if (space.contains(p)) {
                EXPECT_EQ(*q, p);
                continue;
            }
            double nearest = std::numeric_limits<double>::infinity();
            for (const SchedulePoint &t : space.legal.tilings()) nearest = std::min(nearest, distance(t, p));
            EXPECT_NEAR(distance(*q, p), nearest, 1e-9) << p.summary() << " -> " << q->summary();
            // Knobs are kept where the repaired tiling offers them.
            EXPECT_EQ(q->outer_order, p.outer_order);
            EXPECT_EQ(q->unroll, p.unroll);
        }
    }
}

TEST(TilingRules, RepairRefusesAPointOfAnotherOp) {
    ComputeDef def = OpLibrary::standard().load("matmul");
    BoundShape shape = bind_shape(def, "M=64,N=64,K=64");
    Target target = load_target("x86-64-avx512");
    TilingRules rules = make_tiling_rules(def, shape, target, 1);
    SchedulePoint p;
    p.axes = {{"x", 16, 16}, {"y", 4, 4}};
    EXPECT_FALSE(repair_point(rules, def, shape, target, p).has_value());
}

TEST(TilingRules, SamplesAreLegalDistinctAndSeeded) {
    for (const Case &c : cases()) {
        ComputeDef def = OpLibrary::standard().load(c.op);
        BoundShape shape = bind_shape(def, c.shape);
        Target target = load_target(c.target);
        TilingSpace space = make_tiling_space(def, shape, target, c.threads);
        TilingRules rules = make_tiling_rules(def, shape, target, c.threads);
        size_t n = std::min<size_t>(200, space.legal.size());
        auto a = sample_legal_points(rules, def, shape, target, n, 3, 200000);
        auto b = sample_legal_points(rules, def, shape, target, n, 3, 200000);
        auto other = sample_legal_points(rules, def, shape, target, n, 4, 200000);
        ASSERT_EQ(a.size(), n) << c.op << " " << c.shape;
        EXPECT_TRUE(a == b);
        if (space.legal.size() > 2 * n) {
            EXPECT_FALSE(a == other);
        }
        std::set<std::string> distinct;
        for (const auto &p : a) {
            distinct.insert(p.to_json().dump());
            EXPECT_TRUE(space.contains(p)) << p.summary();
        }
        EXPECT_EQ(distinct.size(), a.size());
    }
}

// On the toy target (364 legal points, hand-counted in TilingSpaceTest) enough draws give every
// point, and no more than that.
TEST(TilingRules, SamplingCanReachEveryPointOfASmallSpace) {
    ComputeDef def = OpLibrary::standard().load("matmul");
    BoundShape shape = bind_shape(def, "M=4,N=8,K=8");
    Target toy = load_target("toy");
    TilingRules rules = make_tiling_rules(def, shape, toy, 1);
    auto all = sample_legal_points(rules, def, shape, toy, 1000, 1, 200000);
    EXPECT_EQ(all.size(), 728u);  // TilingSpace.CountsMatmulSpaceOnToyTarget
}
