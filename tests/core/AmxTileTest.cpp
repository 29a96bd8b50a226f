// AMX accumulator tiles (core/AmxTile.h, docs/design.md §2.4): the space of an int8 matmul offers
// them only where the target has amx_int8 and the tiling is one an AMX tile can take; an AMX point
// schedules the accumulator into a tile; on a host with AMX its kernel runs tdpbusd with the full
// depth of K = 64 bytes per instruction (widen_amx_reduction) and matches the reference exactly.
#include "core/AmxTile.h"
#include "base/AmxPermission.h"
#include "codegen/CompiledCode.h"
#include "core/AmxLowering.h"
#include "core/Kernel.h"
#include "core/OpLibrary.h"
#include "core/Schedule.h"
#include "core/TilingRules.h"
#include "core/TilingSpace.h"
#include "runtime/HostCpu.h"
#include "tests/support/CheckedKernel.h"
#include "tests/support/PipelineText.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

using namespace opgen;

namespace {

ComputeDef int8_matmul() {
    return OpLibrary::standard().load("matmul_u8s8");
}

// The bundled AVX-512 target described with `features` (never compiled for).
Target avx512_with(std::vector<std::string> features) {
    Target t = load_target("x86-64-avx512");
    t.features = std::move(features);
    return t;
}

// A Sapphire Rapids description: Halide lowers AMX tiles only for avx512_sapphirerapids.
Target amx_target() {
    Target t = avx512_with({"avx512_vnni", "avx512_bf16", "amx_int8", "amx_bf16"});
    t.halide_target = "x86-64-linux-avx-avx2-avx512-avx512_cannonlake-avx512_sapphirerapids-avx512_"
                      "skylake-f16c-fma-sse41";
    return t;
}

// The lowered statement (after every lowering pass, opgen's included) of `point` on `def` at
// `shape`.
std::string lowered_text(const ComputeDef &def, const BoundShape &shape, const SchedulePoint &point,
                         const Target &target) {
    LoweredOp op = lower_for_point(def, shape, &point);
    apply_schedule(op, point, target);
    return test::pipeline_text(op, target, test::PipelineText::LoweredStmt);
}

// Whether /proc/cpuinfo lists `flag`.
bool cpu_flag(const std::string &flag) {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("flags", 0) == 0)
            return (line + " ").find(" " + flag + " ") != std::string::npos;
    }
    return false;
}

} // namespace

// With amx_int8 the space doubles exactly the tilings of a 16 x 16 register tile on 16 lanes with
// the reduction whole; every AMX point drawn is one of them and legal.
TEST(AmxTile, SpaceOffersTilesOnlyWhereTheTilingFits) {
    ComputeDef def = int8_matmul();
    BoundShape shape = bind_shape(def, "M=64,N=128,K=256");
    Target amx = amx_target();
    TilingRules rules = make_tiling_rules(def, shape, amx, 1);
    EXPECT_EQ(rules.knobs.amx_tiles, (std::vector<bool>{false, true}));
    size_t amx_points = 0;
    for (const SchedulePoint &p : sample_legal_points(rules, def, shape, amx, 400, 3, 200000)) {
        if (!p.amx_tile)
            continue;
        amx_points++;
        EXPECT_TRUE(amx_register_tile(p)) << p.summary();
        for (const ReduceTiling &r : p.reduce)
            EXPECT_EQ(r.block, shape.var_extent(main_statement(def), r.var));
        EXPECT_TRUE(is_legal_point(rules, def, shape, amx, p)) << p.summary();
    }
    EXPECT_GT(amx_points, 0u);
    TilingSpace with = make_tiling_space(def, shape, amx, 1);
    TilingSpace without =
        make_tiling_space(def, shape, avx512_with({"avx512_vnni", "avx512_bf16"}), 1);
    int64_t fitting = 0; // points of the space without AMX whose tiling an AMX tile can take
    for (size_t i = 0; i < without.legal.size(); i++)
        fitting += amx_tile_fits(rules.knobs, without.legal[i]);
    EXPECT_GT(fitting, 0);
    EXPECT_EQ(int64_t(with.legal.size()), int64_t(without.legal.size()) + fitting);
}

