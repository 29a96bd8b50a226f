// What the generic lowering (codegen/GenericCode.h) does beyond applying the schedule, read off the
// lowered statement of a softmax winner's generic kernel: the exponentials' buffer of a tile,
// whose size follows the symbolic row length, lives on the pseudostack (Stack memory of dynamic
// size: one allocation reused by every tile), and the kernel still matches the reference.
#include "codegen/GenericCode.h"
#include "core/Kernel.h"
#include "core/OpLibrary.h"
#include "core/Schedule.h"
#include "core/Shape.h"
#include "core/Target.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
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

// A tuned softmax winner at M=37, N=4096 (an Intel Xeon host): the whole row
// (n:4096) as the cache tile, 32-wide register tiles, the row stages in the tile.
const char *kWholeRowPoint = R"({"axes":[{"reg":32,"tile":4096,"var":"n"},{"reg":1,"tile":1,"var":"m"}],
    "fast_math":true,"outer_order":["n","m"],"packed":[],"parallel_loops":0,"reduce":[],
    "stages":[{"at":"tile","lanes":128,"tensor":"rmax"},{"at":"tile","lanes":1,"tensor":"ex"},
    {"at":"tile","lanes":128,"tensor":"rsum"}],"unroll":true,"vector_width":16})";

// The lowered statement of the generic kernel, as Halide prints it: for `feature` NoRuntime the
// pipeline build_kernel_code compiles (the cached code), for JIT the one the lookup's timings run.
std::string lowered_statement(LoweredOp &op, const Target &target,
                              Halide::Target::Feature feature = Halide::Target::NoRuntime) {
    namespace fs = std::filesystem;
    fs::path path = fs::temp_directory_path() / ("opgen-generic-stmt-" + std::to_string(::getpid()) + ".stmt");
    std::vector<Halide::Argument> args(op.params.begin(), op.params.end());
    Halide::Pipeline(op.output).compile_to_lowered_stmt(path.string(), args, Halide::Text,
                                                        halide_target_of(target).with_feature(feature));
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

// The statement with Halide's unique-name numbers ("t3219", "ex$5", "Y_5", "rmax_acc_1_intm") and
// the module line (which names the target) left out, line by line.
std::vector<std::string> without_unique_numbers(std::string stmt) {
    std::replace(stmt.begin(), stmt.end(), '$', '_');
    stmt = std::regex_replace(stmt, std::regex("\\bt[0-9]+\\b"), "t#");
    stmt = std::regex_replace(stmt, std::regex("_[0-9]+"), "");
    std::vector<std::string> lines;
    std::istringstream in(stmt);
    std::string line;
    std::getline(in, line);  // "module name=..., target=..."
    while (std::getline(in, line)) lines.push_back(line);
    return lines;
}

// The extents of the output's loops over register tiles of n ("Y$5.s0.n.n__t.n__r..."), in order.
std::vector<std::string> register_loop_extents(const std::string &stmt) {
    std::vector<std::string> extents;
    std::regex loop(R"(for \(Y\$[0-9]+\.s0\.n\.n__t\.n__r[^,]*, 0, ([^)]*)\) \{)");
    for (std::sregex_iterator it(stmt.begin(), stmt.end(), loop), end; it != end; ++it) extents.push_back((*it)[1]);
    return extents;
}

// A softmax row tile wider than the row (n:4096 from N=4096, served at N=1000): in every case where
// the row may be narrower than the tile, the tile is min(4096, N), so the guarded loop over the
// register tiles stops at the row's end. Before, it ran to the tile's 128 register tiles with every
// lane masked off past N, its loads and stores reaching up to a tile past each row: the cached code
// ran 5x slower than its JIT timing where that memory was unmapped. The JIT pipeline the lookup
// ranks by and the AOT pipeline the cache serves lower to one statement, and it computes softmax.
TEST(GenericCode, AWholeRowTileStopsAtTheEndOfANarrowerRow) {
    ComputeDef def = OpLibrary::standard().load("softmax");
    BoundShape shape = bind_shape(def, "M=37,N=4096");
    Target target = host_target();
    SchedulePoint p = SchedulePoint::from_json(nlohmann::json::parse(kWholeRowPoint));
    LoweredOp op = lower_generic(def, shape, p, target);

    // The schedule: the all-covered case (N >= 4096) keeps the constant tile, the guarded case not.
    auto tile_of_n = [](const Halide::Internal::Definition &d) {
        for (const Halide::Internal::Split &s : d.schedule().splits()) {
            if (s.is_split() && s.old_var == "n") return s.factor;
        }
        return Halide::Expr();
    };
    const Halide::Internal::Definition &guarded = op.output.function().definition();
    ASSERT_EQ(guarded.specializations().size(), 1u);
    const int64_t *covered = Halide::Internal::as_const_int(tile_of_n(guarded.specializations()[0].definition));
    ASSERT_NE(covered, nullptr);
    EXPECT_EQ(*covered, 4096);
    Halide::Expr clamped = tile_of_n(guarded);
    ASSERT_TRUE(clamped.defined());
    EXPECT_EQ(Halide::Internal::as_const_int(clamped), nullptr) << clamped;

    // The lowering: one loop over 128 register tiles (the all-covered case); none of the guarded
    // case's loops counts to the tile's end.
    std::string aot = lowered_statement(op, target);
    std::vector<std::string> extents = register_loop_extents(aot);
    ASSERT_GE(extents.size(), 2u);
    EXPECT_EQ(extents[0], "128");
    for (size_t i = 1; i < extents.size(); i++) EXPECT_EQ(extents[i].find("128"), std::string::npos) << extents[i];

    // The JIT pipeline (the lookup's timings) and the cached code's are the same statement.
    std::vector<std::string> jit_lines = without_unique_numbers(lowered_statement(op, target, Halide::Target::JIT));
    std::vector<std::string> aot_lines = without_unique_numbers(aot);
    ASSERT_EQ(jit_lines.size(), aot_lines.size());
    for (size_t i = 0; i < aot_lines.size(); i++) ASSERT_EQ(jit_lines[i], aot_lines[i]) << "line " << i + 2;

    std::vector<BoundShape> narrow = {bind_shape(def, "M=3,N=1000"), bind_shape(def, "M=2,N=17"),
                                      bind_shape(def, "M=1,N=4100")};
    EXPECT_EQ(verify_generic(op, target, narrow), "");
}

// Session 14's conv2d_nchw winner at N=1, C=32, H=W=40, F=48 (24 trials): channel vectors (f), the
// whole plane as the cache tile, 8x2 pixels a register tile, the weights packed, the input not.
const char *kConvPoint = R"({"axes":[{"reg":8,"tile":40,"var":"x"},{"reg":2,"tile":40,"var":"y"},
    {"reg":16,"tile":48,"var":"f"},{"reg":1,"tile":1,"var":"n"}],"outer_order":["f","x","y","n"],
    "packed":["Wt"],"parallel_loops":0,"reduce":[{"block":3,"var":"rx"},{"block":3,"var":"ry"},
    {"block":16,"var":"c"}],"unroll":true,"vector_axis":2,"vector_width":16})";

