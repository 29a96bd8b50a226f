// `opgen compile` (the partitioning half) on models built at test time with Debian's
// python3-onnx (scripts/models/make_models.py: the small MobileNet-style net, resnet_tiny,
// bert_tiny; tests/batch/make_onnx_models.py for the error cases): which fused subgraphs each
// model becomes, bundled or generated ops, the folder it writes and that `opgen batch` reads, and
// the errors (unsupported operators with counts, dynamic dimensions, memory, a folder that is not
// ours), none of which leaves anything written. That the subgraphs compute the model is shown
// against ONNX Runtime by tests/models/ort_reference_test.py.
#include "onnx/Npy.h"
#include "tests/batch/CommandRun.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <unistd.h>

namespace fs = std::filesystem;
using nlohmann::json;
using opgen::test::CommandRun;
using opgen::test::run_opgen;
using opgen::test::slurp;

namespace {

// op -> number of kernels using it, from graph.json.
std::map<std::string, int> kernels_by_op(const json &graph) {
    std::map<std::string, int> out;
    for (const auto &k : graph["kernels"]) out[k["op"].get<std::string>()]++;
    return out;
}

// Every ONNX node is in exactly one kernel or is a view.
void expect_nodes_covered_once(const json &graph) {
    std::map<std::string, int> seen;
    for (const auto &k : graph["kernels"])
        for (const auto &n : k["nodes"]) seen[n.get<std::string>()]++;
    int views = graph["summary"]["views"].get<int>();
    EXPECT_EQ(int(seen.size()) + views, graph["summary"]["nodes"].get<int>());
    for (const auto &[node, count] : seen) EXPECT_EQ(count, 1) << node;
}

// Folders next to `dir` left by a write (DIR.tmp-PID, DIR.old-PID).
int leftovers(const fs::path &dir) {
    int n = 0;
    for (const auto &e : fs::directory_iterator(dir.parent_path()))
        if (e.path().filename().string().rfind(dir.filename().string() + ".", 0) == 0) n++;
    return n;
}

// Compares every expected/<output>.npy with got/<output>.npy within `relative` of each value (NaN
// where NaN is expected); returns how many outputs it compared.
int expect_outputs_match(const fs::path &expected, const fs::path &got_dir, double relative) {
    int compared = 0;
    for (const auto &e : fs::directory_iterator(expected)) {
        const std::string name = e.path().filename().string();
        opgen::HostTensor want = opgen::onnx_import::read_npy(e.path().string());
        opgen::HostTensor got = opgen::onnx_import::read_npy((got_dir / name).string());
        EXPECT_EQ(got.dims, want.dims) << name;
        if (got.dims != want.dims) continue;
        for (size_t i = 0; i < want.data.size(); i++) {
            if (std::isnan(want.data[i])) {  // a fractional power of a negative base
                EXPECT_TRUE(std::isnan(got.data[i])) << name << " element " << i;
                continue;
            }
            double tolerance = relative * std::max(1.0, std::fabs(double(want.data[i])));
            EXPECT_NEAR(got.data[i], want.data[i], tolerance) << name << " element " << i;
        }
        compared++;
    }
    return compared;
}

class Compile : public ::testing::Test {
protected:
    static fs::path models;
    static bool made;
    fs::path dir;
    static void SetUpTestSuite() {
        models = fs::temp_directory_path() / ("opgen-compile-models-" + std::to_string(::getpid()));
        std::string py = std::string(OPGEN_PYTHON3) + " '" + OPGEN_SOURCE_DIR;
        std::string cmd = py + "/scripts/models/make_models.py' '" + models.string() +
                          "' --only small,resnet_tiny,bert_tiny >/dev/null && " + py +
                          "/tests/batch/make_onnx_models.py' '" + models.string() + "'";
        made = std::system(cmd.c_str()) == 0;
        ASSERT_TRUE(made) << cmd;
    }
    static void TearDownTestSuite() { fs::remove_all(models); }
    // Every test fails, rather than being skipped, when the suite's models could not be made.
    void SetUp() override {
        ASSERT_TRUE(made) << "the suite's models were not made";
        dir = opgen::test::fresh_test_dir("opgen-compile");
    }
    void TearDown() override { fs::remove_all(dir); }

