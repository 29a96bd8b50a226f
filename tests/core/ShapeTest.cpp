// bind_shape and the counts derived from a bound shape: canonical text, defaults, lets (the
// convolution output size), flop counts and bytes moved. Malformed shapes are in tests/error/.
#include "core/Shape.h"
#include "core/OpLibrary.h"
#include "core/Parser.h"

#include <gtest/gtest.h>

#include <string>

using namespace opgen;

namespace {

ComputeDef bundled(const std::string &op) {
    return load_op_file(std::string(OPGEN_SOURCE_DIR) + "/ops/" + op + ".op");
}

} // namespace

TEST(Shape, CanonicalTextIsSortedByName) {
    ComputeDef def = bundled("matmul");
    BoundShape a = bind_shape(def, "N=2,M=3,K=4");
    BoundShape b = bind_shape(def, " K = 4 , M=3,N=2 ");
    EXPECT_EQ(a.canonical, "K=4,M=3,N=2");
    EXPECT_EQ(b.canonical, a.canonical);
    EXPECT_EQ(a.values.at("M"), 3);
    EXPECT_EQ(a.dims.at("A"), (std::vector<int64_t>{3, 4}));
    EXPECT_EQ(a.dims.at("B"), (std::vector<int64_t>{4, 2}));
    EXPECT_EQ(a.dims.at("C"), (std::vector<int64_t>{3, 2}));
    EXPECT_EQ(a.elements("C"), 6);
}

TEST(Shape, DefaultsFillTheGapsAndAppearInTheCanonicalText) {
    ComputeDef def = bundled("conv2d_nchw");
    BoundShape s = bind_shape(def, "N=1,C=3,H=8,W=8,F=4");
    EXPECT_EQ(s.values.at("KH"), 3);
    EXPECT_EQ(s.values.at("stride"), 1);
    EXPECT_EQ(s.values.at("pad"), 1);
    EXPECT_EQ(s.canonical, "C=3,F=4,H=8,KH=3,KW=3,N=1,W=8,dilation=1,pad=1,stride=1");
    // Giving a default explicitly is the same shape.
    EXPECT_EQ(bind_shape(def, "N=1,C=3,H=8,W=8,F=4,pad=1,KH=3").canonical, s.canonical);
    // Overriding one is a different shape.
    EXPECT_NE(bind_shape(def, "N=1,C=3,H=8,W=8,F=4,pad=0").canonical, s.canonical);
    // An attribute may be zero; lets are not part of the canonical text.
    BoundShape p0 = bind_shape(def, "N=1,C=3,H=8,W=8,F=4,pad=0");
    EXPECT_EQ(p0.values.at("pad"), 0);
    EXPECT_EQ(p0.canonical.find("OH"), std::string::npos);
}

TEST(Shape, ParseShapeText) {
    auto v = parse_shape_text("M=1, N = 22 ,K=333");
    EXPECT_EQ(v.size(), 3u);
    EXPECT_EQ(v.at("N"), 22);
    EXPECT_EQ(v.at("K"), 333);
    EXPECT_TRUE(parse_shape_text("").empty());
    EXPECT_TRUE(parse_shape_text("  ").empty());
}

TEST(Shape, OpWithAllDefaultsNeedsNoShape) {
    ComputeDef def = parse_compute("op t\nparam M = 4\nattr k = 2\ninput X: f32[M]\n"
                                   "output Y: f32[M, k + 1]\nY[i, j] = X[i] * j\n",
                                   "t.op");
    BoundShape s = bind_shape(def, "");
    EXPECT_EQ(s.canonical, "M=4,k=2");
    EXPECT_EQ(s.dims.at("Y"), (std::vector<int64_t>{4, 3}));
}

