// Carried points (tuner/CarriedPoints.h): a related winner's loop choices become a legal first
// candidate of the task, with the task's own stage plan; its own key, unreadable schedules and
// loops the space does not hold give none.
#include "core/OpLibrary.h"
#include "tuner/CarriedPoints.h"
#include "tuner/ColdInputs.h"
#include "tuner/Tuner.h"

#include <gtest/gtest.h>

using namespace opgen;
using namespace opgen::tuner;

namespace {

struct GeluTask {
    ComputeDef def = OpLibrary::standard().load("matmul_bias_gelu");
    BoundShape shape = bind_shape(def, "M=64,N=64,K=64");
    Target host = host_target();
    TilingSpace space = make_tiling_space(def, shape, host, 1);
    SchedulePoint reference = reference_point(def, shape, host, 1);
    db::KernelKey key = kernel_key(def, shape, host, 1);
};

bool same_loops(const SchedulePoint &a, const SchedulePoint &b) {
    SchedulePoint x = a;
    x.stages = b.stages;
    x.fast_math = b.fast_math;
    return x == b;
}

// A point of the task's space whose loops differ from the reference's, written as the plain
// matmul's winner at the same shape would be: no stages, exact exp.
SchedulePoint loops_unlike_reference(const GeluTask &t) {
    for (const SchedulePoint &p : t.space.legal) {
        if (!same_loops(p, t.reference)) {
            SchedulePoint plain = p;
            plain.stages.clear();
            plain.fast_math = false;
            return plain;
        }
    }
    ADD_FAILURE() << "the space holds no loops but the reference's";
    return t.reference;
}

db::KernelRecord winner(const std::string &op, const db::KernelKey &at, const SchedulePoint &p) {
    db::KernelRecord r;
    r.key = at;
    r.key.op_name = op;
    r.key.op_hash = "0123";
    r.schedule_json = p.to_json().dump();
    return r;
}

}  // namespace

TEST(CarriedPoints, TakeTheDonorsLoopsWithTheTasksStagePlan) {
    GeluTask t;
    SchedulePoint donor = loops_unlike_reference(t);
    std::vector<SchedulePoint> got = carried_points(t.space, t.reference, t.key, {winner("matmul", t.key, donor)});
    ASSERT_EQ(got.size(), 1u);
    EXPECT_TRUE(t.space.contains(got[0]));
    EXPECT_EQ(got[0].axes, donor.axes);
    EXPECT_EQ(got[0].reduce, donor.reduce);
    EXPECT_EQ(got[0].packed, donor.packed);
    EXPECT_EQ(got[0].stages, t.reference.stages);
}

TEST(CarriedPoints, SkipTheTasksOwnKeyUnreadableSchedulesAndLoopsOutsideTheSpace) {
    GeluTask t;
    SchedulePoint donor = loops_unlike_reference(t);
    db::KernelRecord own = winner(t.key.op_name, t.key, donor);
    own.key.op_hash = t.key.op_hash;
    db::KernelRecord garbled = winner("matmul", t.key, donor);
    garbled.schedule_json = "{\"axes\": 3";
    SchedulePoint huge = donor;
    huge.axes[0].tile = huge.axes[0].reg = 4096;  // beyond the 64-wide axis
    db::KernelRecord outside = winner("matmul", t.key, huge);
    EXPECT_TRUE(carried_points(t.space, t.reference, t.key, {own, garbled, outside}).empty());
}

TEST(CarriedPoints, GiveEachPointOnceAndAtMostTheLimit) {
    GeluTask t;
    std::vector<db::KernelRecord> donors;
    size_t distinct = 0;
    for (const SchedulePoint &p : t.space.legal) {
        if (same_loops(p, t.reference)) continue;
        SchedulePoint plain = p;
        plain.stages.clear();
        donors.push_back(winner("matmul", t.key, plain));
        donors.push_back(winner("matmul_bias", t.key, plain));  // the same loops twice
        if (++distinct == 6) break;
    }
    std::vector<SchedulePoint> two = carried_points(t.space, t.reference, t.key, donors, 2);
    EXPECT_EQ(two.size(), 2u);
    std::vector<SchedulePoint> all = carried_points(t.space, t.reference, t.key, donors, 100);
    EXPECT_LE(all.size(), distinct);  // fast_math variants of one loop nest collapse too
    for (size_t i = 0; i < all.size(); i++) {
        for (size_t j = i + 1; j < all.size(); j++) EXPECT_FALSE(all[i] == all[j]);
    }
}

// A winner of another thread count comes with parallel loops the task's space may not offer: its
// loops are carried with the task's own (the reference's) parallel choice.
TEST(CarriedPoints, TakeAnotherThreadCountsLoopsWithTheTasksParallelLoops) {
    GeluTask t;
    SchedulePoint donor = loops_unlike_reference(t);
    donor.parallel_loops = 99;
    db::KernelKey two = t.key;
    two.target = t.host.name + ":t2";
    std::vector<SchedulePoint> got = carried_points(t.space, t.reference, t.key, {winner("matmul", two, donor)});
    ASSERT_EQ(got.size(), 1u);
    EXPECT_TRUE(t.space.contains(got[0]));
    EXPECT_EQ(got[0].axes, donor.axes);
    EXPECT_EQ(got[0].parallel_loops, t.reference.parallel_loops);
}

TEST(CarriedPoints, DonorTargetsAreTheTasksOwnThenEveryThreadCountHotAndCold) {
    auto key_on = [](const std::string &target) {
        db::KernelKey k;
        k.target = target;
        return k;
    };
    const std::vector<db::KernelKey> plain = {key_on("x86-64-avx512:t1"), key_on("x86-64-avx512:t2")};
    EXPECT_EQ(donor_targets(key_on("x86-64-avx512:t1"), plain),
              (std::vector<std::string>{"x86-64-avx512:t1", "x86-64-avx512:t1:cold", "x86-64-avx512:t2",
                                        "x86-64-avx512:t2:cold"}));
    EXPECT_EQ(donor_targets(key_on("x86-64-avx512:t2:cold"), plain),
              (std::vector<std::string>{"x86-64-avx512:t2:cold", "x86-64-avx512:t1", "x86-64-avx512:t1:cold",
                                        "x86-64-avx512:t2"}));
    EXPECT_EQ(donor_targets(key_on("custom"), plain), std::vector<std::string>{"custom"});
    EXPECT_EQ(donor_targets(key_on("x86:tx"), plain), std::vector<std::string>{"x86:tx"});
    // The task's real keys: kernel_key's thread-count target and cold_key's.
    GeluTask t;
    const db::KernelKey two = kernel_key(t.def, t.shape, t.host, 2);
    EXPECT_EQ(donor_targets(t.key, {t.key, two}),
              (std::vector<std::string>{t.key.target, cold_key(t.key).target, two.target, cold_key(two).target}));
}
