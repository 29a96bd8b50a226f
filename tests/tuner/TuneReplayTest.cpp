// The tuning loop replayed on recorded measurements (tuner/Replay.h): each recording under
// tests/tuner/replay/ is a real run of matmul on a host target, made by record_tuning with the
// loop as it was when recorded. Fed the same measurements, today's tune() must ask for the same
// candidates in the same order, settle them to the same figures and name the same winner. Three
// tuning seeds. A deliberate change to what the loop measures (the space, the search, the cost
// model) makes new recordings with scripts/record-replay.sh.
#include "core/OpLibrary.h"
#include "tests/tuner/ReplayCase.h"
#include "tuner/Replay.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace opgen;
using namespace opgen::tuner;

namespace {

void replay(const std::string &file) {
    nlohmann::json j = nlohmann::json::parse(std::ifstream(std::string(OPGEN_SOURCE_DIR) + "/tests/tuner/replay/" + file));
    const ReplayCase c = read_replay_case(j);
    const ComputeDef def = OpLibrary::standard().load(c.op);
    ReplayRunner runner(j.at("recording"));
    TuneOptions o = replay_options(c);
    o.pool = &runner;
    TuneResult r = tune(def, bind_shape(def, c.shape), c.target, o);

    const nlohmann::json &want = j.at("expected");
    ASSERT_EQ(r.trials.size(), want.at("trials").size());
    for (size_t i = 0; i < r.trials.size(); i++) {
        SCOPED_TRACE("trial " + std::to_string(i + 1));
        const nlohmann::json got = trial_json(r.trials[i]);
        EXPECT_EQ(got.at("point"), want.at("trials")[i].at("point"));
        EXPECT_EQ(got.at("status"), want.at("trials")[i].at("status"));
        EXPECT_DOUBLE_EQ(got.at("gflops").get<double>(), want.at("trials")[i].at("gflops").get<double>());
        EXPECT_EQ(got.at("retimed"), want.at("trials")[i].at("retimed"));
    }
    EXPECT_EQ(r.best.to_json(), want.at("winner"));
    EXPECT_DOUBLE_EQ(r.best_result.gflops, want.at("winner_gflops").get<double>());
    EXPECT_EQ(r.stop_reason, want.at("stop_reason").get<std::string>());
    EXPECT_EQ(r.retimed, want.at("retimed").get<int>());
    EXPECT_EQ(runner.calls_left(), 0u);
}

}  // namespace

TEST(TuneReplay, SameTrialsAndWinnerOnSeed1) { replay("matmul-seed1.json"); }
TEST(TuneReplay, SameTrialsAndWinnerOnSeed2) { replay("matmul-seed2.json"); }
TEST(TuneReplay, SameTrialsAndWinnerOnSeed3) { replay("matmul-seed3.json"); }

TEST(TuneReplay, ADivergingRunStopsAtTheCall) {
    nlohmann::json j = nlohmann::json::parse(std::ifstream(std::string(OPGEN_SOURCE_DIR) + "/tests/tuner/replay/matmul-seed1.json"));
    const ReplayCase c = read_replay_case(j);
    const ComputeDef def = OpLibrary::standard().load(c.op);
    ReplayRunner runner(j.at("recording"));
    TuneOptions o = replay_options(c);
    o.seed = c.seed + 100;  // another seed asks for other candidates
    o.pool = &runner;
    try {
        tune(def, bind_shape(def, c.shape), c.target, o);
        FAIL() << "a run with another seed replayed without diverging";
    } catch (const std::runtime_error &e) {
        EXPECT_NE(std::string(e.what()).find("diverged"), std::string::npos) << e.what();
    }
}