    CommandRun compile(const std::string &model, const std::string &flags = "") {
        return run_opgen("compile '" + (models / model).string() + "' -o out --partition-only " + flags, dir);
    }
};
fs::path Compile::models;
bool Compile::made = false;

}  // namespace

TEST_F(Compile, SmallNetFusesConvEpiloguesAndWritesATunableFolder) {
    CommandRun r = compile("small.onnx", "--nchw");
    ASSERT_EQ(r.status, 0) << r.err;
    json g = json::parse(slurp(dir / "out/graph.json"));
    EXPECT_EQ(kernels_by_op(g), (std::map<std::string, int>{{"conv2d_bias_relu", 4},
                                                            {"depthwise_conv2d_bias_relu", 3},
                                                            {"conv2d_bias_add", 1},
                                                            {"avg_pool2d", 1},
                                                            {"matmul_bias", 1},
                                                            {"softmax", 1}}));
    expect_nodes_covered_once(g);
    EXPECT_EQ(g["summary"]["views"], 1);  // the Flatten
    // The projection of the inverted residual: Conv + the residual Add, no ReLU.
    const json &proj = g["kernels"][7];
    EXPECT_EQ(proj["op"], "conv2d_bias_add");
    EXPECT_EQ(proj["onnx_ops"], json({"Conv", "Add"}));
    EXPECT_EQ(proj["shape"], "C=64,F=32,H=8,KH=1,KW=1,N=1,W=8,dilation=1,pad=0,stride=1");
    EXPECT_EQ(proj["op_file"], "ops/conv2d_bias_add.op");
    EXPECT_EQ(proj["args"]["R"], g["kernels"][4]["output"]);  // the block's input
    // Generated ops are kept as files; bundled ones are not copied.
    for (const char *op : {"conv2d_bias_add", "depthwise_conv2d_bias_relu", "matmul_bias"})
        EXPECT_TRUE(fs::exists(dir / "out/ops" / (std::string(op) + ".op"))) << op;
    EXPECT_FALSE(fs::exists(dir / "out/ops/conv2d_bias_relu.op"));
    std::string dw = slurp(dir / "out/ops/depthwise_conv2d_bias_relu.op");
    EXPECT_NE(dw.find("input  Wt: f32[C, 1, KH, KW]"), std::string::npos) << dw;
    EXPECT_NE(dw.find("Y[n, c, y, x] = max(Z[n, c, y, x] + bias[c], 0.0)"), std::string::npos) << dw;
    // The manifest is one `opgen batch` reads with the generated ops.
    json m = json::parse(slurp(dir / "out/manifest.json"));
    EXPECT_EQ(m["entries"].size(), 6u);
    CommandRun b = run_opgen("batch out/manifest.json --ops-dir out/ops --dry-run --threads 1", dir);
    ASSERT_EQ(b.status, 0) << b.err;
    EXPECT_NE(b.out.find("shard 0/1: 11 of 11 tasks (6 entries, 0 repeats dropped)"), std::string::npos) << b.out;
    EXPECT_NE(r.out.find("20 nodes -> 11 kernels (5 with generated ops, 3 distinct), 1 views"), std::string::npos)
        << r.out;
}

TEST_F(Compile, ResNetBlocksFuseTheResidualAddAndRelu) {
    CommandRun r = compile("resnet_tiny.onnx", "--nchw");
    ASSERT_EQ(r.status, 0) << r.err;
    json g = json::parse(slurp(dir / "out/graph.json"));
    EXPECT_EQ(kernels_by_op(g), (std::map<std::string, int>{{"conv2d_bias_relu", 7},
                                                            {"max_pool2d", 1},
                                                            {"conv2d_bias", 2},
                                                            {"conv2d_bias_add_relu", 3},
                                                            {"avg_pool2d", 1},
                                                            {"matmul_bias", 1}}));
    expect_nodes_covered_once(g);
    // v1.5: the stride is on the 3x3 conv and on the projection, not on the first 1x1.
    EXPECT_EQ(g["kernels"][7]["shape"], "C=16,F=16,H=8,KH=3,KW=3,N=1,W=8,dilation=1,pad=1,stride=2");
    EXPECT_EQ(g["kernels"][8]["shape"], "C=32,F=64,H=8,KH=1,KW=1,N=1,W=8,dilation=1,pad=0,stride=2");
    // A kernel runs after the kernels whose outputs it reads.
    std::map<std::string, size_t> produced;
    for (size_t i = 0; i < g["kernels"].size(); i++) {
        for (const auto &[op_tensor, tensor] : g["kernels"][i]["args"].items()) {
            if (produced.count(tensor)) {
                EXPECT_LT(produced[tensor], i) << op_tensor;
            }
        }
        produced[g["kernels"][i]["output"]] = i;
    }
    std::string op = slurp(dir / "out/ops/conv2d_bias_add_relu.op");
    EXPECT_NE(op.find("Y[n, f, y, x] = max(Z[n, f, y, x] + bias[f] + R[n, f, y, x], 0.0)"), std::string::npos) << op;
}

