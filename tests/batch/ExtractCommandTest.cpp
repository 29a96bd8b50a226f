// `opgen extract` on small ONNX models built at test time with Debian's python3-onnx: shape
// inference, the mapping of each supported node to an opgen op at a concrete shape, the
// unsupported nodes with their reasons and counts, symbolic dimensions, and bad files.
#include "tests/batch/CommandRun.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using nlohmann::json;
using opgen::test::CommandRun;
using opgen::test::run_opgen;
using opgen::test::slurp;

namespace {

// The entries of a manifest as op -> shapes, in order.
std::vector<std::pair<std::string, std::vector<std::string>>> entries(const json &m) {
    std::vector<std::pair<std::string, std::vector<std::string>>> out;
    for (const auto &e : m["entries"]) out.emplace_back(e["op"], e["shapes"].get<std::vector<std::string>>());
    return out;
}

// onnx op + reason -> count
std::map<std::string, int> unsupported(const json &m) {
    std::map<std::string, int> out;
    for (const auto &u : m["source"]["unsupported"])
        out[u["onnx_op"].get<std::string>() + ": " + u["reason"].get<std::string>()] = u["count"].get<int>();
    return out;
}

class Extract : public ::testing::Test {
protected:
    static fs::path models;
    fs::path dir;
    static void SetUpTestSuite() {
        models = fs::temp_directory_path() / ("opgen-onnx-models-" + std::to_string(::getpid()));
        std::string cmd = std::string(OPGEN_PYTHON3) + " '" + OPGEN_SOURCE_DIR "/tests/batch/make_onnx_models.py' '" +
                          models.string() + "'";
        ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    }
    static void TearDownTestSuite() { fs::remove_all(models); }
    void SetUp() override { dir = opgen::test::fresh_test_dir("opgen-extract"); }
    void TearDown() override { fs::remove_all(dir); }
};
fs::path Extract::models;

}  // namespace

TEST_F(Extract, ConvNetMapsEveryKernelWithConcreteShapes) {
    CommandRun r = run_opgen("extract '" + (models / "cnn.onnx").string() + "' -o cnn.json --dim batch=1", dir);
    ASSERT_EQ(r.status, 0) << r.err;
    json m = json::parse(slurp(dir / "cnn.json"));
    using E = std::vector<std::pair<std::string, std::vector<std::string>>>;
    EXPECT_EQ(entries(m),
              (E{{"conv2d_nchw",
                  {"C=3,F=16,H=32,KH=3,KW=3,N=1,W=32,dilation=1,pad=1,stride=1",
                   "C=16,F=32,H=16,KH=3,KW=3,N=1,W=16,dilation=1,pad=1,stride=2"}},
                 {"relu", {"M=512,N=32"}},
                 {"max_pool2d", {"C=16,H=32,KH=2,KW=2,N=1,W=32,pad=0,stride=2"}},
                 {"depthwise_conv2d", {"C=16,H=16,KH=3,KW=3,N=1,W=16,dilation=1,pad=1,stride=1"}},
                 {"avg_pool2d", {"C=32,H=8,KH=8,KW=8,N=1,W=8,pad=0,stride=1"}},
                 {"matmul", {"K=32,M=1,N=10"}},
                 {"softmax", {"M=1,N=10"}}}));
    EXPECT_EQ(unsupported(m), (std::map<std::string, int>{
                                  {"Conv: different pads per axis or side [0,0,1,1] (opgen's op has one)", 1},
                                  {"Conv: grouped convolution (group 4)", 1},
                                  {"Flatten: no opgen op", 1}}));
    EXPECT_EQ(m["source"]["nodes"], 12);
    EXPECT_EQ(m["source"]["supported_nodes"], 9);
    EXPECT_EQ(m["entries"][1]["comment"], "from 2 Relu node(s), 1 distinct shape(s)");
    EXPECT_NE(r.out.find("12 nodes (opset 17); 9 supported -> cnn.json: 7 entries, 8 distinct shapes"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("unsupported:"), std::string::npos);
    // The manifest is one `opgen batch` reads as it is.
    CommandRun b = run_opgen("batch cnn.json --dry-run --threads 1", dir);
    ASSERT_EQ(b.status, 0) << b.err;
    EXPECT_NE(b.out.find("shard 0/1: 8 of 8 tasks (7 entries, 0 repeats dropped)"), std::string::npos) << b.out;
}

TEST_F(Extract, TransformerMatmulsNormsAndUnsupportedCounts) {
    CommandRun r = run_opgen("extract '" + (models / "transformer.onnx").string() + "' -o t.json", dir);
    ASSERT_EQ(r.status, 0) << r.err;
    json m = json::parse(slurp(dir / "t.json"));
    using E = std::vector<std::pair<std::string, std::vector<std::string>>>;
    EXPECT_EQ(entries(m), (E{{"matmul", {"K=16,M=8,N=32"}},
                             {"layernorm", {"M=8,N=32"}},
                             {"batch_matmul", {"BATCH=4,K=8,M=8,N=8"}},
                             {"softmax", {"M=32,N=8"}},
                             {"mul", {"M=32,N=8"}}}));
    EXPECT_EQ(unsupported(m), (std::map<std::string, int>{{"Add: broadcasting [1,8,32] and [32]", 1},
                                                          {"Erf: no opgen op", 1},
                                                          {"Reshape: no opgen op", 1},
                                                          {"Transpose: no opgen op", 1}}));
}

TEST_F(Extract, SymbolicDimensionWithoutValueIsNamed) {
    CommandRun r = run_opgen("extract '" + (models / "cnn.onnx").string() + "' -o cnn.json", dir);
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err.rfind("error: model '", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("no node maps to an opgen op"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("symbolic dimension 'batch' (give --dim batch=N)"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "cnn.json"));
}

TEST_F(Extract, BadFilesAreOneErrorLine) {
    std::ofstream(dir / "bad.onnx") << "this is not a protobuf \xff\xff\xff\xff";
    CommandRun r = run_opgen("extract bad.onnx -o m.json", dir);
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err.rfind("error: model 'bad.onnx': not an ONNX model", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(dir / "m.json"));
    r = run_opgen("extract missing.onnx -o m.json", dir);
    EXPECT_EQ(r.err, "error: cannot read model 'missing.onnx'\n");
    r = run_opgen("extract '" + (models / "transformer.onnx").string() + "' -o m.json --dim batch=0", dir);
    EXPECT_EQ(r.err, "error: --dim batch=0: a dimension must be positive\n");
}
