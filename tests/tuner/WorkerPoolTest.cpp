// Measurement in worker processes: parallel compile, paired timing, and failures of the process
// itself (a crash, a hang) recorded as data while the rest of the batch goes on. Tiny shapes, so
// the suite takes seconds.
#include "core/OpLibrary.h"
#include "core/TilingSpace.h"
#include "tuner/WorkerPool.h"

#include <gtest/gtest.h>

using namespace opgen;
using namespace opgen::tuner;

namespace {

struct Fixture {
    ComputeDef def = OpLibrary::standard().load("matmul");
    BoundShape shape;
    Target host = host_target();
    WorkerTask task;
    double flops = 0;

    explicit Fixture(const std::string &s) : shape(bind_shape(def, s)) {
        task.def = &def;
        task.shape = shape;
        task.target = host;
        task.seed = 3;
        task.threads = 1;
        task.reference = heuristic_point(def, shape, host);
        task.reference->parallel_loops = 0;
        flops = flop_count(def, shape);
    }
};

PoolOptions quick(double timeout_s = 60) {
    PoolOptions o;
    o.min_time_ms = 1;
    o.min_runs = 3;
    o.timeout_s = timeout_s;
    return o;
}

}  // namespace

TEST(WorkerPool, MeasuresCandidatesPairedWithTheReference) {
    Fixture f("M=32,N=48,K=16");
    WorkerPool pool(2);
    pool.set_task(f.task);
    TilingSpace space = make_tiling_space(f.def, f.shape, f.host, 1);
    std::vector<PoolCandidate> cands;
    for (const auto &p : space.sample(4, 7)) cands.push_back({p, ""});
    cands.push_back({std::nullopt, ""});  // Halide's default schedule
    std::vector<size_t> reported;
    auto rs = pool.measure(cands, quick(), f.flops, [&](size_t i, const MeasureResult &) { reported.push_back(i); });
    ASSERT_EQ(rs.size(), cands.size());
    EXPECT_EQ(reported.size(), cands.size());
    for (const auto &r : rs) {
        EXPECT_EQ(r.status, "ok") << r.error;
        EXPECT_GE(r.timing.runs, 3);
        EXPECT_GT(r.timing.median_ms, 0);
        EXPECT_GE(r.timing.spread, 0);
        EXPECT_GT(r.reference_ms, 0);
        EXPECT_GT(r.ratio, 0);
        EXPECT_NEAR(r.gflops, f.flops / (r.timing.median_ms * 1e6), 1e-9);
    }
    EXPECT_EQ(pool.restarts(), 0);
    EXPECT_GT(pool.worker_peak_rss_kb(), 0);
}

// The reference timed against itself: the ratio of the same code, in the same window, is near 1.
TEST(WorkerPool, ReferenceAgainstItselfHasRatioNearOne) {
    Fixture f("M=64,N=64,K=64");
    WorkerPool pool(1);
    pool.set_task(f.task);
    PoolOptions o = quick();
    o.min_time_ms = 20;
    auto rs = pool.measure({{f.task.reference, ""}}, o, f.flops);
    ASSERT_EQ(rs[0].status, "ok") << rs[0].error;
    EXPECT_GT(rs[0].ratio, 0.5);
    EXPECT_LT(rs[0].ratio, 2.0);
}

TEST(WorkerPool, CrashHangAndCrashWhileTimingAreRecordedAndTheRestIsMeasured) {
    Fixture f("M=16,N=32,K=8");
    WorkerPool pool(2);
    pool.set_task(f.task);
    SchedulePoint p = *f.task.reference;
    std::vector<PoolCandidate> cands = {{p, ""}, {p, "crash"}, {p, ""}, {p, "hang"}, {p, "crash-timing"}, {p, ""}};
    // A generous timeout: a fresh worker compiles its first kernel slowly on a loaded machine.
    auto rs = pool.measure(cands, quick(10), f.flops);
    EXPECT_EQ(rs[0].status, "ok") << rs[0].error;
    EXPECT_EQ(rs[1].status, "crash");
    EXPECT_NE(rs[1].error.find("signal 11"), std::string::npos) << rs[1].error;
    EXPECT_EQ(rs[2].status, "ok") << rs[2].error;
    EXPECT_EQ(rs[3].status, "timeout");
    EXPECT_NE(rs[3].error.find("while compiling"), std::string::npos) << rs[3].error;
    EXPECT_EQ(rs[4].status, "crash");
    EXPECT_NE(rs[4].error.find("while timing"), std::string::npos) << rs[4].error;
    EXPECT_EQ(rs[5].status, "ok") << rs[5].error;
    EXPECT_EQ(pool.restarts(), 3);
    // The restarted workers still measure.
    auto again = pool.measure({{p, ""}, {p, ""}}, quick(), f.flops);
    EXPECT_EQ(again[0].status, "ok") << again[0].error;
    EXPECT_EQ(again[1].status, "ok") << again[1].error;
}

TEST(WorkerPool, RoundsTimeEveryContenderInTurn) {
    Fixture f("M=16,N=32,K=8");
    WorkerPool pool(2);
    pool.set_task(f.task);
    TilingSpace space = make_tiling_space(f.def, f.shape, f.host, 1);
    std::vector<PoolCandidate> cands;
    for (const auto &p : space.sample(3, 5)) cands.push_back({p, ""});
    auto rounds = pool.measure_rounds(cands, quick(), 3, f.flops);
    ASSERT_EQ(rounds.size(), 3u);
    for (const auto &round : rounds) {
        ASSERT_EQ(round.size(), 3u);
        for (const auto &r : round) EXPECT_EQ(r.status, "ok") << r.error;
    }
}

// A pool outlives a task: the same workers measure another shape after set_task.
TEST(WorkerPool, SwitchesTasks) {
    Fixture a("M=16,N=32,K=8"), b("M=24,N=40,K=12");
    WorkerPool pool(1);
    pool.set_task(a.task);
    EXPECT_EQ(pool.measure({{a.task.reference, ""}}, quick(), a.flops)[0].status, "ok");
    pool.set_task(b.task);
    auto r = pool.measure({{b.task.reference, ""}, {std::nullopt, ""}}, quick(), b.flops);
    EXPECT_EQ(r[0].status, "ok") << r[0].error;
    EXPECT_EQ(r[1].status, "ok") << r[1].error;
}

// A point that does not fit the op comes back as a compile error from the worker.
TEST(WorkerPool, CompileErrorComesBackAsData) {
    Fixture f("M=16,N=32,K=8");
    WorkerPool pool(1);
    pool.set_task(f.task);
    SchedulePoint p = *f.task.reference;
    p.axes[0].reg = 64;
    auto r = pool.measure({{p, ""}}, quick(), f.flops);
    EXPECT_EQ(r[0].status, "compile_error");
    EXPECT_NE(r[0].error.find("reg"), std::string::npos) << r[0].error;
}

TEST(WorkerPool, MissingExecutableIsAnError) {
    EXPECT_THROW(WorkerPool(1, "/nonexistent/opgen-worker"), std::runtime_error);
}
