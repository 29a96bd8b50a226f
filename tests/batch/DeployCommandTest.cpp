// `opgen compile`'s deployable folder and `opgen run` on the small MobileNet-style net
// (kernels at Halide's heuristic points, --no-tune, so the suite stays quick): the files written,
// the memory plan reported, and the errors: a folder that is not a compiled model, inputs of the
// wrong shape or count, a missing input file, a corrupt weights file, and a library build that
// fails, which leaves nothing written (and an earlier compile intact). That the library computes
// the model is shown against ONNX Runtime by tests/models/deploy_test.py.
#include "tests/batch/CommandRun.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace fs = std::filesystem;
using nlohmann::json;
using opgen::test::CommandRun;
using opgen::test::run_in;
using opgen::test::run_opgen;
using opgen::test::slurp;

namespace {

class Deploy : public ::testing::Test {
protected:
    static fs::path suite;  // the models and one compiled folder, shared by the tests
    fs::path dir;
    static void SetUpTestSuite() {
        suite = fs::temp_directory_path() / ("opgen-deploy-" + std::to_string(::getpid()));
        fs::remove_all(suite);
        fs::create_directories(suite);
        std::string cmd = std::string(OPGEN_PYTHON3) + " '" + OPGEN_SOURCE_DIR +
                          "/scripts/models/make_models.py' '" + suite.string() +
                          "' --only small,bert_tiny >/dev/null";
        ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
        CommandRun r = run_opgen("compile small.onnx -o small.out --no-tune --threads 1 --db none.db", suite);
        ASSERT_EQ(r.status, 0) << r.err;
    }
    static void TearDownTestSuite() { fs::remove_all(suite); }
    void SetUp() override { dir = opgen::test::fresh_test_dir("opgen-deploy"); }
    void TearDown() override { fs::remove_all(dir); }

    static CommandRun run(const std::string &args) { return run_opgen("run small.out " + args, suite); }
};
fs::path Deploy::suite;

TEST_F(Deploy, TheFolderHoldsLibraryHeaderWeightsAndRunner) {
    for (const char *f : {"libsmall.a", "small.h", "small.weights", "small-runner", "src/small.c", "src/runner.c",
                          "deploy.json", "graph.json", "manifest.json"})
        EXPECT_TRUE(fs::exists(suite / "small.out" / f)) << f;
    std::string h = slurp(suite / "small.out/small.h");
    EXPECT_NE(h.find("int small_load(const char *weights_path);"), std::string::npos) << h;
    EXPECT_NE(h.find("int small_run(const void *const *inputs, void *const *outputs);"), std::string::npos) << h;
    json d = json::parse(slurp(suite / "small.out/deploy.json"));
    EXPECT_EQ(d["origins"], json({{"heuristic", 14}}));  // blocked: 3 reorders (ChannelBlocking.h)
    const json &mem = d["memory"];
    // Liveness lets intermediates share: the arena is smaller than the intermediates side by side.
    EXPECT_LT(mem["arena_bytes"].get<int64_t>(), mem["intermediate_bytes"].get<int64_t>());
    EXPECT_LT(mem["plan_bytes"].get<int64_t>(), mem["all_tensor_bytes"].get<int64_t>());
    // The weights file is the header and the weights kernels read.
    EXPECT_EQ(int64_t(fs::file_size(suite / "small.out/small.weights")), 64 + mem["weight_bytes"].get<int64_t>());
}

TEST_F(Deploy, RunLoadsChecksRunsAndTimes) {
    CommandRun r = run("--input small.inputs/input.npy --output " + (dir / "fc.npy").string() + " --output " +
                       (dir / "softmax.npy").string() + " --iterations 5 --threads 1 --profile");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.out.find("latency: p50 "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" over 5 runs, threads 1"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("peak RSS: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("profile: 14 kernels"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("13: softmax M=1,N=10"), std::string::npos) << r.out;
    std::string npy = slurp(dir / "softmax.npy");
    ASSERT_EQ(npy.size(), 128u + 10 * 4);
    EXPECT_NE(npy.find("'shape': (1, 10,)"), std::string::npos) << npy.substr(0, 128);
}

TEST_F(Deploy, BadInputsAreOneErrorLine) {
    CommandRun r = run("--input bert_tiny.inputs/embeddings.npy");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "error: input 'bert_tiny.inputs/embeddings.npy': its shape (1, 16, 64) differs from input "
                     "'input' (1, 3, 32, 32)\n");
    r = run("--input nowhere.npy");
    EXPECT_EQ(r.err, "error: input 'nowhere.npy': cannot open\n");
    r = run("--input small.inputs/input.npy --input small.inputs/input.npy");
    EXPECT_EQ(r.err, "error: --input: the model has 1 input(s)\n");
    r = run("--input small.onnx");
    EXPECT_EQ(r.err, "error: input 'small.onnx': not a .npy file\n");
    r = run_opgen("run small.inputs --input small.inputs/input.npy", suite);
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "error: 'small.inputs' is not a compiled model folder (no deploy.json); run `opgen compile "
                     "MODEL.onnx -o small.inputs` first\n");
}

TEST_F(Deploy, ACorruptWeightsFileIsRefused) {
    fs::copy(suite / "small.out", dir / "small.out", fs::copy_options::recursive);
    {
        std::fstream w(dir / "small.out/small.weights", std::ios::in | std::ios::out | std::ios::binary);
        w.seekp(100);
        w.put('\x7f');
    }
    fs::copy(suite / "small.inputs", dir / "small.inputs", fs::copy_options::recursive);
    CommandRun r = run_opgen("run small.out --input small.inputs/input.npy", dir);
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err, "error: the weights file is truncated or corrupt: small.out/small.weights (0)\n");
    fs::resize_file(dir / "small.out/small.weights", 32);
    r = run_opgen("run small.out --input small.inputs/input.npy", dir);
    EXPECT_NE(r.err.find("error: not this model's weights file: small.out/small.weights"), std::string::npos) << r.err;
}

TEST_F(Deploy, AFailedLibraryBuildLeavesNothingWritten) {
    std::string model = (suite / "small.onnx").string();
    CommandRun r = run_in(dir, "OPGEN_CC=false '" + std::string(OPGEN_EXE) + "' compile '" + model +
                                   "' -o out --no-tune --db none.db");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("false"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "out"));
    // A compile worker that fails: the error names the kernel, and again nothing is written.
    r = run_in(dir, "OPGEN_WORKER=/bin/false '" + std::string(OPGEN_EXE) + "' compile '" + model +
                        "' -o out --no-tune --db none.db");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(r.err.rfind("error: compiling ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(" failed: "), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir / "out"));
    // An earlier compile stays as it was.
    ASSERT_EQ(run_opgen("compile '" + model + "' -o out --partition-only", dir).status, 0);
    std::string graph = slurp(dir / "out/graph.json");
    r = run_in(dir, "OPGEN_CC=false '" + std::string(OPGEN_EXE) + "' compile '" + model +
                        "' -o out --no-tune --db none.db");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(slurp(dir / "out/graph.json"), graph);
    EXPECT_FALSE(fs::exists(dir / "out/deploy.json"));
    int entries = 0;
    for (const auto &e : fs::directory_iterator(dir)) entries += e.path().filename().string().rfind("out", 0) == 0;
    EXPECT_EQ(entries, 1);  // no out.tmp-PID left
}

}  // namespace