// The classifier's Gemm (transB = 1) reads its weight's transpose, laid out at compile time.
TEST_F(Compile, TheClassifierReadsItsWeightTransposed) {
    CommandRun r = compile("small.onnx", "--nchw");
    ASSERT_EQ(r.status, 0) << r.err;
    json g = json::parse(slurp(dir / "out/graph.json"));
    const json &fc = g["kernels"][g["kernels"].size() - 2];
    EXPECT_EQ(fc["op"], "matmul_bias");
    EXPECT_EQ(fc["shape"], "K=32,M=1,N=10");
    EXPECT_EQ(fc["args"]["B"], "fc_w@transpose");
    bool found = false;
    for (const auto &t : g["tensors"]) {
        if (t["name"] != "fc_w@transpose") continue;
        found = true;
        EXPECT_EQ(t["dims"], json({32, 10}));
        EXPECT_EQ(t["kind"], "weight");
        EXPECT_EQ(t["relaid_from"], json({{"tensor", "fc_w"}, {"layout", "transpose"}}));
    }
    EXPECT_TRUE(found);
    EXPECT_NE(slurp(dir / "out/ops/matmul_bias.op").find("input  B: f32[K, N]"), std::string::npos);
}

// By default convolutions keep their activations channel-blocked from one to the next: resnet_tiny
// needs no reorder; the small net reorders around its depthwise and 24-channel convolutions. (The
// 3 x 3s as direct convolutions; Winograd's kernels are the next test's.)
TEST_F(Compile, ConvolutionsKeepChannelBlockedActivations) {
    CommandRun r = compile("resnet_tiny.onnx", "--no-winograd");
    ASSERT_EQ(r.status, 0) << r.err;
    json g = json::parse(slurp(dir / "out/graph.json"));
    EXPECT_EQ(kernels_by_op(g), (std::map<std::string, int>{{"conv2d_bias_relu", 3},
                                                            {"max_pool2d", 1},
                                                            {"conv2d_nchw_nchwc_bias", 1},
                                                            {"conv2d_nchw_nchwc_bias_add_relu", 1},
                                                            {"conv2d_nchwc_bias_relu", 4},
                                                            {"conv2d_nchwc_bias", 1},
                                                            {"conv2d_nchwc_bias_add_relu", 2},
                                                            {"avg_pool2d_nchwc", 1},
                                                            {"matmul_bias", 1}}));
    expect_nodes_covered_once(g);
    std::string op = slurp(dir / "out/ops/conv2d_nchwc_bias_add_relu.op");
    EXPECT_NE(op.find("input  Wt: f32[FB, CB, KH, KW, cb, fb]"), std::string::npos) << op;
    EXPECT_NE(op.find("Y[n, fo, y, x, fi] = max(Z[n, fo, y, x, fi] + bias[fo, fi] + R[n, fo, y, x, fi], 0.0)"),
              std::string::npos)
        << op;
    int blocked = 0, relaid = 0;
    for (const auto &t : g["tensors"]) {
        if (t.value("layout", "") == "nChw16c") blocked++;
        if (t.contains("relaid_from") && t["relaid_from"]["layout"] == "OIhw16i16o") relaid++;
    }
    EXPECT_EQ(blocked, 9);  // the outputs of the 9 blocked convolutions (the global pool's 1 x 1 is NCHW)
    EXPECT_EQ(relaid, 7);
    r = compile("small.onnx");
    ASSERT_EQ(r.status, 0) << r.err;
    g = json::parse(slurp(dir / "out/graph.json"));
    EXPECT_EQ(kernels_by_op(g)["reorder_nchwc_nchw"], 2);
    EXPECT_EQ(kernels_by_op(g)["reorder_nchw_nchwc"], 1);
    expect_nodes_covered_once(g);
}