TEST(Shape, LetsGiveTheConvOutputSize) {
    ComputeDef def = bundled("conv2d_nchw");
    // (H + 2 pad - dilation (KH - 1) - 1) / stride + 1
    BoundShape same = bind_shape(def, "N=2,C=3,H=9,W=11,F=4");
    EXPECT_EQ(same.values.at("OH"), 9);
    EXPECT_EQ(same.values.at("OW"), 11);
    EXPECT_EQ(same.dims.at("Y"), (std::vector<int64_t>{2, 4, 9, 11}));
    BoundShape strided = bind_shape(def, "N=1,C=3,H=9,W=10,F=4,stride=2");
    EXPECT_EQ(strided.values.at("OH"), 5); // (9 + 2 - 2 - 1) / 2 + 1
    EXPECT_EQ(strided.values.at("OW"), 5); // (10 + 2 - 2 - 1) / 2 + 1 = 4 + 1 (rounded down)
    BoundShape dilated = bind_shape(def, "N=1,C=3,H=9,W=9,F=4,dilation=2,pad=0,KH=3,KW=5");
    EXPECT_EQ(dilated.values.at("OH"), 5); // 9 - 4
    EXPECT_EQ(dilated.values.at("OW"), 1); // 9 - 8
    EXPECT_EQ(dilated.dims.at("Wt"), (std::vector<int64_t>{4, 3, 3, 5}));
}

TEST(Shape, LetsMayBeZeroOrNegativeWhenNotASize) {
    ComputeDef def =
        parse_compute("op t\nparam M, K = 1\nlet half = (K - 1) / 2\nlet neg = half - 1\n"
                      "input X: f32[M] zero_pad\noutput Y: f32[M]\n"
                      "Y[i] = sum(r: K) X[i + r - half]\n",
                      "t.op");
    BoundShape s = bind_shape(def, "M=5");
    EXPECT_EQ(s.values.at("half"), 0);
    EXPECT_EQ(s.values.at("neg"), -1);
    // Halide's division rounds down: (-3) / 2 is -2.
    ComputeDef d = parse_compute("op t\nparam M\nlet q = (1 - 4) / 2\ninput X: f32[M]\n"
                                 "output Y: f32[M]\nY[i] = X[i] + q\n",
                                 "t.op");
    EXPECT_EQ(bind_shape(d, "M=1").values.at("q"), -2);
}

TEST(Shape, ValuesUpToThe32BitLimit) {
    ComputeDef def = parse_compute("op t\nparam M, N\ninput X: f32[M]\noutput Y: f32[M]\n"
                                   "Y[i] = X[i] + N\n",
                                   "t.op");
    EXPECT_EQ(bind_shape(def, "M=1,N=2147483647").values.at("N"), 2147483647);
}

TEST(Shape, FlopCountOfMatmulIsTwoMNK) {
    ComputeDef def = bundled("matmul");
    BoundShape s = bind_shape(def, "M=3,N=5,K=7");
    EXPECT_DOUBLE_EQ(flop_count(def, s), 2.0 * 3 * 5 * 7);
    BoundShape big = bind_shape(def, "M=512,N=1024,K=256");
    EXPECT_DOUBLE_EQ(flop_count(def, big), 2.0 * 512 * 1024 * 256);
    ComputeDef batched = bundled("batch_matmul");
    EXPECT_DOUBLE_EQ(flop_count(batched, bind_shape(batched, "BATCH=4,M=3,N=5,K=7")),
                     4 * 2.0 * 3 * 5 * 7);
}

TEST(Shape, FlopCountOfConvIsTwoPerMultiplyAdd) {
    ComputeDef def = bundled("conv2d_nchw");
    BoundShape s = bind_shape(def, "N=2,C=3,H=8,W=8,F=4"); // OH = OW = 8
    EXPECT_DOUBLE_EQ(flop_count(def, s), 2.0 * 2 * 4 * 8 * 8 * 3 * 3 * 3);
    BoundShape strided = bind_shape(def, "N=1,C=16,H=32,W=32,F=8,stride=2,KH=5,KW=5,pad=2");
    // OH = OW = (32 + 4 - 4 - 1) / 2 + 1 = 16
    EXPECT_DOUBLE_EQ(flop_count(def, strided), 2.0 * 1 * 8 * 16 * 16 * 16 * 5 * 5);
    // The fused bias and ReLU add two operations per output point.
    ComputeDef fused = bundled("conv2d_bias_relu");
    BoundShape fs = bind_shape(fused, "N=2,C=3,H=8,W=8,F=4");
    EXPECT_DOUBLE_EQ(flop_count(fused, fs), 2.0 * 2 * 4 * 8 * 8 * 3 * 3 * 3 + 2.0 * 2 * 4 * 8 * 8);
}

