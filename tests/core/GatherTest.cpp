// Gathered reads (core/Gather.h): which reads are gathered, and the schedule a strided 1x1
// convolution starts from with its gathered panel (core/ConvWindow.h, strided_row_gemm_point).
// That its kernels compute the convolution is checked with every other op's in OpsReferenceTest.

#include "core/Gather.h"
#include "core/OpLibrary.h"
#include "core/Schedule.h"
#include "core/Shape.h"
#include "core/Target.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace opgen;

namespace {

ComputeDef bundled(const std::string &op) { return load_op_file(std::string(OPGEN_SOURCE_DIR) + "/ops/" + op + ".op"); }

// The gather dims of each read of `tensor` in the main statement of `def` at `shape`.
std::vector<std::optional<std::vector<std::string>>> gathers_of(const ComputeDef &def, const std::string &shape,
                                                                 const std::string &tensor) {
    BoundShape s = bind_shape(def, shape);
    const Statement &ms = def.statements.back();
    std::vector<std::optional<std::vector<std::string>>> out;
    for (const ExprNode *e : accesses(ms)) {
        if (e->name == tensor) out.push_back(gather_dims(def, ms, *e, s));
    }
    return out;
}

bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST(Gather, StridedReadsWithoutAWindowAreGathered) {
    ComputeDef conv = bundled("conv2d_nchw");
    const std::vector<std::string> nchw = {"n", "c", "y", "x"};
    // A 1x1 window at stride 2, padded or not: one variable per dimension of X.
    auto s2 = gathers_of(conv, "N=1,C=8,H=12,W=12,F=16,KH=1,KW=1,stride=2,pad=0", "X");
    ASSERT_EQ(s2.size(), 1u);
    ASSERT_TRUE(s2[0].has_value());
    EXPECT_EQ(*s2[0], nchw);
    auto padded = gathers_of(conv, "N=1,C=8,H=12,W=12,F=16,KH=1,KW=1,stride=2,pad=1", "X");
    ASSERT_TRUE(padded.at(0).has_value());
    EXPECT_EQ(*padded[0], nchw);
    // A window (3x3 at stride 2), no stride (the 1x1's flattened view), and the weights: not gathered.
    EXPECT_FALSE(gathers_of(conv, "N=1,C=8,H=12,W=12,F=16,KH=3,KW=3,stride=2,pad=1", "X").at(0).has_value());
    EXPECT_FALSE(gathers_of(conv, "N=1,C=8,H=12,W=12,F=16,KH=1,KW=1,stride=1,pad=0", "X").at(0).has_value());
    EXPECT_FALSE(gathers_of(conv, "N=1,C=8,H=12,W=12,F=16,KH=1,KW=1,stride=2,pad=0", "Wt").at(0).has_value());
    EXPECT_FALSE(gathers_of(bundled("matmul"), "M=8,N=8,K=8", "A").at(0).has_value());
}

// ResNet-50's 56x56x256->512 1x1 at stride 2 starts from a GEMM over whole output rows: the row of
// 28 rounded up to two vectors in the accumulator and in the gathered panel (guarded, the
// accumulators left registers and the panel's last lanes were never written), X packed gathered.
TEST(Gather, StridedOneByOneStartsFromTheGatheredRowGemm) {
    ComputeDef conv = bundled("conv2d_nchw");
    BoundShape shape = bind_shape(conv, "N=1,C=256,H=56,W=56,F=512,KH=1,KW=1,stride=2,pad=0");
    Target target = load_target("x86-64-avx512");
    target.cores = 1;
    SchedulePoint p = heuristic_point(conv, shape, target);
    EXPECT_EQ(p.vector_axis, 0);
    EXPECT_EQ(p.axes.at(0).reg, 28);
    EXPECT_EQ(p.axes.at(0).tile, 28);
    EXPECT_EQ(p.axes.at(2).reg, 8);
    EXPECT_EQ(p.axes.at(2).tile, 512);
    // Weights of 512 KiB stay in the 2 MiB L2: 4 rows of 28 pixels x 256 channels (112 KiB) a tile.
    EXPECT_EQ(p.axes.at(1).tile, 4);
    EXPECT_EQ(p.packed, std::vector<std::string>{"X"});
    LoweredOp op = lower_for_point(conv, shape, &p);
    const std::string source = apply_schedule(op, p, target).source();
    EXPECT_TRUE(contains(source, "Func X_panel = X_gathered.in(Y_acc);")) << source;
    EXPECT_TRUE(contains(source, "Y_acc.update().vectorize(x, 16, TailStrategy::RoundUp);")) << source;
    EXPECT_TRUE(contains(source, "X_panel.vectorize(X_g0, 16, TailStrategy::RoundUp);")) << source;

    // 28x28x512->1024: 2 MiB of weights would be streamed again by every tile, so the column (14
    // rows of 14, two rows a register tile) is one tile; on two cores the channels are halved.
    BoundShape deep = bind_shape(conv, "N=1,C=512,H=28,W=28,F=1024,KH=1,KW=1,stride=2,pad=0");
    SchedulePoint q = heuristic_point(conv, deep, target);
    EXPECT_EQ(q.axes.at(0).reg, 14);
    EXPECT_EQ(q.axes.at(1).reg, 2);
    EXPECT_EQ(q.axes.at(1).tile, 14);
    EXPECT_EQ(q.axes.at(2).tile, 1024);
    Target two = target;
    two.cores = 2;
    EXPECT_EQ(heuristic_point(conv, deep, two).axes.at(2).tile, 512);
}

// Rounding up needs every input read along the vectorized axis to be zero-padded: a matmul's ragged
// register tile of columns keeps its guard (rounded up, it would read past B's end).
TEST(Gather, RaggedTilesOfUnpaddedInputsStayGuarded) {
    ComputeDef mm = bundled("matmul");
    BoundShape shape = bind_shape(mm, "M=16,N=40,K=32");
    Target target = load_target("x86-64-avx512");
    SchedulePoint p = heuristic_point(mm, shape, target);
    p.axes.at(0).reg = p.axes.at(0).tile = 20;
    p.vector_axis = 0;
    p.vector_width = 16;
    LoweredOp op = lower_for_point(mm, shape, &p);
    const std::string source = apply_schedule(op, p, target).source();
    EXPECT_TRUE(contains(source, "C_acc.update().vectorize(n, 16, TailStrategy::GuardWithIf);")) << source;
    EXPECT_FALSE(contains(source, "RoundUp")) << source;
}