TEST_F(Compile, BertAttentionReadsThroughTransposesAndGeluFuses) {
    CommandRun r = compile("bert_tiny.onnx");
    ASSERT_EQ(r.status, 0) << r.err;
    json g = json::parse(slurp(dir / "out/graph.json"));
    EXPECT_EQ(kernels_by_op(g), (std::map<std::string, int>{{"layernorm_eps1em12", 5},
                                                            {"matmul_bias", 7},
                                                            {"batch_matmul_ta0213_tb0231_scale", 2},
                                                            {"softmax", 2},
                                                            {"batch_matmul_tb0213_to0213", 2},
                                                            {"matmul_bias_add", 4},
                                                            {"matmul_bias_gelu", 2},
                                                            {"slice_r3", 1},
                                                            {"matmul_bias_tanh", 1}}));
    expect_nodes_covered_once(g);
    EXPECT_EQ(g["summary"]["views"], 9);  // 4 Reshapes per layer and the pooler's
    // Scores: Q and K through their head transposes, scaled by 1/sqrt(16).
    std::string scores = slurp(dir / "out/ops/batch_matmul_ta0213_tb0231_scale.op");
    EXPECT_NE(scores.find("input  A: f32[B0, M, B1, K]\ninput  B: f32[B0, N, B1, K]"), std::string::npos) << scores;
    EXPECT_NE(scores.find("C[b0, b1, m, n] = (P[b0, b1, m, n]) * 0.25"), std::string::npos) << scores;
    std::string context = slurp(dir / "out/ops/batch_matmul_tb0213_to0213.op");
    EXPECT_NE(context.find("C[b0, m, b1, n] = sum(k: K) A[b0, b1, m, k] * B[b0, k, b1, n]"), std::string::npos)
        << context;
    // BERT's epsilon is not the bundled layernorm's 1e-5: a generated op carries it.
    EXPECT_NE(slurp(dir / "out/ops/layernorm_eps1em12.op").find("sqrt(variance[m] + 1e-12)"), std::string::npos);
    // The exact GELU's five ONNX nodes fold into the bundled matmul_bias_gelu.
    for (const auto &k : g["kernels"]) {
        if (k["op"] == "matmul_bias_gelu") {
            EXPECT_EQ(k["onnx_ops"], json({"MatMul", "Add", "Div", "Erf", "Add", "Mul", "Mul"}));
        }
    }
    CommandRun b = run_opgen("batch out/manifest.json --ops-dir out/ops --dry-run --threads 1", dir);
    ASSERT_EQ(b.status, 0) << b.err;
}