// Without amx_int8 (a VNNI target), for a shape that is not whole tiles, or for a float32 matmul,
// the space offers no AMX point, and a point that asks for one is not legal.
TEST(AmxTile, SpaceWithoutAmxInt8OffersNone) {
    ComputeDef def = int8_matmul();
    BoundShape shape = bind_shape(def, "M=64,N=128,K=256");
    Target vnni = avx512_with({"avx512_vnni", "avx512_bf16", "amx_bf16"});
    TilingRules rules = make_tiling_rules(def, shape, vnni, 1);
    EXPECT_EQ(rules.knobs.amx_tiles, std::vector<bool>{false});
    for (const SchedulePoint &p : sample_legal_points(rules, def, shape, vnni, 200, 3, 50000))
        EXPECT_FALSE(p.amx_tile);
    SchedulePoint p = heuristic_point(def, shape, vnni);
    EXPECT_FALSE(p.amx_tile);
    ASSERT_TRUE(amx_tile_point(def, shape, amx_target(), p));
    EXPECT_FALSE(is_legal_point(rules, def, shape, vnni, p)) << p.summary();
    EXPECT_FALSE(amx_tile_offered(def, bind_shape(def, "M=64,N=120,K=256"), amx_target()));
    EXPECT_FALSE(amx_tile_offered(def, bind_shape(def, "M=60,N=128,K=256"), amx_target()));
    ComputeDef f32 = OpLibrary::standard().load("matmul");
    EXPECT_FALSE(amx_tile_offered(f32, bind_shape(f32, "M=64,N=128,K=256"), amx_target()));
}

// An AMX point keeps its accumulator in a tile, copied whole for its reader, and reads back from
// its JSON; its lowered code is tdpbusd of K = 64 bytes (A 16 rows x 64 bytes, B 16 rows), which
// Halide's own lowering leaves at K = 4, on two accumulator tiles side by side.
TEST(AmxTile, PointSchedulesTheAccumulatorIntoATileOfFullDepth) {
    ComputeDef def = int8_matmul();
    BoundShape shape = bind_shape(def, "M=32,N=64,K=256");
    Target amx = amx_target();
    SchedulePoint p = heuristic_point(def, shape, amx);
    ASSERT_TRUE(p.amx_tile) << p.summary();
    EXPECT_EQ(SchedulePoint::from_json(p.to_json()), p);
    EXPECT_NE(p.summary().find(" amx"), std::string::npos);
    LoweredOp op = lower_for_point(def, shape, &p);
    std::string source = apply_schedule(op, p, amx).source();
    EXPECT_TRUE(op.amx_tile);
    EXPECT_NE(source.find("C_acc.compute_at(C, n__r).store_in(MemoryType::AMXTile);"),
              std::string::npos)
        << source;
    EXPECT_NE(source.find("Func C_acc_tile = C_acc.in();"), std::string::npos) << source;
    EXPECT_NE(source.find("C_acc.update().atomic().vectorize(kk);"), std::string::npos) << source;
    std::string stmt = lowered_text(def, shape, p, amx);
    EXPECT_NE(stmt.find("tile_matmul(16, 64, 64,"), std::string::npos) << stmt;
    EXPECT_NE(stmt.find("tile_load(16, 64, A,"), std::string::npos) << stmt;
    EXPECT_NE(stmt.find("tile_load(16, 64, B,"), std::string::npos) << stmt;
    EXPECT_EQ(stmt.find("tile_matmul(16, 64, 4,"), std::string::npos) << stmt;
    // Two neighbouring register tiles (n: 64 = 4 tiles of 16) summed in one loop, jam_amx_tiles.
    EXPECT_NE(stmt.find(".amx_0[ramp(0, 1, 256)] = (int32x256)tile_matmul(16, 64, 64,"),
              std::string::npos)
        << stmt;
    EXPECT_NE(stmt.find(".amx_1[ramp(0, 1, 256)] = (int32x256)tile_matmul(16, 64, 64,"),
              std::string::npos)
        << stmt;
    EXPECT_NE(stmt.find("n__r_jam, 0, 2)"), std::string::npos) << stmt;
    // A K whose groups are not a multiple of 16 widens by the largest power of two that divides.
    BoundShape k40 = bind_shape(def, "M=32,N=64,K=160");
    SchedulePoint q = heuristic_point(def, k40, amx);
    ASSERT_TRUE(q.amx_tile);
    EXPECT_NE(lowered_text(def, k40, q, amx).find("tile_matmul(16, 64, 32,"), std::string::npos);
}

namespace {

// The UserError of applying `p` to `def` at `shape` for `target` ("" when it applies).
std::string schedule_error(const ComputeDef &def, const BoundShape &shape, const SchedulePoint &p,
                           const Target &target) {
    LoweredOp op = lower_for_point(def, shape, &p);
    try {
        apply_schedule(op, p, target);
    } catch (const UserError &e) {
        return e.what();
    }
    return "";
}

} // namespace

