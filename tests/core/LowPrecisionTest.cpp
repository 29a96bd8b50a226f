// Low precision (docs/design.md §2.4): the u8, bf16 and i64 types, comparisons in their
// operands' type, host tensors of every type, the reference's exact integers, the cache key's
// dtype of a mixed-type op, and dot-product blocking: the legal space of an int8 matmul on a VNNI
// target offers the reduction in groups of 4 reduced inside the lanes, and the kernel it
// schedules is vpdpbusd code that matches the reference exactly.
#include "core/DotProduct.h"
#include "core/Kernel.h"
#include "core/OpLibrary.h"
#include "core/Parser.h"
#include "core/Reference.h"
#include "core/Schedule.h"
#include "core/StagePlacement.h"
#include "core/TilingRules.h"
#include "core/TilingSpace.h"
#include "tests/support/CheckedKernel.h"
#include "tests/support/PipelineText.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

using namespace opgen;

namespace {

ComputeDef int8_matmul() { return OpLibrary::standard().load("matmul_u8s8"); }

// The bundled AVX-512 target with the VNNI and BF16 features (a description, never compiled for).
Target vnni_target() {
    Target t = load_target("x86-64-avx512");
    t.features = {"avx512_vnni", "avx512_bf16"};
    return t;
}

// The host as a VNNI target: its AMX tiles left out, so that the int8 kernels take vpdpbusd
// (tests/core/AmxTileTest.cpp checks the AMX ones).
Target host_without_amx() {
    Target t = host_target();
    t.features.erase(std::remove(t.features.begin(), t.features.end(), "amx_int8"), t.features.end());
    return t;
}

// The Halide assembly of `point` scheduled on `op` for `target`.
std::string assembly_of(const ComputeDef &def, const BoundShape &shape, const SchedulePoint &point,
                        const Target &target) {
    LoweredOp op = lower_for_point(def, shape, &point);
    apply_schedule(op, point, target);
    return test::pipeline_text(op, target, test::PipelineText::Assembly);
}

}  // namespace

TEST(LowPrecision, TypesHaveNamesSizesAndCodes) {
    EXPECT_EQ(dtype_from_name("u8"), DType::U8);
    EXPECT_EQ(dtype_from_name("bf16"), DType::BF16);
    EXPECT_EQ(dtype_bytes(DType::U8), 1);
    EXPECT_EQ(dtype_bytes(DType::BF16), 2);
    EXPECT_TRUE(dtype_is_integer(DType::U8));
    EXPECT_FALSE(dtype_is_integer(DType::BF16));
    EXPECT_EQ(dtype_names_listed(), "f32, f16, i8, i32, u8, bf16 or i64");
}

TEST(LowPrecision, HostTensorsHoldEachTypeInItsOwnWidth) {
    HostTensor u = make_host_tensor(DType::U8, {2, 3});
    EXPECT_EQ(u.byte_size(), 6);
    u.set(4, 255);
    EXPECT_EQ(u.at(4), 255.0);
    HostTensor c = make_host_tensor(DType::I32, {1});
    c.set(0, -33423360);  // beyond float's 24 bits: kept exactly
    EXPECT_EQ(c.at(0), -33423360.0);
    HostTensor b = make_host_tensor(DType::BF16, {2});
    b.set(0, 1.00390625);  // halfway between 1 and 1 + 2^-7: ties to even
    b.set(1, 1.01171875);  // halfway between 1 + 2^-7 and 1 + 2^-6: ties to even
    EXPECT_EQ(b.at(0), 1.0);
    EXPECT_EQ(b.at(1), 1.015625);
    poison(c);
    EXPECT_EQ(c.at(0), -1515870811.0);
}

// A sum of u8 x s8 products beyond 2^24 is exact in the reference and compared exactly: one unit
// off is a wrong result.
TEST(LowPrecision, ReferenceSumsIntegersExactly) {
    ComputeDef def = int8_matmul();
    BoundShape shape = bind_shape(def, "M=1,N=1,K=1024");
    std::map<std::string, HostTensor> in{{"A", make_host_tensor(DType::U8, {1, 1024})},
                                         {"B", make_host_tensor(DType::I8, {256, 1, 4})}};
    for (int64_t i = 0; i < 1024; i++) {
        in["A"].set(i, 255);
        in["B"].set(i, -128);
    }
    ReferenceSample sample = reference_sample(def, shape, in);
    ASSERT_EQ(sample.want.size(), 1u);
    EXPECT_EQ(sample.want[0], -33423360.0);
    HostTensor out = make_host_tensor(DType::I32, {1, 1});
    out.set(0, -33423360);
    EXPECT_TRUE(check_output(sample, out).ok);
    out.set(0, -33423359);
    EXPECT_FALSE(check_output(sample, out).ok);
}

