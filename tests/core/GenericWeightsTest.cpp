// The generic conv's weights in a constant-stride panel (codegen/GenericWeights.h): which schedules
// get one, and that the kernel with it still matches the reference where the panel's bounded
// block of output channels runs past the weights (fewer channels than the register tile, a ragged
// last block) and where the channel count is not the source's.
#include "codegen/GenericCode.h"
#include "codegen/GenericWeights.h"
#include "core/OpLibrary.h"
#include "core/Schedule.h"
#include "core/Shape.h"
#include "core/Target.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

using namespace opgen;

namespace {

// A tuned conv winner of session 9's campaign (C=32, 28x28: x vectorized, 8 output channels by 2
// rows per register tile, the input packed, the weights prefetched).
const char *kConvPoint = R"({"axes":[{"reg":16,"tile":28,"var":"x"},{"reg":2,"tile":28,"var":"y"},
    {"reg":8,"tile":32,"var":"f"},{"reg":1,"tile":1,"var":"n"}],"outer_order":["y","x","f","n"],
    "packed":["X"],"parallel_loops":0,"prefetch":4,"reduce":[{"block":3,"var":"rx"},
    {"block":3,"var":"ry"},{"block":32,"var":"c"}],"unroll":false,"vector_width":16})";

SchedulePoint conv_point(const std::vector<std::string> &packed) {
    SchedulePoint p = SchedulePoint::from_json(nlohmann::json::parse(kConvPoint));
    p.packed = packed;
    return p;
}

struct Conv {
    ComputeDef def = OpLibrary::standard().load("conv2d_nchw");
    BoundShape shape = bind_shape(def, "N=1,C=32,H=28,W=28,F=32");
    Target target = host_target();
};

std::vector<std::string> panels(const Conv &c, const SchedulePoint &p) {
    LoweredOp op = lower_generic(c.def, c.shape, p, c.target);
    return generic_weight_panels(op, p);
}

TEST(GenericWeights, ConvWeightsReadByBroadcastGetAPanel) {
    Conv c;
    EXPECT_EQ(panels(c, conv_point({"X"})), std::vector<std::string>{"Wt"});
    EXPECT_EQ(panels(c, conv_point({})), std::vector<std::string>{"Wt"});
}

TEST(GenericWeights, WeightsTheSchedulePacksOrVectorizesGetNone) {
    Conv c;
    EXPECT_TRUE(panels(c, conv_point({"X", "Wt"})).empty());
    SchedulePoint over_f = conv_point({"X"});
    over_f.vector_axis = 2;  // the weights are read as vectors of output channels
    over_f.axes[2].reg = 16;
    over_f.axes[0].reg = 4;
    EXPECT_TRUE(panels(c, over_f).empty());
}

TEST(GenericWeights, NoPanelWithoutReuseOrWindow) {
    Conv c;
    SchedulePoint alone = conv_point({"X"});
    alone.axes[0].tile = alone.axes[0].reg = 16;  // x: one register tile per cache tile
    alone.axes[1].tile = alone.axes[1].reg = 2;   // y: the same; nothing reuses a panel
    EXPECT_TRUE(panels(c, alone).empty());
    // Session 9's 56x56 winner: rows in tiles of 4, 4 register tiles per panel (x 56/16).
    SchedulePoint few = conv_point({"X"});
    few.axes[0].tile = 28;  // 2 register tiles of x
    few.axes[1].tile = few.axes[1].reg = 4;
    EXPECT_TRUE(panels(c, few).empty());
    few.axes[1].tile = 8;  // 2 x 2: still too few
    EXPECT_TRUE(panels(c, few).empty());
    few.axes[1].tile = 16;  // 2 x 4
    EXPECT_EQ(panels(c, few), std::vector<std::string>{"Wt"});
    // matmul's A[m, k] is read by broadcast too, but one reduction dimension is no window.
    ComputeDef mm = OpLibrary::standard().load("matmul");
    BoundShape shape = bind_shape(mm, "M=64,N=64,K=64");
    SchedulePoint p = heuristic_point(mm, shape, c.target);
    LoweredOp op = lower_generic(mm, shape, p, c.target);
    EXPECT_TRUE(generic_weight_panels(op, p).empty()) << p.summary();
}

TEST(GenericWeights, PanelledConvMatchesTheReferenceAtRaggedShapes) {
    Conv c;
    SchedulePoint p = conv_point({"X"});
    std::string checked;
    LoweredOp op = checked_generic(c.def, c.shape, p, c.target, checked);
    EXPECT_NE(checked.find("F=1,"), std::string::npos) << checked;  // below the register tile
    // Fewer channels than the source's, a last block of 5 of 8, and odd planes.
    std::vector<BoundShape> more = {bind_shape(c.def, "N=2,C=3,H=9,W=17,F=13"),
                                    bind_shape(c.def, "N=1,C=40,H=30,W=31,F=21")};
    EXPECT_EQ(verify_generic(op, c.target, more), "");
}

}  // namespace