// By default a one-thread library runs a blocked stride-1 3 x 3 of one image as Winograd F(2x2, 3x3) (onnx/Winograd.h):
// input transform, 16 products, output transform with the epilogue; the partitioned model, evaluated
// by the reference interpreter, still computes numpy's output.
TEST_F(Compile, ThreeByThreeConvolutionsRunAsWinograd) {
    CommandRun r = compile("relu6.onnx", "--threads 1 --check-with '" + (models / "relu6.inputs").string() + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    json g = json::parse(slurp(dir / "out/graph.json"));
    EXPECT_EQ(kernels_by_op(g), (std::map<std::string, int>{{"batch_matmul", 1},
                                                            {"conv2d_nchwc_bias_relu6", 1},
                                                            {"depthwise_conv2d_bias_relu6", 1},
                                                            {"reorder_nchw_nchwc", 2},
                                                            {"reorder_nchwc_nchw", 2},
                                                            {"winograd_f23_in", 1},
                                                            {"winograd_f23_out_bias_relu6", 1}}));
    expect_nodes_covered_once(g);
}

// MobileNet's ReLU6 as exporters write it (Clip to [0, 6], the bounds as constant inputs) fuses into
// the convolution before it, blocked or depthwise, and the partitioned model, evaluated by the
// reference interpreter, computes numpy's output (both bounds clip on this input).
TEST_F(Compile, ClipToZeroSixFusesAsReLU6) {
    CommandRun r = compile("relu6.onnx", "--no-winograd --check-with '" + (models / "relu6.inputs").string() + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    json g = json::parse(slurp(dir / "out/graph.json"));
    EXPECT_EQ(kernels_by_op(g), (std::map<std::string, int>{{"conv2d_nchwc_bias_relu6", 2},
                                                            {"depthwise_conv2d_bias_relu6", 1},
                                                            {"reorder_nchw_nchwc", 2},
                                                            {"reorder_nchwc_nchw", 2}}));
    expect_nodes_covered_once(g);
    for (const auto &k : g["kernels"]) {
        if (k["op"].get<std::string>().find("relu6") == std::string::npos) continue;
        EXPECT_EQ(k["onnx_ops"], json({"Conv", "Clip"}));
    }
    std::string dw = slurp(dir / "out/ops/depthwise_conv2d_bias_relu6.op");
    EXPECT_NE(dw.find("Y[n, c, y, x] = min(max(Z[n, c, y, x] + bias[c], 0.0), 6.0)"), std::string::npos) << dw;
    opgen::HostTensor got = opgen::onnx_import::read_npy((dir / "out/check/y.npy").string());
    opgen::HostTensor want = opgen::onnx_import::read_npy((models / "relu6.expected/y.npy").string());
    ASSERT_EQ(got.dims, want.dims);
    int zeros = 0, sixes = 0;
    for (size_t i = 0; i < want.data.size(); i++) {
        EXPECT_NEAR(got.data[i], want.data[i], 1e-4) << "element " << i;
        zeros += want.data[i] == 0.0f;
        sixes += want.data[i] == 6.0f;
    }
    EXPECT_GT(zeros, 0);
    EXPECT_GT(sixes, 0);
}

// The activations exporters write (Clip with any constant bounds, LeakyRelu, Elu, Selu, Celu,
// HardSigmoid, HardSwish, Softplus, Softsign, Reciprocal, Pow by a constant) compile as generated
// elementwise ops with ONNX's formulas and attribute defaults; evaluated by the reference
// interpreter they give numpy's values on an input wide enough to take every branch.
TEST_F(Compile, ActivationsCompileWithOnnxFormulas) {
    CommandRun r = compile("activations.onnx", "--check-with '" + (models / "activations.inputs").string() + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    json g = json::parse(slurp(dir / "out/graph.json"));
    EXPECT_EQ(kernels_by_op(g), (std::map<std::string, int>{{"clip", 1},
                                                            {"clip_2", 1},
                                                            {"leaky_relu", 1},
                                                            {"elu", 1},
                                                            {"selu", 1},
                                                            {"celu", 1},
                                                            {"hard_sigmoid", 1},
                                                            {"hard_swish", 1},
                                                            {"softplus", 1},
                                                            {"softsign", 1},
                                                            {"reciprocal", 1},
                                                            {"pow", 1},
                                                            {"pow_2", 1},
                                                            {"pow_3", 1}}));
    expect_nodes_covered_once(g);
    EXPECT_EQ(expect_outputs_match(models / "activations.expected", dir / "out/check", 1e-5), 14);
}

// Add, Sub, Mul, Div, Max and Min whose operands broadcast by numpy's rules (a trailing row, a
// column, an axis stretched on both sides, a lower-rank operand on the left, weights) compile as
// one generated op per broadcast pattern and compute numpy's values.
TEST_F(Compile, BinaryNodesBroadcastAsNumpyDoes) {
    CommandRun r = compile("broadcast.onnx", "--check-with '" + (models / "broadcast.inputs").string() + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    json g = json::parse(slurp(dir / "out/graph.json"));
    EXPECT_EQ(kernels_by_op(g), (std::map<std::string, int>{{"add_bfff_11f", 1},
                                                            {"mul_bfff_1f1", 1},
                                                            {"div_bfff_1f1", 1},
                                                            {"sub_bf1f_fff", 1},
                                                            {"max_bfff_1f1", 1},
                                                            {"min_b1f1_fff", 1},
                                                            {"add_b1f1_f1f", 1}}));
    expect_nodes_covered_once(g);
    std::string min = slurp(dir / "out/ops/min_b1f1_fff.op");
    EXPECT_NE(min.find("input  A: f32[D1, 1]"), std::string::npos) << min;
    EXPECT_NE(min.find("C[i0, i1, i2] = min(A[i1, 0], B[i0, i1, i2])"), std::string::npos) << min;
    EXPECT_EQ(expect_outputs_match(models / "broadcast.expected", dir / "out/check", 1e-6), 7);
}

// Resize in nearest mode by whole factors (scales or sizes constant) is a copy over the output
// viewed as [D0, R0, D1, R1, ...]; the reference interpreter computes numpy's repeat exactly.
TEST_F(Compile, NearestResizeByWholeFactorsRepeatsEachElement) {
    CommandRun r = compile("resize.onnx", "--check-with '" + (models / "resize.inputs").string() + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    json g = json::parse(slurp(dir / "out/graph.json"));
    EXPECT_EQ(kernels_by_op(g), (std::map<std::string, int>{{"resize_nearest_kkrr", 2}}));
    EXPECT_EQ(expect_outputs_match(models / "resize.expected", dir / "out/check", 0.0), 2);
}

// ReduceSum (its axes an input), ReduceMean, ReduceMax, ReduceMin, ReduceSumSquare, ReduceL1 and
// ReduceL2 over single, several, negative and all axes, with and without keepdims, compute
// numpy's values.
TEST_F(Compile, ReductionsOverAnyAxesKeepingThemOrNot) {
    CommandRun r = compile("reductions.onnx", "--check-with '" + (models / "reductions.inputs").string() + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    json g = json::parse(slurp(dir / "out/graph.json"));
    EXPECT_EQ(kernels_by_op(g), (std::map<std::string, int>{{"reduce_mean_kkkr_keep", 1},
                                                            {"reduce_sum_krkr", 1},
                                                            {"reduce_max_rkrk_keep", 1},
                                                            {"reduce_min_krkk", 1},
                                                            {"reduce_sum_square_kkrr_keep", 1},
                                                            {"reduce_l1_rkkk", 1},
                                                            {"reduce_l2_kkkr", 1},
                                                            {"reduce_mean_rrrr_keep", 1}}));
    expect_nodes_covered_once(g);
    EXPECT_EQ(expect_outputs_match(models / "reductions.expected", dir / "out/check", 1e-5), 8);
}

TEST_F(Compile, UnsupportedOperatorsAreCountedInOneErrorAndNothingIsWritten) {
    CommandRun r = compile("refused.onnx");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "error: model '" + (models / "refused.onnx").string() +
                         "': 3 nodes cannot be compiled (the op language cannot express them yet): ConvTranspose x1 "
                         "(a stride above 1 over more than 1024 input positions), CumSum x2 (no opgen op)\n");
    EXPECT_FALSE(fs::exists(dir / "out"));
    EXPECT_EQ(leftovers(dir / "out"), 0);
}

TEST_F(Compile, InputsAndOutputsOfTypesNoKernelComputesAreRefusedInOneError) {
    CommandRun r = compile("double_io.onnx");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "error: model '" + (models / "double_io.onnx").string() +
                         "': input 'x' is double; a compiled model takes and gives float32, int32, int64, bool, "
                         "uint8 and int8 tensors only\n");
    EXPECT_FALSE(fs::exists(dir / "out"));
}

// int64 ids in, a bool mask out: the library takes and gives them as numpy lays them out, and
// `opgen run` reads and writes .npy files of those types (design §3.1).
TEST_F(Compile, IntegerAndBoolTensorsCrossTheLibrary) {
    CommandRun r = run_opgen("compile '" + (models / "integer_io.onnx").string() + "' -o out --no-tune --quiet", dir);
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string make = std::string(OPGEN_PYTHON3) + " -c \"import numpy as np; np.save('" + (dir / "ids.npy").string() +
                             "', np.array([3, -2, 0, 7], dtype=np.int64))\"";
    ASSERT_EQ(std::system(make.c_str()), 0);
    r = run_opgen("run out --input ids.npy --output mask.npy --iterations 1", dir);
    ASSERT_EQ(r.status, 0) << r.err;
    std::string mask = slurp(dir / "mask.npy");
    ASSERT_GE(mask.size(), 4u);
    EXPECT_NE(mask.find("'descr': '|b1'"), std::string::npos);
    EXPECT_EQ(mask.substr(mask.size() - 4), std::string("\x01\x00\x00\x01", 4));
    // A float32 file for the int64 input is refused, naming both.
    ASSERT_EQ(std::system((std::string(OPGEN_PYTHON3) + " -c \"import numpy as np; np.save('" + (dir / "f.npy").string() +
                           "', np.zeros(4, dtype=np.float32))\"").c_str()), 0);
    r = run_opgen("run out --input f.npy --iterations 1", dir);
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("expected int64 ('<i8') in C order for input 'ids'"), std::string::npos) << r.err;
}

// The reference check (--check-with) reads weights of every type: a constant bool condition.
TEST_F(Compile, ReferenceCheckReadsWeightsOfEveryType) {
    ASSERT_EQ(std::system((std::string(OPGEN_PYTHON3) + " -c \"import numpy as np, os; os.makedirs('" + (dir / "in").string() +
                           "'); np.save('" + (dir / "in/x.npy").string() + "', np.arange(4, dtype=np.float32))\"").c_str()),
              0);
    CommandRun r = compile("where_const.onnx", "--check-with in");
    ASSERT_EQ(r.status, 0) << r.err;
    opgen::HostTensor y = opgen::onnx_import::read_npy((dir / "out/check/y.npy").string());
    EXPECT_EQ(y.data, (std::vector<float>{0, -1, 2, -1}));
}

// An input that decides a shape is fixed at compile time: the library no longer takes it; a value
// for an input the model does not have, or of another type, is refused naming it.
TEST_F(Compile, FixedInputsBecomeConstants) {
    const std::string py = std::string(OPGEN_PYTHON3) + " -c \"import numpy as np; np.save('" + dir.string();
    ASSERT_EQ(std::system((py + "/shape.npy', np.array([3, 4], dtype=np.int64)); np.save('" + dir.string() +
                           "/shape32.npy', np.array([3, 4], dtype=np.int32))\"").c_str()), 0);
    const std::string model = "compile '" + (models / "reshape_input.onnx").string() + "' -o out --no-tune --quiet ";
    CommandRun r = run_opgen(model + "--fix-input nothere=shape.npy", dir);
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("--fix-input nothere: the model has no input 'nothere'"), std::string::npos) << r.err;
    r = run_opgen(model + "--fix-input shape=shape32.npy", dir);
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("--fix-input shape: the input has ONNX type 7, the value 6"), std::string::npos) << r.err;
    r = run_opgen(model + "--fix-input shape", dir);
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("expected NAME=FILE.npy"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "out"));
    r = run_opgen(model + "--fix-input shape=shape.npy", dir);
    ASSERT_EQ(r.status, 0) << r.err;
    std::string header = slurp(dir / "out/reshape_input.h");
    EXPECT_NE(header.find("#define reshape_input_INPUTS 1"), std::string::npos) << header;
    ASSERT_EQ(std::system((py + "/x.npy', (np.arange(12, dtype=np.float32) - 6).reshape(2, 6))\"").c_str()), 0);
    r = run_opgen("run out --input x.npy --output y.npy --iterations 1", dir);
    ASSERT_EQ(r.status, 0) << r.err;
    opgen::HostTensor y = opgen::onnx_import::read_npy((dir / "y.npy").string());
    EXPECT_EQ(y.dims, (std::vector<int64_t>{3, 4}));
    for (int64_t i = 0; i < 12; i++) EXPECT_EQ(y.data[size_t(i)], std::max(0.0f, float(i) - 6)) << i;
}