TEST(Shape, FlopCountOfPointwiseOps) {
    ComputeDef add = bundled("add");
    EXPECT_DOUBLE_EQ(flop_count(add, bind_shape(add, "M=3,N=5")), 15);
    // A copy still counts one operation per point.
    ComputeDef tr = bundled("transpose2d");
    EXPECT_DOUBLE_EQ(flop_count(tr, bind_shape(tr, "M=3,N=5")), 15);
}

TEST(Shape, MinBytesMovedCountsInputsAndOutputButNotLocals) {
    ComputeDef def = bundled("matmul_bias_relu");
    BoundShape s = bind_shape(def, "M=4,N=8,K=16");
    EXPECT_DOUBLE_EQ(min_bytes_moved(def, s), 4.0 * (4 * 16 + 16 * 8 + 8 + 4 * 8));
}

TEST(Shape, VarExtent) {
    ComputeDef def = bundled("conv2d_nchw");
    BoundShape s = bind_shape(def, "N=2,C=3,H=9,W=11,F=4,KW=5,pad=2");
    const Statement &st = def.statements.back();
    EXPECT_EQ(s.var_extent(st, "n"), 2);
    EXPECT_EQ(s.var_extent(st, "x"), 11);
    EXPECT_EQ(s.var_extent(st, "c"), 3);
    EXPECT_EQ(s.var_extent(st, "rx"), 5);
    EXPECT_THROW(s.var_extent(st, "nope"), InternalError);
}

// A 1x1 convolution at stride 1 without padding reads each pixel once: the op's view keys it by its
// pixels as one row (the GEMM over pixels), the same memory; the shape as given stays known.
TEST(Shape, AOneByOneConvolutionIsBoundAtItsFlattenedPixels) {
    for (const char *op : {"conv2d_nchw", "conv2d_nhwc", "conv2d_bias_relu"}) {
        ComputeDef def = bundled(op);
        BoundShape b = bind_shape(def, "N=2,C=8,H=7,W=5,F=4,KH=1,KW=1,stride=1,pad=0");
        EXPECT_EQ(b.values.at("H"), 1) << op;
        EXPECT_EQ(b.values.at("W"), 35) << op;
        EXPECT_EQ(b.values.at("OW"), 35) << op;
        EXPECT_EQ(b.canonical, "C=8,F=4,H=1,KH=1,KW=1,N=2,W=35,dilation=1,pad=0,stride=1") << op;
        EXPECT_EQ(b.given.at("H"), 7) << op;
        EXPECT_EQ(b.given.at("OW"), 5) << op;
        EXPECT_EQ(b.elements("X"), 2 * 8 * 7 * 5) << op;
        // The flattened shape is its own key.
        EXPECT_EQ(bind_shape(def, b.canonical).canonical, b.canonical) << op;
    }
    ComputeDef blocked = bundled("conv2d_nchwc");
    BoundShape nchwc = bind_shape(blocked, "N=1,CB=2,H=14,W=14,FB=4,KH=1,KW=1,pad=0");
    EXPECT_EQ(nchwc.dims.at("Y"), (std::vector<int64_t>{1, 4, 1, 196, 16}));
}

TEST(Shape, OnlyAOneByOneWindowAtStrideOneWithoutPaddingIsFlattened) {
    ComputeDef def = bundled("conv2d_nchw");
    for (const char *shape : {"N=1,C=8,H=7,W=5,F=4", "N=1,C=8,H=7,W=5,F=4,KH=1,KW=1,pad=1",
                              "N=1,C=8,H=7,W=5,F=4,KH=1,KW=1,stride=2,pad=0",
                              "N=1,C=8,H=7,W=5,F=4,KH=1,KW=3,pad=0"}) {
        BoundShape b = bind_shape(def, shape);
        EXPECT_EQ(b.values.at("H"), 7) << shape;
        EXPECT_EQ(b.given, b.values) << shape;
    }
}