TEST(LowPrecision, RandomInputsCoverTheIntegerRanges) {
    ComputeDef def = int8_matmul();
    auto in = random_inputs(def, bind_shape(def, "M=16,N=64,K=64"), 3);
    ASSERT_EQ(in.at("A").dtype, DType::U8);
    ASSERT_EQ(in.at("B").dtype, DType::I8);
    double amax = 0, bmin = 0;
    for (int64_t i = 0; i < in.at("A").elements(); i++) amax = std::max(amax, in.at("A").at(i));
    for (int64_t i = 0; i < in.at("B").elements(); i++) bmin = std::min(bmin, in.at("B").at(i));
    EXPECT_GT(amax, 127);  // u8 values a signed byte could not hold
    EXPECT_LT(bmin, -64);
}

TEST(LowPrecision, KeyDtypeNamesEveryElementType) {
    EXPECT_EQ(op_dtype(int8_matmul()), "u8,i8->i32");
    EXPECT_EQ(op_dtype(OpLibrary::standard().load("matmul")), "f32");
    ComputeDef bf = OpLibrary::standard().load("matmul_bf16");
    EXPECT_EQ(op_dtype(bf), "bf16,bf16->f32");
    EXPECT_EQ(dot_product_group(bf, bind_shape(bf, "M=4,N=32,K=8"), vnni_target()), 2);
}

// The space of an int8 matmul on a VNNI target: the reduction in groups of 4 (kk: 4 steps, whole),
// reduced inside the lanes at every point.
TEST(LowPrecision, SpaceOffersDotProductBlockingOnVnni) {
    ComputeDef def = int8_matmul();
    BoundShape shape = bind_shape(def, "M=64,N=128,K=256");
    Target vnni = vnni_target();
    TilingRules rules = make_tiling_rules(def, shape, vnni, 1);
    EXPECT_EQ(rules.knobs.dot_product, 4);
    ASSERT_EQ(rules.reduce.size(), 2u);
    EXPECT_EQ(rules.reduce[0].var, "kk");
    EXPECT_EQ(rules.reduce[0].blocks, std::vector<int64_t>{4});
    std::vector<SchedulePoint> points = sample_legal_points(rules, def, shape, vnni, 50, 1, 5000);
    ASSERT_FALSE(points.empty());
    for (const SchedulePoint &p : points) EXPECT_EQ(p.dot_product, 4) << p.summary();
    // Without the feature, or for a float32 matmul, nothing changes.
    EXPECT_EQ(make_tiling_rules(def, shape, load_target("x86-64-avx512"), 1).knobs.dot_product, 0);
    ComputeDef f32 = OpLibrary::standard().load("matmul");
    EXPECT_EQ(make_tiling_rules(f32, bind_shape(f32, "M=64,N=128,K=256"), vnni, 1).knobs.dot_product, 0);
}

// A panel of the grouped operand keeps the group innermost (copied 4 x 16 lanes at a time), where
// a float32 B read across its rows would be re-laid with the vector axis innermost; on a VNNI host
// the kernel stays exact.
TEST(LowPrecision, PackedGroupedOperandKeepsItsLayout) {
    ComputeDef def = int8_matmul();
    BoundShape shape = bind_shape(def, "M=32,N=96,K=128");
    SchedulePoint p = heuristic_point(def, shape, vnni_target());
    p.packed = {"B"};
    LoweredOp op = lower_for_point(def, shape, &p);
    std::string source = apply_schedule(op, p, vnni_target()).source();
    EXPECT_NE(source.find(", 4).vectorize("), std::string::npos) << source;
    EXPECT_EQ(source.find("B_panel.reorder_storage"), std::string::npos) << source;
    Target host = host_target();
    if (!host.has_feature("avx512_vnni")) return;
    SchedulePoint hp = heuristic_point(def, shape, host);
    hp.packed = {"B"};
    Verification v = test::run_checked(def, shape, hp, host, 9);
    EXPECT_TRUE(v.ok) << v.first_mismatch;
}