// Per-side pads and a grouped convolution take the general convolution (onnx/ops/Window.h); the
// others keep their tuned 2-D forms.
TEST_F(Compile, AsymmetricPadsAndGroupsTakeTheGeneralConvolution) {
    CommandRun r = compile("cnn.onnx", "--dim batch=1");
    ASSERT_EQ(r.status, 0) << r.err;
    json g = json::parse(slurp(dir / "out/graph.json"));
    EXPECT_EQ(kernels_by_op(g)["convolution_2d"], 2);
    std::string conv = slurp(dir / "out/ops/convolution_2d.op");
    EXPECT_NE(conv.find("input  Wt: f32[G, FG, CG, K0, K1]"), std::string::npos) << conv;
    expect_nodes_covered_once(g);
}

TEST_F(Compile, ElementwiseNodesTheLanguageExpressesCompile) {
    // transformer.onnx leaves an Erf and a Mul alone: a generated erf op and the bundled mul.
    CommandRun r = compile("transformer.onnx");
    ASSERT_EQ(r.status, 0) << r.err;
    json g = json::parse(slurp(dir / "out/graph.json"));
    EXPECT_EQ(kernels_by_op(g)["erf"], 1);
    EXPECT_EQ(kernels_by_op(g)["mul"], 1);
    EXPECT_EQ(kernels_by_op(g)["transpose_p0213"], 1);  // read by both operands: a copy, not absorbed
    EXPECT_NE(slurp(dir / "out/ops/erf.op").find("Y[m, n] = erf(X[m, n])"), std::string::npos);
}

