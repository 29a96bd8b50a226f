// tune() end to end on a tiny matmul with measurement workers: it starts from the target's default
// cost model unless told not to, and a would-be best is confirmed against the best before it leads
// without adding trials. Tiny shapes and short timings, so each test takes seconds.
#include "store/KernelCache.h"
#include "store/MemoryCache.h"
#include "core/OpLibrary.h"
#include "tuner/ModelStore.h"
#include "tuner/Runner.h"
#include "tuner/Tuner.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>

using namespace opgen;
using namespace opgen::tuner;

namespace {

struct Task {
    ComputeDef def = OpLibrary::standard().load("matmul");
    BoundShape shape = bind_shape(def, "M=16,N=32,K=8");
    Target host = host_target();
};

TuneOptions quick(uint64_t seed) {
    TuneOptions o;
    o.trials = 6;
    o.batch = 3;
    o.seed = seed;
    o.jobs = 2;
    o.min_time_ms = 1;
    o.timeout_s = 30;
    return o;
}

// A worker pool whose candidates' calls take 1.0-1.2 ms in every window, while the reference
// beside them takes `first_ms` in the first two results (the default schedule, the first trial)
// and `later_ms` in every later one.
class ScriptedReferenceRunner : public Runner {
public:
    ScriptedReferenceRunner(double first_ms, double later_ms) : first_ms_(first_ms), later_ms_(later_ms) {}
    void set_task(const WorkerTask &) override {}
    std::vector<std::vector<MeasureResult>> measure_rounds(const std::vector<PoolCandidate> &candidates,
                                                           const PoolOptions &, int rounds, double flops,
                                                           const MeasuredCallback &done) override {
        std::vector<std::vector<MeasureResult>> out(static_cast<size_t>(rounds));
        for (auto &round : out) {
            for (size_t i = 0; i < candidates.size(); i++) {
                MeasureResult r;
                r.timing.median_ms = 1.2;
                r.timing.min_ms = 1.0;
                r.timing.runs = 5;
                r.reference_ms = results_++ < 2 ? first_ms_ : later_ms_;
                r.ratio = r.timing.median_ms / r.reference_ms;
                r.gflops = flops / (r.timing.median_ms * 1e6);
                round.push_back(r);
                if (done) done(i, r);
            }
        }
        return out;
    }

private:
    double first_ms_, later_ms_;
    int results_ = 0;
};

}  // namespace

TEST(Tuner, ADisturbedFirstWindowDoesNotScaleTheWinnersFigure) {
    Task t;
    // A first window disturbed by another process: the reference ran 10x slower there.
    ScriptedReferenceRunner runner(12.0, 1.2);
    TuneOptions o = quick(1);
    o.pool = &runner;
    TuneResult r = tune(t.def, t.shape, t.host, o);
    ASSERT_TRUE(r.found);
    // Scaled by the first window's reference, the winner would read 12 ms, 10x slower than any of
    // its calls; the median over the run's windows is 1.2 ms.
    EXPECT_NEAR(r.reference_ms, 1.2, 1e-9);
    EXPECT_GE(r.best_result.timing.median_ms, 0.75 - 1e-9);
    EXPECT_LE(r.best_result.timing.median_ms, 1.2 + 1e-9);
}

TEST(Tuner, ALoadedReferenceCannotScaleATimeBelowTheCandidatesOwnCalls) {
    Task t;
    // A machine that came under load after the first trial, as the worker pool saw it: from the
    // second trial on the reference runs 10x slower (a memory-bound reference beside other
    // processes), so the candidates' ratios read 0.1.
    ScriptedReferenceRunner runner(1.2, 12.0);
    TuneOptions o = quick(1);
    o.pool = &runner;
    TuneResult r = tune(t.def, t.shape, t.host, o);
    ASSERT_TRUE(r.found);
    // Scaled by the ratio alone, every later figure would read 0.12 ms, 10x faster than any call took.
    // The clock wanders by at most a quarter between windows, so 0.75 ms is the floor.
    for (const Trial &trial : r.trials) {
        ASSERT_TRUE(trial.result.ok());
        EXPECT_GE(trial.result.timing.median_ms, 0.75 - 1e-9);
        EXPECT_LE(trial.result.timing.median_ms, 1.2);
    }
    EXPECT_GE(r.best_result.timing.median_ms, 0.75 - 1e-9);
    EXPECT_LE(r.best_result.gflops, r.flops / (0.75e-3 * 1e9) + 1e-6);
}