// The lines of `stmt` that update the accumulator Y_acc and choose a value by select (a load
// through the zero border, decided at each read).
std::vector<std::string> selecting_accumulator_updates(const std::string &stmt) {
    std::vector<std::string> lines;
    std::istringstream in(stmt);
    for (std::string line; std::getline(in, line);) {
        size_t start = line.find_first_not_of(' ');
        if (start != std::string::npos && line.compare(start, 6, "Y_acc$") == 0 &&
            line.find("select(") != std::string::npos)
            lines.push_back(line);
    }
    return lines;
}

// A convolution that reads its input past the edges (pad 1): the generic kernel packs the input
// with its zero border at the cache tile, though the tuned point did not, so no read of the
// reduction decides on the border (with symbolic sizes Halide partitions the tile loops, not the
// window's, and every read of a plane that one tile spans went through a select: 1.79x the exact
// kernel at the tuned shape). Where the padding is 0, or the point packs the input already, the
// point is unchanged. The kernel computes the convolution.
TEST(GenericCode, AZeroPaddedInputIsReadFromAPanelWithItsBorder) {
    ComputeDef def = OpLibrary::standard().load("conv2d_nchw");
    Target target = host_target();
    SchedulePoint p = SchedulePoint::from_json(nlohmann::json::parse(kConvPoint));
    BoundShape padded = bind_shape(def, "N=1,C=32,H=40,W=40,F=48");
    EXPECT_EQ(generic_point(def, padded, p).packed, (std::vector<std::string>{"Wt", "X"}));
    EXPECT_EQ(generic_point(def, bind_shape(def, "N=1,C=32,H=42,W=42,F=48,pad=0"), p).packed,
              std::vector<std::string>{"Wt"});
    SchedulePoint both = p;
    both.packed = {"X", "Wt"};
    EXPECT_EQ(generic_point(def, padded, both).packed, both.packed);

    LoweredOp op = lower_generic(def, padded, p, target);
    std::vector<std::string> selecting = selecting_accumulator_updates(lowered_statement(op, target));
    EXPECT_TRUE(selecting.empty()) << selecting.size() << " updates, the first: " << (selecting.empty() ? "" : selecting.front());
    std::vector<BoundShape> shapes = {bind_shape(def, "N=1,C=32,H=40,W=40,F=48"),
                                      bind_shape(def, "N=2,C=5,H=9,W=43,F=50")};
    EXPECT_EQ(verify_generic(op, target, shapes), "");
}

