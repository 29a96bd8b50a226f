// The run-time dispatcher's switching logic on a simulated clock: each variant's call advances
// the clock by the time it would take under the simulated contention, so the tests set the
// contention and see which variant each call ran.
#include "runtime/Dispatcher.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace opgen::db {
namespace {

// Three variants as in docs/design.md §7.6: tuned on a quiet machine, under light and under heavy contention.
// times[v][c]: the time of variant v under contention level c, in ms. Each variant is the fastest
// at its own level.
struct Simulation {
    double now = 0;
    int contention = 0;
    std::vector<std::vector<double>> times = {{10, 16, 30}, {12, 13, 22}, {15, 15.5, 18}};
    std::vector<int> ran;  // variant index per call, recorded inside the call
    int in_call = -1;      // the variant currently running, -1 between calls

    std::vector<DispatchVariant> variants() {
        std::vector<DispatchVariant> out;
        const char *names[] = {"quiet", "light", "heavy"};
        for (int v = 0; v < 3; v++) {
            DispatchVariant d;
            d.name = names[v];
            d.level = v;
            d.expected_ms = times[v][v];
            d.run = [this, v] {
                EXPECT_EQ(in_call, -1) << "a call began inside another";
                in_call = v;
                ran.push_back(v);
                now += times[v][contention] / 1e3;
                in_call = -1;
            };
            out.push_back(d);
        }
        return out;
    }
    DispatchClock clock() {
        return [this] { return now; };
    }
};

DispatchPolicy policy(double window_s, int min_calls) {
    DispatchPolicy p;
    p.up_ratio = 1.25;
    p.down_ratio = 0.85;
    p.window_s = window_s;
    p.min_calls = min_calls;
    return p;
}

TEST(Dispatcher, QuietMachineStaysOnQuietVariant) {
    Simulation sim;
    Dispatcher d(sim.variants(), policy(0.05, 3), sim.clock());
    for (int i = 0; i < 100; i++) {
        EXPECT_EQ(d.call(), 0);
    }
    EXPECT_TRUE(d.decisions().empty());
    EXPECT_DOUBLE_EQ(d.last_ratio(), 1.0);
}

TEST(Dispatcher, SwitchesUpOnlyAfterWindowAndMinCalls) {
    Simulation sim;
    // 16 ms calls against 10 expected: ratio 1.6. The window of 0.05 s needs 4 calls (64 ms).
    Dispatcher d(sim.variants(), policy(0.05, 2), sim.clock());
    d.call();
    sim.contention = 1;
    for (int i = 0; i < 3; i++) {
        EXPECT_EQ(d.call(), 0);
        EXPECT_EQ(d.current(), 0) << "switched after " << i + 1 << " contended calls";
    }
    EXPECT_EQ(d.call(), 0);  // the fourth contended call completes the window
    ASSERT_EQ(d.decisions().size(), 1u);
    const DispatchDecision &dec = d.decisions()[0];
    EXPECT_EQ(dec.call, 5);
    EXPECT_EQ(dec.from, 0);
    EXPECT_EQ(dec.to, 1);
    EXPECT_EQ(dec.calls_held, 4);
    EXPECT_NEAR(dec.held_s, 0.064, 1e-9);
    EXPECT_NEAR(dec.ratio, 1.6, 1e-9);
    EXPECT_EQ(dec.reason, "contention heavier");
    EXPECT_EQ(d.current(), 1);
    EXPECT_EQ(d.call(), 1);  // the next call, not the one that observed, runs the new variant
    // Variant 1 at its own level: ratio 1, no further switch.
    for (int i = 0; i < 50; i++) {
        EXPECT_EQ(d.call(), 1);
    }
    EXPECT_EQ(d.decisions().size(), 1u);
}

TEST(Dispatcher, MinCallsHoldsEvenWhenWindowIsShort) {
    Simulation sim;
    Dispatcher d(sim.variants(), policy(0.0, 5), sim.clock());
    sim.contention = 1;
    for (int i = 0; i < 4; i++) {
        d.call();
        EXPECT_EQ(d.current(), 0);
    }
    d.call();
    EXPECT_EQ(d.current(), 1);
    EXPECT_EQ(d.decisions().at(0).calls_held, 5);
}

TEST(Dispatcher, OneCallOutsideTheConditionRestartsTheWindow) {
    Simulation sim;
    Dispatcher d(sim.variants(), policy(0.05, 1), sim.clock());
    // Contended, quiet, contended...: the condition never holds for 50 ms in a row.
    for (int i = 0; i < 40; i++) {
        sim.contention = (i % 3 == 2) ? 0 : 1;  // two 16 ms calls (32 ms), then a quiet one
        d.call();
    }
    EXPECT_TRUE(d.decisions().empty());
    EXPECT_EQ(d.current(), 0);
}

TEST(Dispatcher, RatioBetweenThresholdsNeverSwitches) {
    Simulation sim;
    sim.times[0][1] = 12;  // light contention slows the quiet variant by 20%: below up_ratio 1.25
    Dispatcher d(sim.variants(), policy(0.0, 1), sim.clock());
    sim.contention = 1;
    for (int i = 0; i < 50; i++) {
        EXPECT_EQ(d.call(), 0);
    }
    EXPECT_NEAR(d.last_ratio(), 1.2, 1e-9);
    EXPECT_TRUE(d.decisions().empty());
}

TEST(Dispatcher, ClimbsOneStepAtATimeAndComesBackDown) {
    Simulation sim;
    Dispatcher d(sim.variants(), policy(0.03, 2), sim.clock());
    sim.contention = 2;
    // Quiet variant under heavy load: ratio 3.0, but the first step goes to "light" only.
    while (d.decisions().empty()) {
        d.call();
    }
    EXPECT_EQ(d.decisions()[0].to, 1);
    // "light" under heavy load: 22 / 13 = 1.69, so up again to "heavy".
    while (d.decisions().size() < 2) {
        d.call();
    }
    EXPECT_EQ(d.decisions()[1].from, 1);
    EXPECT_EQ(d.decisions()[1].to, 2);
    for (int i = 0; i < 20; i++) {
        EXPECT_EQ(d.call(), 2);  // top of the ladder: ratio 1, and nothing above anyway
    }
    // The load goes away: "heavy" runs 15 ms against 18 expected, ratio 0.83 < 0.85: down.
    sim.contention = 0;
    while (d.decisions().size() < 3) {
        d.call();
    }
    EXPECT_EQ(d.decisions()[2].to, 1);
    EXPECT_EQ(d.decisions()[2].reason, "contention lighter");
    // "light" quietly: 12 / 13 = 0.92, between the thresholds: it stays there (hysteresis band).
    for (int i = 0; i < 20; i++) {
        EXPECT_EQ(d.call(), 1);
    }
    EXPECT_EQ(d.decisions().size(), 3u);
}

TEST(Dispatcher, NarrowerBandReturnsToQuiet) {
    Simulation sim;
    DispatchPolicy p = policy(0.0, 3);
    p.down_ratio = 0.95;
    Dispatcher d(sim.variants(), p, sim.clock());
    sim.contention = 1;
    while (d.current() != 1) {
        d.call();
    }
    sim.contention = 0;
    for (int i = 0; i < 3; i++) {
        EXPECT_EQ(d.call(), 1);
    }
    EXPECT_EQ(d.current(), 0);
    EXPECT_EQ(d.decisions().back().calls_held, 3);
}

TEST(Dispatcher, SwitchesOnlyBetweenCalls) {
    Simulation sim;
    Dispatcher d(sim.variants(), policy(0.0, 1), sim.clock());
    int decisions_seen = 0;
    d.set_log([&](const DispatchDecision &dec) {
        EXPECT_EQ(sim.in_call, -1) << "decision taken during a call";
        EXPECT_EQ(dec.call, static_cast<int64_t>(sim.ran.size()));
        decisions_seen++;
    });
    sim.contention = 2;
    std::vector<int> ran_by_call;
    for (int i = 0; i < 10; i++) {
        ran_by_call.push_back(d.call());
    }
    EXPECT_EQ(decisions_seen, 2);
    EXPECT_EQ(ran_by_call, sim.ran);  // each call ran exactly one variant, the one reported
    EXPECT_EQ(ran_by_call[0], 0);
    EXPECT_EQ(ran_by_call[1], 1);
    EXPECT_EQ(ran_by_call[2], 2);
    EXPECT_EQ(describe(d, d.decisions()[0]),
              "call 1 at 0.030 s: quiet -> light (ratio 3.00, contention heavier for 1 calls, 0.030 s)");
}

TEST(Dispatcher, RefusesBadConfiguration) {
    Simulation sim;
    EXPECT_THROW(Dispatcher({}, policy(0, 1), sim.clock()), std::invalid_argument);
    std::vector<DispatchVariant> v = sim.variants();
    v[1].expected_ms = 0;
    EXPECT_THROW(Dispatcher(v, policy(0, 1), sim.clock()), std::invalid_argument);
    v = sim.variants();
    v[2].run = nullptr;
    EXPECT_THROW(Dispatcher(v, policy(0, 1), sim.clock()), std::invalid_argument);
    DispatchPolicy p = policy(0, 1);
    p.down_ratio = 1.3;
    EXPECT_THROW(Dispatcher(sim.variants(), p, sim.clock()), std::invalid_argument);
    EXPECT_THROW(Dispatcher(sim.variants(), policy(-1, 1), sim.clock()), std::invalid_argument);
    EXPECT_THROW(Dispatcher(sim.variants(), policy(0, 0), sim.clock()), std::invalid_argument);
}

TEST(Dispatcher, SteadyClockTimesRealCalls) {
    int runs = 0;
    DispatchVariant v{"only", 0, 1.0, [&] { runs++; }};
    Dispatcher d({v});
    for (int i = 0; i < 5; i++) {
        d.call();
    }
    EXPECT_EQ(runs, 5);
    EXPECT_EQ(d.calls(), 5);
    EXPECT_GE(d.last_ratio(), 0.0);
}

}  // namespace
}  // namespace opgen::db
