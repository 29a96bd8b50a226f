// Seeded random legal points compile and compute correct results; a wrong kernel is caught.
#include "core/OpLibrary.h"
#include "tuner/Measurer.h"
#include "core/TilingSpace.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace opgen;
using namespace opgen::tuner;

TEST(Measurer, RandomLegalPointsAreCorrectAtAnOddShape) {
    ComputeDef def = OpLibrary::standard().load("matmul");
    BoundShape shape = bind_shape(def, "M=37,N=53,K=29");
    Target host = host_target();
    TilingSpace s = make_tiling_space(def, shape, host, 2);
    ASSERT_FALSE(s.legal.empty());
    TaskContext task(def, shape, host, 5);
    int ok = 0;
    for (const auto &p : s.sample(12, 21)) {
        MeasureResult r = measure(task, p, 1, 1);
        EXPECT_EQ(r.status, "ok") << p.summary() << ": " << r.error;
        ok += r.ok();
        EXPECT_LT(r.max_error, 1e-4);
    }
    EXPECT_EQ(ok, 12);
}

TEST(Measurer, BlockedReductionIsCorrect) {
    ComputeDef def = OpLibrary::standard().load("matmul");
    BoundShape shape = bind_shape(def, "M=64,N=96,K=128");
    Target host = host_target();
    TaskContext task(def, shape, host, 9);
    SchedulePoint p = heuristic_point(def, shape, host);
    p.reduce[0].block = 32;
    p.packed = {"A", "B"};
    p.axes[0].tile = 32;  // multiples of the register tile, as blocking needs
    p.axes[1].tile = 16;
    MeasureResult r = measure(task, p, 1, 1);
    EXPECT_EQ(r.status, "ok") << r.error;
}

TEST(Measurer, DefaultScheduleIsCorrect) {
    ComputeDef def = OpLibrary::standard().load("matmul");
    BoundShape shape = bind_shape(def, "M=17,N=19,K=23");
    TaskContext task(def, shape, host_target(), 3);
    MeasureResult r = measure(task, std::nullopt, 1, 1);
    EXPECT_EQ(r.status, "ok") << r.error;
    EXPECT_GT(r.gflops, 0);
}

// The reference catches a wrong kernel: checking against a sample of a different input fails.
TEST(Measurer, WrongResultIsReportedNotTimed) {
    ComputeDef def = OpLibrary::standard().load("matmul");
    BoundShape shape = bind_shape(def, "M=16,N=32,K=8");
    TaskContext task(def, shape, host_target(), 3);
    TaskContext other(def, shape, host_target(), 4);
    task.reference = other.reference;  // the kernel now computes a different product than expected
    MeasureResult r = measure(task, std::nullopt, 1, 1);
    EXPECT_EQ(r.status, "wrong_result");
    EXPECT_NE(r.error.find("C["), std::string::npos);
    EXPECT_EQ(r.timing.runs, 0);
}

TEST(Measurer, BadPointIsRecordedAsFailure) {
    ComputeDef def = OpLibrary::standard().load("matmul");
    BoundShape shape = bind_shape(def, "M=16,N=32,K=8");
    TaskContext task(def, shape, host_target(), 3);
    SchedulePoint p = heuristic_point(def, shape, host_target());
    p.axes[0].reg = 64;  // larger than the axis: refused, not crashed
    MeasureResult r = measure(task, p, 1, 1);
    EXPECT_EQ(r.status, "compile_error");
    EXPECT_NE(r.error.find("reg"), std::string::npos);
}

// A hand-written point may name any input; packing one the reduction never reads is refused with
// a message, not a Halide internal error.
TEST(Measurer, PackingAnInputTheReductionDoesNotReadIsRefused) {
    ComputeDef def = OpLibrary::standard().load("matmul_bias_relu");
    BoundShape shape = bind_shape(def, "M=11,N=35,K=16");
    TaskContext task(def, shape, host_target(), 3);
    SchedulePoint p = heuristic_point(def, shape, host_target());
    p.packed = {"A", "B", "bias"};
    MeasureResult r = measure(task, p, 1, 1);
    EXPECT_EQ(r.status, "compile_error");
    EXPECT_NE(r.error.find("packed 'bias' is not read by the reduction"), std::string::npos) << r.error;
}

// A wrong integer result has an infinite error, which JSON writes as null: the tuner read it back
// as a number and stopped the whole tune ("type must be number, but is null": a quantize kernel of
// BERT-base's QOperator form). It is read back as infinite, a wrong result like any other.
TEST(Measurer, AnInfiniteErrorSurvivesTheWorkersJson) {
    nlohmann::json written;
    written["max_error"] = std::numeric_limits<double>::infinity();
    const nlohmann::json read = nlohmann::json::parse(written.dump());
    EXPECT_TRUE(read.at("max_error").is_null());
    EXPECT_TRUE(std::isinf(max_error_from_json(read)));
    EXPECT_EQ(max_error_from_json(nlohmann::json::parse(R"({"max_error": 0.25})")), 0.25);
    EXPECT_EQ(max_error_from_json(nlohmann::json::object()), 0.0);
}