// Session 14's conv2d_nchw winner at N=1, C=16, H=W=14, F=32: channel vectors (f), the input and
// the weights packed, the whole plane and all 32 channels one cache tile, 7x2 pixels by one vector
// of channels a register tile.
const char *kAllChannelsPoint = R"({"axes":[{"reg":7,"tile":14,"var":"x"},{"reg":2,"tile":14,"var":"y"},
    {"reg":16,"tile":32,"var":"f"},{"reg":1,"tile":1,"var":"n"}],"outer_order":["x","f","y","n"],
    "packed":["X","Wt"],"parallel_loops":0,"reduce":[{"block":3,"var":"rx"},{"block":3,"var":"ry"},
    {"block":16,"var":"c"}],"unroll":true,"vector_axis":2,"vector_width":16})";

// The point's tile of f is every channel (32 = F), so the generic tile of f is F and the weights'
// panel, laid out [c][ry][rx][f], would span all F channels: every stride but f's a multiple of
// the symbolic F, one address register per weight of the window in the update (9 of them, with
// spills: 1.56x the exact kernel). Computed at f's register loop instead, its f extent is the
// register tile's 16, and its strides are constants. The kernel computes the convolution.
TEST(GenericCode, AChannelPanelOverEveryChannelIsBoundedToItsRegisterBlock) {
    ComputeDef def = OpLibrary::standard().load("conv2d_nchw");
    Target target = host_target();
    SchedulePoint p = SchedulePoint::from_json(nlohmann::json::parse(kAllChannelsPoint));
    LoweredOp op = lower_generic(def, bind_shape(def, "N=1,C=16,H=14,W=14,F=32"), p, target);
    std::vector<std::string> panels = allocations_of(lowered_statement(op, target), "Wt_in");
    ASSERT_FALSE(panels.empty());
    for (const std::string &a : panels) {
        EXPECT_EQ(a.find("Wt.extent"), std::string::npos) << a;
        EXPECT_NE(a.find("* 16]"), std::string::npos) << a;
    }
    std::vector<BoundShape> shapes = {bind_shape(def, "N=1,C=16,H=14,W=14,F=32"),
                                      bind_shape(def, "N=2,C=5,H=9,W=11,F=50"),
                                      bind_shape(def, "N=1,C=3,H=4,W=3,F=7")};
    EXPECT_EQ(verify_generic(op, target, shapes), "");
}

// Session 14's winners at N=4, C=16, H=W=16, F=16 (pixel vectors, the input packed per 4 rows,
// whole rows: x's tile is W) and at N=1, C=16, H=W=56, F=24 (the input packed per 32 pixels of a
// row).
const char *kWholeRowsPoint = R"({"axes":[{"reg":16,"tile":16,"var":"x"},{"reg":4,"tile":4,"var":"y"},
    {"reg":4,"tile":16,"var":"f"},{"reg":1,"tile":2,"var":"n"}],"outer_order":["y","f","x","n"],
    "packed":["X"],"parallel_loops":0,"prefetch":4,"reduce":[{"block":3,"var":"rx"},{"block":3,"var":"ry"},
    {"block":16,"var":"c"}],"unroll":true,"vector_width":16})";
const char *kPartRowsPoint = R"({"axes":[{"reg":32,"tile":32,"var":"x"},{"reg":2,"tile":4,"var":"y"},
    {"reg":4,"tile":24,"var":"f"},{"reg":1,"tile":1,"var":"n"}],"outer_order":["x","y","f","n"],
    "packed":["X"],"parallel_loops":0,"reduce":[{"block":3,"var":"rx"},{"block":3,"var":"ry"},
    {"block":16,"var":"c"}],"unroll":true,"vector_width":16})";

// Loads of the input X through clamped vector indices (a gather, lane by lane).
std::vector<std::string> clamped_input_loads(const std::string &stmt) {
    std::vector<std::string> lines;
    std::istringstream in(stmt);
    std::regex clamped(R"(X\[(max|min)\((min\()?ramp)");
    for (std::string line; std::getline(in, line);) {
        if (std::regex_search(line, clamped)) lines.push_back(line);
    }
    return lines;
}

