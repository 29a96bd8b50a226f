// Search strategies over a real (tiny) legal space with a synthetic score: the best points come
// first, measured points never come back, explorers are drawn with the seed, every point is legal,
// and the same seed gives the same batches.
#include "core/OpLibrary.h"
#include "tuner/Search.h"

#include <gtest/gtest.h>

#include <set>

using namespace opgen;
using namespace opgen::tuner;

namespace {

struct Space {
    ComputeDef def = OpLibrary::standard().load("matmul");
    BoundShape shape = bind_shape(def, "M=48,N=64,K=32");
    TilingSpace space = make_tiling_space(def, shape, host_target(), 1);
};

double synthetic(const SchedulePoint &p) {
    double s = 0;
    for (const auto &a : p.axes) s += double(a.reg) * 10 + double(a.tile) * 0.01;
    for (const auto &r : p.reduce) s -= double(r.block) * 0.001;
    return s + (p.unroll ? 0.5 : 0);
}

ScoreFn synthetic_score() {
    return [](const std::vector<SchedulePoint> &pts) {
        std::vector<double> out;
        for (const auto &p : pts) out.push_back(synthetic(p));
        return out;
    };
}

double best_in_space(const TilingSpace &s) {
    double best = -1e300;
    for (SchedulePoint p : s.legal) best = std::max(best, synthetic(p));
    return best;
}

// Runs `rounds` batches, marking each batch measured; returns every batch.
std::vector<std::vector<SchedulePoint>> run(SearchStrategy &s, int rounds, int n) {
    std::set<std::string> measured;
    std::vector<std::vector<SchedulePoint>> out;
    for (int r = 0; r < rounds; r++) {
        auto batch = s.next_batch(
            n, synthetic_score(), [&](const SchedulePoint &p) { return measured.count(point_key(p)) > 0; }, {},
            r == 0);
        for (const auto &p : batch) measured.insert(point_key(p));
        out.push_back(batch);
    }
    return out;
}

}  // namespace

TEST(Search, ExhaustiveTakesTheBestFirstAndNeverRepeats) {
    Space sp;
    ASSERT_GT(sp.space.legal.size(), 40u);
    ASSERT_LT(sp.space.legal.size(), 200000u);  // scored whole every batch
    SearchOptions o;
    o.seed = 4;
    o.exhaustive_limit = size_t(1) << 30;
    auto s = make_search(sp.space, o);
    EXPECT_STREQ(s->name(), "exhaustive");
    auto batches = run(*s, 3, 8);
    ASSERT_EQ(batches[0].size(), 8u);
    EXPECT_DOUBLE_EQ(synthetic(batches[0][0]), best_in_space(sp.space));
    // The first batch is all greedy: sorted by score.
    for (size_t i = 1; i < batches[0].size(); i++) EXPECT_GE(synthetic(batches[0][i - 1]), synthetic(batches[0][i]));
    std::set<std::string> seen;
    for (const auto &b : batches) {
        for (const auto &p : b) {
            EXPECT_TRUE(seen.insert(point_key(p)).second) << "repeated " << p.summary();
            EXPECT_TRUE(sp.space.contains(p));
        }
    }
    EXPECT_EQ(seen.size(), 24u);
}

TEST(Search, EvolutionaryFindsTheBestAndReturnsOnlyLegalPoints) {
    Space sp;
    SearchOptions o;
    o.seed = 9;
    o.exhaustive_limit = 0;  // force the evolutionary search on a small space
    o.population = 64;
    auto s = make_search(sp.space, o);
    EXPECT_STREQ(s->name(), "evolutionary");
    auto batches = run(*s, 4, 8);
    double best = best_in_space(sp.space), found = -1e300;
    for (const auto &b : batches) {
        EXPECT_EQ(b.size(), 8u);
        for (const auto &p : b) {
            EXPECT_TRUE(sp.space.contains(p)) << p.summary();
            found = std::max(found, synthetic(p));
        }
    }
    EXPECT_DOUBLE_EQ(found, best);
}

TEST(Search, SameSeedSameBatchesOtherSeedOtherExplorers) {
    Space sp;
    for (size_t limit : {size_t(0), size_t(1) << 30}) {
        SearchOptions o;
        o.seed = 17;
        o.exhaustive_limit = limit;
        o.population = 64;
        o.epsilon = 0.5;
        auto a = make_search(sp.space, o), b = make_search(sp.space, o);
        o.seed = 18;
        auto c = make_search(sp.space, o);
        auto ba = run(*a, 3, 8), bb = run(*b, 3, 8), bc = run(*c, 3, 8);
        EXPECT_EQ(ba, bb) << a->name();
        EXPECT_NE(ba, bc) << a->name();
    }
}
