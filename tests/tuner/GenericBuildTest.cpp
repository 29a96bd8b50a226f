// Generic kernels built in a worker process of their own (codegen/GenericBuild.h): the worker's
// environment, a kernel checked and compiled there, and a failure reported with the worker's error.
#include "base/Error.h"
#include "core/OpLibrary.h"
#include "core/Schedule.h"
#include "codegen/GenericBuild.h"
#include "codegen/ObjectCompile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace opgen;

namespace {

std::vector<std::string> environment_of(std::vector<std::string> entries) {
    std::vector<char *> env;
    for (std::string &e : entries) env.push_back(e.data());
    env.push_back(nullptr);
    return generic_worker_environment(env.data());
}

size_t count_prefix(const std::vector<std::string> &env, const std::string &prefix) {
    size_t n = 0;
    for (const std::string &e : env) n += e.rfind(prefix, 0) == 0;
    return n;
}

}  // namespace

TEST(GenericBuild, WorkerEnvironmentTurnsTheSlpVectorizerOffAndKeepsTheRest) {
    std::vector<std::string> env = environment_of({"PATH=/bin", "HL_NUM_THREADS=1"});
    EXPECT_EQ(count_prefix(env, "PATH=/bin"), 1u);
    EXPECT_EQ(count_prefix(env, "HL_NUM_THREADS=1"), 1u);
    ASSERT_EQ(count_prefix(env, "HL_LLVM_ARGS="), 1u);
    EXPECT_NE(std::find(env.begin(), env.end(), "HL_LLVM_ARGS=-vectorize-slp=false"), env.end());

    // A caller's own LLVM options are kept, once, before the generic kernels' option.
    env = environment_of({"HL_LLVM_ARGS=-debug-pass=Structure", "HOME=/root"});
    ASSERT_EQ(count_prefix(env, "HL_LLVM_ARGS="), 1u);
    EXPECT_NE(std::find(env.begin(), env.end(), "HL_LLVM_ARGS=-debug-pass=Structure -vectorize-slp=false"), env.end());
    EXPECT_EQ(count_prefix(env, "HOME=/root"), 1u);

    // Given already (a worker started from a worker), not twice: LLVM refuses a repeated option.
    env = environment_of({"HL_LLVM_ARGS=-vectorize-slp=false"});
    EXPECT_NE(std::find(env.begin(), env.end(), "HL_LLVM_ARGS=-vectorize-slp=false"), env.end());
}

TEST(GenericBuild, BuildsCheckedCodeInAWorker) {
    ComputeDef def = OpLibrary::standard().load("matmul");
    BoundShape shape = bind_shape(def, "M=24,N=40,K=16");
    Target host = host_target();
    SchedulePoint point = heuristic_point(def, shape, host);
    point.parallel_loops = 0;
    std::string checked;
    db::KernelCode code = build_generic_code(def, shape, host, point.to_json().dump(), checked);
    EXPECT_TRUE(code.generic);
    EXPECT_FALSE(code.bytes.empty());
    EXPECT_EQ(code.size, int64_t(code.bytes.size()));
    EXPECT_FALSE(code.halide_target.empty());
    EXPECT_NE(code.halide_target.find("no_runtime"), std::string::npos);
    // Checked at several shapes (generic_check_shapes), one of them below every factor.
    EXPECT_NE(checked.find(';'), std::string::npos) << checked;
}

TEST(GenericBuild, ReportsTheWorkersErrorWhenTheScheduleDoesNotApply) {
    ComputeDef def = OpLibrary::standard().load("matmul");
    BoundShape shape = bind_shape(def, "M=24,N=40,K=16");
    SchedulePoint point = heuristic_point(def, shape, host_target());
    point.axes[0].var = "nosuchaxis";
    std::string checked;
    try {
        build_generic_code(def, shape, host_target(), point.to_json().dump(), checked);
        FAIL() << "a schedule naming an unknown axis was compiled";
    } catch (const UserError &e) {
        std::string what = e.what();
        EXPECT_NE(what.find("generic kernel"), std::string::npos) << what;
        EXPECT_NE(what.find("nosuchaxis"), std::string::npos) << what;
    }
}