// The padded input's panel of whole rows is zeros and then the rows' interior, copied with dense
// loads of X: no clamped vector index (a gather per border vector of the constant exterior's copy,
// 36% of the kernel's time at 16 x 16). A panel of part of a row keeps the exterior's copy (an
// interior copy over whole rows would fill more than the panel holds). Both kernels compute the
// convolution, at shapes with rows narrower and wider than a vector.
TEST(GenericCode, APaddedPanelOfWholeRowsIsFilledWithoutClampedLoads) {
    ComputeDef def = OpLibrary::standard().load("conv2d_nchw");
    Target target = host_target();
    std::vector<BoundShape> shapes = {bind_shape(def, "N=4,C=16,H=16,W=16,F=16"),
                                      bind_shape(def, "N=1,C=3,H=5,W=7,F=5"),
                                      bind_shape(def, "N=2,C=17,H=6,W=37,F=16")};

    SchedulePoint whole = SchedulePoint::from_json(nlohmann::json::parse(kWholeRowsPoint));
    LoweredOp op = lower_generic(def, bind_shape(def, "N=4,C=16,H=16,W=16,F=16"), whole, target);
    std::string stmt = lowered_statement(op, target);
    std::vector<std::string> panels = allocations_of(stmt, "constant_exterior");
    ASSERT_FALSE(panels.empty());
    for (const std::string &a : panels) EXPECT_NE(a.find("_filled["), std::string::npos) << a;
    std::vector<std::string> clamped = clamped_input_loads(stmt);
    EXPECT_TRUE(clamped.empty()) << clamped.size() << " loads, the first: " << (clamped.empty() ? "" : clamped.front());
    EXPECT_EQ(verify_generic(op, target, shapes), "");

    SchedulePoint part = SchedulePoint::from_json(nlohmann::json::parse(kPartRowsPoint));
    LoweredOp part_op = lower_generic(def, bind_shape(def, "N=1,C=16,H=56,W=56,F=24"), part, target);
    std::string part_stmt = lowered_statement(part_op, target);
    EXPECT_FALSE(allocations_of(part_stmt, "constant_exterior").empty());
    EXPECT_TRUE(allocations_of(part_stmt, "constant_exterior$1_in_Y_acc$1$0_filled").empty());
    EXPECT_EQ(verify_generic(part_op, target, shapes), "");
}
}  // namespace

namespace {

const char *kTallTilePoint = R"({"axes":[{"reg":16,"tile":48,"var":"n"},{"reg":8,"tile":256,"var":"m"}],
    "outer_order":["n","m"],"packed":[],"parallel_loops":0,"reduce":[{"block":64,"var":"k"}],"unroll":true,
    "vector_width":16})";

// The first split factor of `var` in `d`.
Halide::Expr tile_of(const Halide::Internal::Definition &d, const std::string &var) {
    for (const Halide::Internal::Split &s : d.schedule().splits())
        if (s.is_split() && s.old_var == var) return s.factor;
    return Halide::Expr();
}

// A dense layer's generic kernel from a schedule with 256-row tiles (tuned at M=512), called at
// M=384 (a dynamic sequence length, docs/design.md §3.6): with `spanned`, the rows are cut into
// balanced tiles (two of 192) in every case, so the accumulator computes 384 rows, not 256 and a
// shifted 256; without, the tile stays 256 where M covers it. Both compute the product, at row
// counts above, below and between the tiles.
TEST(GenericCode, AccumulatorTilesAreBalancedOverTheRowsThereAre) {
    ComputeDef def = OpLibrary::standard().load("matmul");
    Target target = host_target();
    BoundShape tuned = bind_shape(def, "M=512,N=96,K=64");
    SchedulePoint p = SchedulePoint::from_json(nlohmann::json::parse(kTallTilePoint));
    std::vector<BoundShape> shapes = {bind_shape(def, "M=384,N=96,K=64"), bind_shape(def, "M=23,N=50,K=64"),
                                      bind_shape(def, "M=1,N=96,K=64"), bind_shape(def, "M=300,N=48,K=70")};

    LoweredOp balanced = lower_generic(def, tuned, p, target, true);
    const Halide::Internal::Definition &d = balanced.output.function().definition();
    ASSERT_FALSE(d.specializations().empty());
    for (const Halide::Internal::Specialization &s : d.specializations())
        EXPECT_EQ(Halide::Internal::as_const_int(tile_of(s.definition, "m")), nullptr) << tile_of(s.definition, "m");
    EXPECT_EQ(verify_generic(balanced, target, shapes), "");

    LoweredOp fixed = lower_generic(def, tuned, p, target, false);
    const int64_t *tile = Halide::Internal::as_const_int(
        tile_of(fixed.output.function().definition().specializations().front().definition, "m"));
    ASSERT_NE(tile, nullptr);
    EXPECT_EQ(*tile, 256);
    EXPECT_EQ(verify_generic(fixed, target, shapes), "");
}

}  // namespace