TEST_F(Compile, DynamicDimensionsWithoutValueAreRefused) {
    CommandRun r = compile("cnn.onnx");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "error: model '" + (models / "cnn.onnx").string() +
                         "': dynamic dimensions without a value: batch (in 'x'); compiling needs static shapes: give "
                         "--dim batch=N\n");
    EXPECT_FALSE(fs::exists(dir / "out"));
}

// Only the input's symbolic dimension needs a value: the Shape -> Gather -> Concat sub-graph is
// folded into the Reshape's constant target, and the exporter's unk__ dimensions are inferred.
TEST_F(Compile, ShapeSubgraphsFoldAndOnlyInputDimensionsNeedValues) {
    CommandRun r = compile("exported_shapes.onnx", "--dim batch=3");
    ASSERT_EQ(r.status, 0) << r.err;
    json g = json::parse(slurp(dir / "out/graph.json"));
    EXPECT_EQ(kernels_by_op(g), (std::map<std::string, int>{{"relu", 1}}));
    EXPECT_EQ(g["summary"]["views"], 1);
    for (const json &t : g["tensors"]) {
        if (t["name"] == "y") {
            EXPECT_EQ(t["dims"], json::array({3, 32})) << t;
        }
    }
}

TEST_F(Compile, ModelLargerThanTheMemoryLimitIsRefusedFirst) {
    CommandRun r = compile("small.onnx", "--max-memory 100K");
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("its tensors need 0.3 MiB (weights 0.0 MiB, activations 0.2 MiB), more than the 0.1 MiB "
                         "allowed; refused before allocating"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(dir / "out"));
    r = compile("small.onnx", "--max-memory 1x");
    EXPECT_EQ(r.err, "error: --max-memory '1x': expected a positive size in bytes, optionally with K, M or G\n");
    EXPECT_EQ(compile("small.onnx", "--max-memory 1M").status, 0);
}