TEST(LowPrecision, HeuristicPointReducesGroupsInLanes) {
    ComputeDef def = int8_matmul();
    BoundShape shape = bind_shape(def, "M=64,N=128,K=256");
    SchedulePoint p = heuristic_point(def, shape, vnni_target());
    EXPECT_EQ(p.dot_product, 4);
    EXPECT_TRUE(p.packed.empty());
    LoweredOp op = lower_for_point(def, shape, &p);
    std::string source = apply_schedule(op, p, vnni_target()).source();
    EXPECT_NE(source.find(".atomic().vectorize(kk)"), std::string::npos) << source;
    EXPECT_EQ(SchedulePoint::from_json(p.to_json()), p);
}

namespace {

// On a host with `feature`, the heuristic kernel of `op_name` at `shape_text` is `instruction` code
// with no AVX512-FP16 move, and matches the reference (exactly for an integer output) when JitKernel
// runs it.
void check_host_kernel(const std::string &op_name, const std::string &shape_text, const std::string &feature,
                       const std::string &instruction) {
    Target host = host_without_amx();
    if (!host.has_feature(feature)) GTEST_SKIP() << "host has no " << feature << " that Halide can emit";
    ComputeDef def = OpLibrary::standard().load(op_name);
    BoundShape shape = bind_shape(def, shape_text);
    SchedulePoint p = heuristic_point(def, shape, host);
    ASSERT_GT(p.dot_product, 0);
    const std::string assembly = assembly_of(def, shape, p, host);
    EXPECT_NE(assembly.find(instruction), std::string::npos) << instruction;
    // No AVX512-FP16 move (core/LlvmTarget.h): the code runs where BF16 comes without FP16.
    for (const char *fp16 : {"vmovw", "vmovsh"}) EXPECT_EQ(assembly.find(fp16), std::string::npos) << fp16;
    Verification v = test::run_checked(def, shape, p, host, 5);
    EXPECT_TRUE(v.ok) << v.first_mismatch;
    EXPECT_EQ(v.points_checked, shape.elements(def.output().name));
}

}  // namespace

TEST(LowPrecision, HostInt8KernelUsesVpdpbusdAndIsExact) {
    check_host_kernel("matmul_u8s8", "M=32,N=96,K=128", "avx512_vnni", "vpdpbusd");
}

TEST(LowPrecision, HostBf16KernelUsesVdpbf16ps) {
    check_host_kernel("matmul_bf16", "M=32,N=96,K=128", "avx512_bf16", "vdpbf16ps");
}

// A dot-product kernel (compiled through core/LlvmTarget.h, not Pipeline::realize) reports a
// runtime error with the runtime's own message, as realize does: here an output buffer smaller than
// the shape the kernel was compiled for.
TEST(LowPrecision, HostDotProductKernelRaisesTheRuntimesMessage) {
    Target host = host_without_amx();
    if (!host.has_feature("avx512_vnni")) GTEST_SKIP() << "host has no avx512_vnni that Halide can emit";
    ComputeDef def = OpLibrary::standard().load("matmul_u8s8");
    BoundShape shape = bind_shape(def, "M=32,N=96,K=128");
    SchedulePoint p = heuristic_point(def, shape, host);
    LoweredOp op = lower_for_point(def, shape, &p);
    apply_schedule(op, p, host);
    JitKernel kernel(op, host);
    auto inputs = random_inputs(def, shape, 3);
    HostTensor small = make_host_tensor(DType::I32, {16, 96});
    kernel.bind(inputs, small);
    try {
        kernel.run();
        FAIL() << "a 16-row output for a 32-row product ran";
    } catch (const Halide::RuntimeError &e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("buffer C"), std::string::npos) << message;
        EXPECT_EQ(message.find("Halide error"), std::string::npos) << message;
    }
}

