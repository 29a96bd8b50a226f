// An int8 matmul (u8 x s8 -> s32, docs/design.md §2.4), plain and requantizing, tuned end to end
// with measurement workers: every candidate is checked against the reference exactly before its
// time counts, and the winner, compiled again here, matches the reference at every point. A tiny
// shape and few trials.
#include "core/OpLibrary.h"
#include "tests/support/CheckedKernel.h"
#include "tuner/Tuner.h"

#include <gtest/gtest.h>

using namespace opgen;
using namespace opgen::tuner;

namespace {

// A short tune with two measurement workers at `seed`.
TuneResult short_tune(const ComputeDef &def, const BoundShape &shape, const Target &host, uint64_t seed) {
    TuneOptions o;
    o.trials = 4;
    o.batch = 2;
    o.seed = seed;
    o.jobs = 2;
    o.min_time_ms = 1;
    o.timeout_s = 60;
    return tune(def, shape, host, o);
}

}  // namespace

TEST(Int8Tune, TunedKernelMatchesTheReferenceExactly) {
    ComputeDef def = OpLibrary::standard().load("matmul_u8s8");
    BoundShape shape = bind_shape(def, "M=16,N=64,K=32");
    Target host = host_target();
    TuneResult r = short_tune(def, shape, host, 3);
    ASSERT_TRUE(r.found);
    for (const Trial &t : r.trials) {
        EXPECT_NE(t.result.status, "wrong_result") << t.point.summary() << ": " << t.result.error;
        if (t.result.ok()) {
            EXPECT_EQ(t.result.max_error, 0.0) << t.point.summary();
        }
        // An AMX candidate runs in its worker (which asked for the AMX permission) and is exact.
        if (t.point.amx_tile) {
            EXPECT_TRUE(t.result.ok()) << t.point.summary() << ": " << t.result.error;
        }
    }
    EXPECT_EQ(r.best.dot_product, host.has_feature("avx512_vnni") ? 4 : 0);

    Verification v = test::run_checked(def, shape, r.best, host, 77);
    EXPECT_TRUE(v.ok) << v.first_mismatch;
    EXPECT_EQ(v.points_checked, shape.elements("C"));
}

// The requantizing int8 matmul tuned end to end: its space keeps the dot product on a VNNI host
// (the epilogue's u8 output does not make the space vectorize by 64 u8 lanes), every candidate
// matches the reference exactly, and so does the winner.
TEST(Int8Tune, RequantWinnerKeepsTheDotProductAndIsExact) {
    ComputeDef def = OpLibrary::standard().load("matmul_u8s8_requant");
    BoundShape shape = bind_shape(def, "M=16,N=64,K=32");
    Target host = host_target();
    TuneResult r = short_tune(def, shape, host, 5);
    ASSERT_TRUE(r.found);
    for (const Trial &t : r.trials) {
        EXPECT_NE(t.result.status, "wrong_result") << t.point.summary() << ": " << t.result.error;
        EXPECT_EQ(t.point.dot_product, host.has_feature("avx512_vnni") ? 4 : 0)
            << t.point.summary();
    }
    EXPECT_LE(r.best.vector_width, host.vector_lanes(4)); // i32 lanes at most, never u8 ones
    Verification v = test::run_checked(def, shape, r.best, host, 78);
    EXPECT_TRUE(v.ok) << v.first_mismatch;
    EXPECT_EQ(v.points_checked, shape.elements("C"));
}
