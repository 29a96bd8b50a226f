// The printed schedule source of fixed points matches checked-in text. The target is a bundled
// JSON file, not the host, so the text does not depend on the machine. To accept a deliberate
// change, run with OPGEN_UPDATE_GOLDEN=1 and review the diff.
#include "codegen/Emit.h"
#include "core/OpLibrary.h"
#include "core/Parser.h"
#include "core/Schedule.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace opgen;

namespace {

void expect_golden(const std::string &name, const std::string &actual) {
    std::string path = std::string(OPGEN_SOURCE_DIR) + "/tests/golden/" + name;
    if (std::getenv("OPGEN_UPDATE_GOLDEN")) {
        std::ofstream(path) << actual;
    }
    std::ifstream in(path);
    ASSERT_TRUE(in.good()) << "missing golden file " << path << " (run with OPGEN_UPDATE_GOLDEN=1)";
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_EQ(ss.str(), actual) << "golden " << name << " differs";
}

struct Fixture {
    ComputeDef def = OpLibrary::standard().load("matmul");
    BoundShape shape = bind_shape(def, "M=256,N=256,K=256");
    Target target = load_target("x86-64-avx512");
};

SchedulePoint blocked_point(const Fixture &f) {
    SchedulePoint p = heuristic_point(f.def, f.shape, f.target);
    p.axes[0] = {"n", 128, 32};
    p.axes[1] = {"m", 64, 8};
    p.reduce[0].block = 64;
    p.packed = {"A", "B"};
    p.parallel_loops = 2;
    p.outer_order = {"m", "n"};
    return p;
}

}  // namespace

TEST(GoldenSchedule, MatmulRegisterTiled) {
    Fixture f;
    LoweredOp op = lower_to_halide(f.def, f.shape);
    expect_golden("matmul_register_tiled.txt", apply_schedule(op, heuristic_point(f.def, f.shape, f.target), f.target).source());
}

TEST(GoldenSchedule, MatmulBlockedPackedParallel) {
    Fixture f;
    LoweredOp op = lower_to_halide(f.def, f.shape);
    expect_golden("matmul_blocked_packed.txt", apply_schedule(op, blocked_point(f), f.target).source());
}

TEST(GoldenSchedule, MatmulGeneratorSource) {
    Fixture f;
    expect_golden("matmul_generator.cpp.txt", generator_source(f.def, f.shape, blocked_point(f), f.target, "matmul_256"));
}

TEST(GoldenSchedule, SchedulePointJsonRoundTrips) {
    Fixture f;
    SchedulePoint p = blocked_point(f);
    EXPECT_TRUE(SchedulePoint::from_json(nlohmann::json::parse(p.to_json().dump())) == p);
    expect_golden("matmul_blocked_packed.json", p.to_json().dump(2) + "\n");
}

// The requantizing int8 matmul's generator: the i32 sums on vpdpbusd's dot product, the epilogue
// (i32 bias, f32 scale, round, zero point, clamp, u8) inlined into the output's tiles, as the
// JIT kernel computes it.
TEST(GoldenSchedule, RequantMatmulGeneratorSource) {
    ComputeDef def = OpLibrary::standard().load("matmul_u8s8_requant");
    BoundShape shape = bind_shape(def, "M=128,N=768,K=768");
    Target target = load_target("x86-64-avx512");
    target.features = {"avx512_vnni"};
    SchedulePoint p = heuristic_point(def, shape, target);
    expect_golden("matmul_u8s8_requant_generator.cpp.txt",
                  generator_source(def, shape, p, target, "matmul_u8s8_requant_128"));
}

// Every cast and round prints as lower_to_halide lowers it: u8 and i8 saturate, round is Halide's
// (ties to even) on floats and the identity on integers, never a trip through float.
TEST(GoldenSchedule, CastsAndRoundPrintAsLowered) {
    ComputeDef def =
        parse_compute("op c\nparam N\ninput X: f32[N]\ninput Z: i32[N]\nlocal T: i32[N]\n"
                      "output Y: f32[N]\nT[i] = round(Z[i]) + i32(u8(Z[i]))\n"
                      "Y[i] = round(X[i]) + bf16(X[i]) + T[i]\n",
                      "c.op");
    std::string src = halide_algorithm_source(def, bind_shape(def, "N=8"));
    EXPECT_NE(src.find("saturating_cast<uint8_t>("), std::string::npos) << src;
    EXPECT_NE(src.find("cast<Halide::bfloat16_t>("), std::string::npos) << src;
    EXPECT_NE(src.find("round(cast<float>(X("), std::string::npos) << src;
    EXPECT_EQ(src.find("round(cast<float>(cast<int32_t>(Z("), std::string::npos) << src;
    EXPECT_EQ(src.find("u8("), std::string::npos) << src;
}