// A comparison compares in its operands' type, not the statement's (docs/op-language.md): a u8
// truth value of float32 operands in (-1, 1) is their order, which u8 operands (both 0) would
// lose; the host kernel matches the reference exactly.
TEST(LowPrecision, ComparisonsCompareInTheOperandsType) {
    ComputeDef def = parse_compute("op less\nparam N\ninput A: f32[N]\ninput B: f32[N]\noutput Y: u8[N]\n"
                                   "Y[i] = select(A[i] < B[i], 1, 0)\n",
                                   "less.op");
    BoundShape shape = bind_shape(def, "N=64");
    std::map<std::string, HostTensor> in{{"A", make_host_tensor(DType::F32, {64})}, {"B", make_host_tensor(DType::F32, {64})}};
    for (int64_t i = 0; i < 64; i++) {
        in["A"].set(i, 0.01 * double(i % 7) - 0.03);
        in["B"].set(i, 0.01 * double(i % 5) - 0.02);
    }
    ReferenceSample sample = reference_sample(def, shape, in);
    ASSERT_EQ(sample.want.size(), 64u);
    for (int64_t i = 0; i < 64; i++) EXPECT_EQ(sample.want[size_t(i)], in["A"].at(i) < in["B"].at(i) ? 1.0 : 0.0) << i;
    Target host = host_target();
    Verification v = test::run_checked(def, shape, heuristic_point(def, shape, host), host, 3);
    EXPECT_TRUE(v.ok) << v.first_mismatch;
}

// i64 statements compute past 32 bits, in the kernel and the reference alike.
TEST(LowPrecision, Int64SumsPastThirtyTwoBits) {
    ComputeDef def = parse_compute("op wide\nparam N\ninput A: i64[N]\noutput Y: i64[N]\nY[i] = A[i] * 65536 * 65536 + A[i]\n",
                                   "wide.op");
    BoundShape shape = bind_shape(def, "N=32");
    std::map<std::string, HostTensor> in{{"A", make_host_tensor(DType::I64, {32})}};
    for (int64_t i = 0; i < 32; i++) in["A"].set(i, double(i - 16));
    ReferenceSample sample = reference_sample(def, shape, in);
    for (int64_t i = 0; i < 32; i++) EXPECT_EQ(sample.want[size_t(i)], double(i - 16) * 4294967297.0) << i;
    Target host = host_target();
    Verification v = test::run_checked(def, shape, heuristic_point(def, shape, host), host, 3);
    EXPECT_TRUE(v.ok) << v.first_mismatch;
}

// float32's largest value as ONNX exporters print it, shortest (3.4028235e+38, a little above
// FLT_MAX as a double), is a literal the language takes; 1e39 is not.
TEST(LowPrecision, TheLargestFloatPrintedShortestIsInRange) {
    EXPECT_NO_THROW(parse_compute("op m\nparam N\ninput X: f32[N]\noutput Y: f32[N]\nY[i] = X[i] * -3.4028235e+38\n", "m.op"));
    EXPECT_THROW(parse_compute("op m\nparam N\ninput X: f32[N]\noutput Y: f32[N]\nY[i] = X[i] * 1e39\n", "m.op"), UserError);
}

TEST(LowPrecision, HostInt8ConvKernelUsesVpdpbusdAndIsExact) {
    check_host_kernel("conv2d_nhwc_u8s8_requant", "N=1,H=9,W=10,C=32,F=64", "avx512_vnni",
                      "vpdpbusd");
    check_host_kernel("conv2d_nhwc_u8s8_requant", "N=1,H=7,W=7,C=64,F=64,KH=1,KW=1,pad=0",
                      "avx512_vnni", "vpdpbusd");
}

// A requantizing epilogue written over several statements (i32 sums -> i32 + bias -> f32 scaled
// and clamped -> u8) is the main reduction's epilogue: the space blocks the i32 sums as
// matmul_u8s8's (dot products, 16 i32 lanes rather than 64 u8 ones) and places none of the
// epilogue's statements, which are inlined into the output's tiles, with the sums computed per
// register tile there (the accumulator in registers): one pass over the output's memory.
TEST(LowPrecision, RequantEpilogueFusesIntoTheDotProductGemm) {
    ComputeDef def = OpLibrary::standard().load("matmul_u8s8_requant");
    BoundShape shape = bind_shape(def, "M=64,N=128,K=256");
    EXPECT_EQ(main_statement(def).tensor, "P");
    EXPECT_TRUE(main_is_fusable(def));
    std::vector<std::string> epilogue;
    for (const Statement *s : fused_epilogue(def))
        epilogue.push_back(s->tensor);
    std::sort(epilogue.begin(), epilogue.end());
    EXPECT_EQ(epilogue, (std::vector<std::string>{"Q", "S"}));
    EXPECT_TRUE(placeable_statements(def).empty());
    Target vnni = vnni_target();
    SchedulePoint p = heuristic_point(def, shape, vnni);
    EXPECT_EQ(p.dot_product, 4);
    EXPECT_EQ(p.vector_width, 16);
    EXPECT_TRUE(p.stages.empty());
    TilingRules rules = make_tiling_rules(def, shape, vnni, 1);
    EXPECT_EQ(rules.knobs.dot_product, 4);
    for (const SchedulePoint &q : sample_legal_points(rules, def, shape, vnni, 20, 1, 2000)) {
        EXPECT_EQ(q.dot_product, 4) << q.summary();
        EXPECT_TRUE(q.stages.empty()) << q.summary();
    }
    LoweredOp op = lower_for_point(def, shape, &p);
    std::string source = apply_schedule(op, p, vnni).source();
    EXPECT_NE(source.find("P_acc.compute_at(C, "), std::string::npos) << source;
    EXPECT_EQ(source.find("compute_root"), std::string::npos) << source;
    EXPECT_EQ(source.find("S."), std::string::npos) << source;
    EXPECT_EQ(source.find("Q."), std::string::npos) << source;
}