TEST(Tuner, StartsFromTheDefaultModelUnlessToldNot) {
    Task t;
    // The host's bundled model may be missing (another CPU) or of another feature set: then the
    // tuner says so and starts from the roofline.
    bool have = load_default_model(t.host) != nullptr;
    TuneResult with = tune(t.def, t.shape, t.host, quick(1));
    ASSERT_TRUE(with.found);
    EXPECT_EQ(with.prior_model, have ? default_model_path(t.host) : "");
    TuneOptions off = quick(1);
    off.default_model = false;
    TuneResult without = tune(t.def, t.shape, t.host, off);
    ASSERT_TRUE(without.found);
    EXPECT_EQ(without.prior_model, "");
    EXPECT_EQ(with.trials.size(), 6u);
    EXPECT_EQ(without.trials.size(), 6u);
}

TEST(Tuner, WouldBeBestIsTimedAgainWithoutCountingAsATrial) {
    Task t;
    TuneOptions o = quick(2);
    o.confirm_rounds = 2;
    TuneResult r = tune(t.def, t.shape, t.host, o);
    ASSERT_TRUE(r.found);
    EXPECT_EQ(r.trials.size(), 6u);
    EXPECT_EQ(r.measured, 6);
    EXPECT_GE(r.retimed, 1);
    // Every confirmed trial was timed twice more per confirmation (as the contender, and again each
    // time it was the best a contender was timed against).
    int confirmed = 0;
    for (const Trial &trial : r.trials) {
        if (trial.retimed == 0) continue;
        confirmed++;
        EXPECT_TRUE(trial.result.ok());
        EXPECT_EQ(trial.retimed % 2, 0);
    }
    EXPECT_EQ(confirmed, r.retimed);
}

// The reference's packing twins follow it in the first round: a 1x1 convolution starts from the
// pixel GEMM, which packs X, and its twin reads X in place; both are measured and checked.
TEST(Tuner, MeasuresTheReferenceWithItsPanelReadInPlaceInTheFirstRound) {
    ComputeDef conv = OpLibrary::standard().load("conv2d_nchw");
    BoundShape shape = bind_shape(conv, "N=1,C=32,H=8,W=8,F=16,KH=1,KW=1,pad=0");
    Target host = host_target();
    SchedulePoint reference = reference_point(conv, shape, host, 1);
    ASSERT_EQ(reference.packed, std::vector<std::string>{"X"}) << reference.summary();
    TuneOptions o = quick(3);
    o.trials = 3;
    TuneResult r = tune(conv, shape, host, o);
    ASSERT_TRUE(r.found);
    ASSERT_EQ(r.trials.size(), 3u);
    EXPECT_TRUE(r.trials[0].point == reference) << r.trials[0].point.summary();
    SchedulePoint twin = reference;
    twin.packed.clear();
    EXPECT_TRUE(r.trials[1].point == twin) << r.trials[1].point.summary();
    EXPECT_TRUE(r.trials[1].result.ok()) << r.trials[1].result.error;
}

// A fused op tuned where the cache holds its plain twin's winner at the same shape measures the
// twin's loops (with its own epilogue plan) in its first round, and records it like any trial.
TEST(Tuner, MeasuresARelatedWinnersLoopsInTheFirstRound) {
    ComputeDef gelu = OpLibrary::standard().load("matmul_bias_gelu");
    BoundShape shape = bind_shape(gelu, "M=16,N=32,K=8");
    Target host = host_target();
    TilingSpace space = make_tiling_space(gelu, shape, host, 1);
    SchedulePoint reference = reference_point(gelu, shape, host, 1);
    // The twin's winner: the last legal point whose loops are not the reference's.
    SchedulePoint twin = reference;
    for (const SchedulePoint &p : space.legal) {
        SchedulePoint loops = p;
        loops.stages = reference.stages;
        loops.fast_math = reference.fast_math;
        if (!(loops == reference)) twin = loops;
    }
    ASSERT_FALSE(twin == reference);
    // The cache is a collaborator here, not the subject: the in-memory one keeps its contract.
    auto cache = db::open_memory_cache();
    db::KernelKey key = kernel_key(gelu, shape, host, 1);
    db::KernelRecord plain;
    plain.key = key;
    plain.key.op_name = "matmul";
    SchedulePoint plain_point = twin;
    plain_point.stages.clear();
    plain.schedule_json = plain_point.to_json().dump();
    plain.schedule_source = "-";
    plain.time_ms = 1;
    plain.verified = true;
    ASSERT_TRUE(cache->put_kernel(plain));

    TuneOptions o = quick(3);
    o.trials = 3;
    TuneResult r = tune(gelu, shape, host, o, cache.get(), &key);
    ASSERT_TRUE(r.found);
    ASSERT_EQ(r.trials.size(), 3u);
    EXPECT_TRUE(r.trials[0].point == reference);
    EXPECT_TRUE(r.trials[1].point == twin) << r.trials[1].point.summary() << " vs " << twin.summary();
    EXPECT_TRUE(r.trials[1].result.ok());
    EXPECT_EQ(cache->measurements_for(key).size(), 3u);
}
