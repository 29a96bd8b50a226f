// What the generic lowering (opgen/GenericCode.h) does beyond applying the schedule, read off the
// lowered statement of a softmax winner's generic kernel: the exponentials' buffer of a tile,
// whose size follows the symbolic row length, lives on the pseudostack (Stack memory of dynamic
// size: one allocation reused by every tile), and the kernel still matches the reference.
#include "opgen/GenericCode.h"
#include "opgen/Kernel.h"
#include "opgen/OpLibrary.h"
#include "opgen/Schedule.h"
#include "opgen/Shape.h"
#include "opgen/Target.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

using namespace opgen;

namespace {

// A tuned softmax winner of session 9's campaign (M=1024, N=256): the row maximum in 128 lanes,
// the exponentials and the row sum (32 lanes) computed per tile of 2 rows.
const char *kSoftmaxPoint = R"({"axes":[{"reg":64,"tile":256,"var":"n"},{"reg":1,"tile":2,"var":"m"}],
    "fast_math":true,"outer_order":["n","m"],"packed":[],"parallel_loops":0,"reduce":[],
    "stages":[{"at":"tile","lanes":128,"tensor":"rmax"},{"at":"tile","lanes":1,"tensor":"ex"},
    {"at":"tile","lanes":32,"tensor":"rsum"}],"unroll":true,"vector_width":16})";

// The lowered statement of the generic kernel, as Halide prints it.
std::string lowered_statement(LoweredOp &op, const Target &target) {
    namespace fs = std::filesystem;
    fs::path path = fs::temp_directory_path() / ("opgen-generic-stmt-" + std::to_string(::getpid()) + ".stmt");
    std::vector<Halide::Argument> args(op.params.begin(), op.params.end());
    Halide::Pipeline(op.output).compile_to_lowered_stmt(path.string(), args, Halide::Text,
                                                        halide_target_of(target).with_feature(Halide::Target::NoRuntime));
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    fs::remove(path);
    return text.str();
}

// Every "allocate <name>..." line of `stmt`.
std::vector<std::string> allocations_of(const std::string &stmt, const std::string &name) {
    std::vector<std::string> lines;
    std::istringstream in(stmt);
    for (std::string line; std::getline(in, line);) {
        if (line.find("allocate " + name) != std::string::npos) lines.push_back(line);
    }
    return lines;
}

TEST(GenericCode, TileBuffersOfDynamicSizeAreOnThePseudostack) {
    ComputeDef def = OpLibrary::standard().load("softmax");
    BoundShape shape = bind_shape(def, "M=1024,N=256");
    Target target = host_target();
    SchedulePoint p = SchedulePoint::from_json(nlohmann::json::parse(kSoftmaxPoint));
    std::string checked;
    LoweredOp op = checked_generic(def, shape, p, target, checked);
    std::vector<BoundShape> more = {bind_shape(def, "M=5,N=1000"), bind_shape(def, "M=300,N=17")};
    EXPECT_EQ(verify_generic(op, target, more), "");
    std::vector<std::string> ex = allocations_of(lowered_statement(op, target), "ex");
    ASSERT_FALSE(ex.empty());
    for (const std::string &line : ex) EXPECT_NE(line.find("in Stack"), std::string::npos) << line;
}

}  // namespace