// A point that is not an AMX tiling, or an AMX point for a target without amx_int8 (a winner tuned
// on an AMX host), is refused with the reason, not compiled into a wrong or unrunnable kernel.
TEST(AmxTile, PointsThatCannotBeTilesAreRefused) {
    ComputeDef def = int8_matmul();
    BoundShape shape = bind_shape(def, "M=32,N=64,K=256");
    SchedulePoint p = heuristic_point(def, shape, amx_target());
    Target vnni = amx_target();
    vnni.features = {"avx512_vnni", "avx512_bf16"};
    vnni.name = "spr-without-amx";
    EXPECT_EQ(schedule_error(def, shape, p, vnni),
              "schedule: amx_tile on target 'spr-without-amx', which has no amx_int8");
    p.axes[1].reg = 8;
    EXPECT_NE(schedule_error(def, shape, p, amx_target())
                  .find("amx_tile needs dot_product 4, a register tile of 16 x 16"),
              std::string::npos);
}

namespace {

// On this host: where it has amx_int8, the heuristic (AMX) kernel of `op_name` at `shape_text`
// runs (the permission granted) and equals the reference at every point; where it has not, its
// space offers no AMX point.
void check_host_amx_kernel(const std::string &op_name, const std::string &shape_text) {
    Target host = host_target();
    ComputeDef def = OpLibrary::standard().load(op_name);
    BoundShape shape = bind_shape(def, shape_text);
    SchedulePoint p = heuristic_point(def, shape, host);
    if (!host.has_feature("amx_int8")) {
        EXPECT_FALSE(p.amx_tile);
        EXPECT_EQ(make_tiling_rules(def, shape, host, 1).knobs.amx_tiles, std::vector<bool>{false});
        return;
    }
    ASSERT_TRUE(p.amx_tile) << p.summary();
    EXPECT_TRUE(request_amx_permission());
    Verification v = test::run_checked(def, shape, p, host, 7);
    EXPECT_TRUE(v.ok) << v.first_mismatch;
    EXPECT_EQ(v.points_checked, shape.elements(def.output().name));
    SchedulePoint packed = p;
    packed.packed = {"B"};
    v = test::run_checked(def, shape, packed, host, 8);
    EXPECT_TRUE(v.ok) << v.first_mismatch;
}

} // namespace

TEST(AmxTile, HostInt8MatmulOnTilesIsExact) {
    check_host_amx_kernel("matmul_u8s8", "M=48,N=96,K=320");
}

TEST(AmxTile, HostRequantMatmulOnTilesIsExact) {
    check_host_amx_kernel("matmul_u8s8_requant", "M=32,N=64,K=128");
}

// An AMX point's code row needs amx_int8 (so the loader refuses it on a host without AMX tiles and
// asks for the permission on one with them); the same tiling on vpdpbusd does not. The loader's
// check agrees with the CPU's flags.
TEST(AmxTile, CodeRowNeedsAmxInt8) {
    ComputeDef def = int8_matmul();
    BoundShape shape = bind_shape(def, "M=32,N=64,K=128");
    Target amx = amx_target();
    SchedulePoint p = heuristic_point(def, shape, amx);
    ASSERT_TRUE(p.amx_tile);
    const std::string features =
        compile_kernel_code(def, shape, p, amx, p.to_json().dump()).cpu_features;
    EXPECT_NE(features.find("avx512_sapphirerapids"), std::string::npos) << features;
    EXPECT_NE(features.find("amx_int8"), std::string::npos) << features;
    p.amx_tile = false;
    EXPECT_EQ(
        compile_kernel_code(def, shape, p, amx, p.to_json().dump()).cpu_features.find("amx_int8"),
        std::string::npos);
    EXPECT_EQ(db::missing_cpu_features("amx_int8").empty(),
              cpu_flag("amx_int8") && cpu_flag("amx_tile"));
}

// Random AMX points of the space (orders, tile orders, packing, parallel loops on two cores, the
// requantizing op's epilogue) each match the reference on a host with AMX; on one without, the
// host's space has none.
TEST(AmxTile, HostRandomAmxPointsMatchTheReference) {
    Target host = host_target();
    host.cores = std::max(host.cores, 2);
    for (const char *name : {"matmul_u8s8", "matmul_u8s8_requant"}) {
        ComputeDef def = OpLibrary::standard().load(name);
        BoundShape shape = bind_shape(def, "M=48,N=64,K=192");
        TilingRules rules = make_tiling_rules(def, shape, host, 2);
        int checked = 0;
        for (const SchedulePoint &p :
             sample_legal_points(rules, def, shape, host, 400, 11, 200000)) {
            if (!p.amx_tile || checked == 6)
                continue;
            ASSERT_TRUE(host.has_feature("amx_int8")) << p.summary();
            Verification v = test::run_checked(def, shape, p, host, 13);
            EXPECT_TRUE(v.ok) << name << " " << p.summary() << ": " << v.first_mismatch;
            checked++;
        }
        EXPECT_EQ(checked > 0, host.has_feature("amx_int8")) << name;
    }
}