namespace {

// Inputs of matmul_u8s8_requant whose outputs mostly land inside 0..255: small A and B, a bias,
// scale 0.5 on even columns (an odd sum is then a tie, x.5) and 0.37 + n/1000 on odd ones.
std::map<std::string, HostTensor> in_range_requant_inputs(const ComputeDef &def,
                                                          const BoundShape &shape) {
    std::map<std::string, HostTensor> in = random_inputs(def, shape, 11);
    std::mt19937_64 rng(5);
    std::uniform_int_distribution<int> a(0, 3), b(-3, 3), bias(-40, 40);
    for (int64_t i = 0; i < in.at("A").elements(); i++)
        in.at("A").set(i, a(rng));
    for (int64_t i = 0; i < in.at("B").elements(); i++)
        in.at("B").set(i, b(rng));
    for (int64_t n = 0; n < in.at("bias").elements(); n++) {
        in.at("bias").set(n, bias(rng));
        in.at("scale").set(n, n % 2 == 0 ? 0.5 : 0.37 + 0.001 * double(n));
    }
    in.at("zp").set(0, 100);
    return in;
}

} // namespace

// The fused requantizing kernel on the host: vpdpbusd code, equal to the reference at every point,
// with outputs spread inside the range and ties (x.5) rounded to even, as the reference rounds.
TEST(LowPrecision, HostRequantKernelUsesVpdpbusdAndRoundsTiesToEven) {
    Target host = host_without_amx();
    if (!host.has_feature("avx512_vnni"))
        GTEST_SKIP() << "host has no avx512_vnni that Halide can emit";
    ComputeDef def = OpLibrary::standard().load("matmul_u8s8_requant");
    BoundShape shape = bind_shape(def, "M=32,N=96,K=128");
    SchedulePoint p = heuristic_point(def, shape, host);
    EXPECT_NE(assembly_of(def, shape, p, host).find("vpdpbusd"), std::string::npos);
    std::map<std::string, HostTensor> in = in_range_requant_inputs(def, shape);
    LoweredOp op = lower_for_point(def, shape, &p);
    apply_schedule(op, p, host);
    JitKernel kernel(op, host);
    HostTensor out = make_host_tensor(DType::U8, shape.dims.at("C"));
    poison(out);
    kernel.bind(in, out);
    kernel.run();
    Verification v = verify_output(def, shape, in, out, 0.0, shape.elements("C"));
    EXPECT_TRUE(v.ok) << v.first_mismatch;
    EXPECT_EQ(v.points_checked, shape.elements("C"));
    // The inputs test what they should: most outputs inside the range, and many ties, each of
    // which the kernel rounded to the even neighbour.
    ReferenceEvaluator ref(def, shape, in);
    int64_t inside = 0, ties = 0;
    for (int64_t m = 0; m < 32; m++) {
        for (int64_t n = 0; n < 96; n++) {
            const double c = out.at(m * 96 + n), s = ref.value("S", {m, n});
            inside += c > 0 && c < 255;
            if (n % 2 == 1 || std::fmod(std::fabs(s), 2.0) != 1.0 || c <= 0 || c >= 255)
                continue;
            ties++;
            EXPECT_EQ(std::fmod(c - 100, 2.0), 0.0) << "S=" << s << " gave " << c;
        }
    }
    EXPECT_GT(inside, 32 * 96 * 3 / 4);
    EXPECT_GT(ties, 200);
}
