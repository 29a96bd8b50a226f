// ONNX files are untrusted input (docs/design.md §3.1): a truncated, cyclic, out-of-order, oversized or
// inconsistent model, a node missing an input and a convolution with stride 0 (on which libonnx's
// own shape inference divides by zero) each give `opgen compile` one clear error line naming the
// file and the problem, a non-zero exit and nothing written. The models come from
// tests/batch/make_faulty_models.py; the fuzz target tests/fuzz/onnx_model_fuzzer.cpp covers the
// rest of the input space (scripts/fuzz.sh SECONDS onnx).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "tests/batch/CommandRun.h"

namespace opgen::test {
namespace {

namespace fs = std::filesystem;

class ModelFileFaults : public ::testing::Test {
protected:
    static fs::path models;
    static void SetUpTestSuite() {
        models = fs::temp_directory_path() / ("opgen-faulty-models-" + std::to_string(::getpid()));
        std::string cmd = std::string(OPGEN_PYTHON3) + " '" + OPGEN_SOURCE_DIR +
                          "/tests/batch/make_faulty_models.py' '" + models.string() + "'";
        ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    }
    static void TearDownTestSuite() { fs::remove_all(models); }
};
fs::path ModelFileFaults::models;

TEST_F(ModelFileFaults, EachIsOneClearErrorAndNothingWritten) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"truncated", "not an ONNX model (protobuf parse failed)"},
        {"cyclic", "node '' (Relu) reads 'B', which no graph input, initializer or earlier node defines"},
        {"unordered", "node '' (Relu) reads 'T', which no graph input, initializer or earlier node defines"},
        {"oversized", "tensor 'X' has more than 2^40 elements"},
        {"inconsistent", "tensor 'W' has 216 elements, but its node makes kernel 0"},
        {"zero_stride", "node '' (Conv) has strides 0; strides must be positive"},
        {"missing_input", "node '' (MatMul) has 1 input(s); opset 13 allows 2 to 2"},
    };
    fs::path dir = models / "out";
    fs::create_directories(dir);
    for (const auto &[name, reason] : cases) {
        std::string model = (models / (name + ".onnx")).string();
        CommandRun run = run_opgen("compile '" + model + "' -o lib-" + name + " --no-tune", dir);
        EXPECT_NE(run.status, 0) << name;
        // One line, starting with the file and the reason.
        EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << name << ": " << run.err;
        EXPECT_EQ(run.err.rfind("error: model '" + model + "': " + reason, 0), 0u) << name << ": " << run.err;
        EXPECT_FALSE(fs::exists(dir / ("lib-" + name))) << name << " left a library folder";
    }
}

}  // namespace
}  // namespace opgen::test