TEST_F(Compile, AFolderThatIsNotACompileOutputIsLeftAlone) {
    fs::create_directories(dir / "out");
    std::ofstream(dir / "out/notes.txt") << "mine";
    CommandRun r = compile("small.onnx");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "error: output 'out' exists and is not an earlier `opgen compile` output (no graph.json); remove "
                     "it or choose another folder\n");
    EXPECT_EQ(slurp(dir / "out/notes.txt"), "mine");
    // An earlier output is replaced whole: nothing of the old folder survives.
    fs::remove_all(dir / "out");
    ASSERT_EQ(compile("bert_tiny.onnx").status, 0);
    ASSERT_EQ(compile("small.onnx").status, 0);
    EXPECT_FALSE(fs::exists(dir / "out/ops/layernorm_eps1em12.op"));
    EXPECT_TRUE(fs::exists(dir / "out/ops/conv2d_nchwc_bias_add.op"));
    EXPECT_EQ(json::parse(slurp(dir / "out/graph.json"))["summary"]["nodes"], 20);
    EXPECT_EQ(leftovers(dir / "out"), 0);
}

TEST_F(Compile, CheckWithMissingOrWrongInputsIsOneErrorLine) {
    CommandRun r = compile("small.onnx", "--check-with nowhere");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "error: cannot read 'nowhere/input.npy'\n");
    EXPECT_FALSE(fs::exists(dir / "out"));
    // bert_tiny's inputs given to the small net: the file is there under another name.
    fs::create_directories(dir / "in");
    fs::copy_file(models / "bert_tiny.inputs/embeddings.npy", dir / "in/input.npy");
    r = compile("small.onnx", "--check-with in");
    EXPECT_EQ(r.err, "error: model '" + (models / "small.onnx").string() +
                         "': input 'input' has 1024 elements, the model 3072\n");
    EXPECT_FALSE(fs::exists(dir / "out"));
    r = compile("small.onnx", "--check-with '" + (models / "small.inputs").string() + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_TRUE(fs::exists(dir / "out/check/softmax_out.npy"));
    EXPECT_TRUE(fs::exists(dir / "out/check/fc_out.npy"));
}
