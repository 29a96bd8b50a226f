// Weights re-laid out for their kernels (onnx/WeightLayout.h): every element of the source
// lands where the kernel's layout indexes it, and a graph read without weights gets the new
// tensors' dimensions only.
#include "onnx/WeightLayout.h"

#include "onnx/ModelGraph.h"

#include <gtest/gtest.h>

namespace {

using namespace opgen::onnx_import;

std::vector<float> iota(int64_t n) {
    std::vector<float> v(size_t(n), 0.0f);
    for (int64_t i = 0; i < n; i++) v[size_t(i)] = float(i);
    return v;
}

TEST(WeightLayout, TransposeSwapsRowsAndColumns) {
    WeightRelayout r = make_relayout("fc_w", {3, 5}, "transpose");
    EXPECT_EQ(r.tensor, "fc_w@transpose");
    EXPECT_EQ(r.dims, (std::vector<int64_t>{5, 3}));
    std::vector<float> out = relaid_elements(r, {3, 5}, iota(15));
    for (int64_t i = 0; i < 3; i++)
        for (int64_t j = 0; j < 5; j++) EXPECT_EQ(out[size_t(j * 3 + i)], float(i * 5 + j));
}

TEST(WeightLayout, BlockedConvolutionWeightsIndexLikeOneDnn) {
    const int64_t f = 32, c = 48, kh = 3, kw = 2;
    std::vector<float> src = iota(f * c * kh * kw);
    WeightRelayout r = make_relayout("w", {f, c, kh, kw}, "OIhw16i16o");
    EXPECT_EQ(r.dims, (std::vector<int64_t>{2, 3, kh, kw, 16, 16}));
    std::vector<float> out = relaid_elements(r, {f, c, kh, kw}, src);
    WeightRelayout first = make_relayout("w", {f, c, kh, kw}, "Oihw16o");
    std::vector<float> out1 = relaid_elements(first, {f, c, kh, kw}, src);
    for (int64_t o = 0; o < f; o++)
        for (int64_t i = 0; i < c; i++)
            for (int64_t y = 0; y < kh; y++)
                for (int64_t x = 0; x < kw; x++) {
                    float want = src[size_t(((o * c + i) * kh + y) * kw + x)];
                    int64_t at = ((((o / 16 * 3 + i / 16) * kh + y) * kw + x) * 16 + i % 16) * 16 + o % 16;
                    ASSERT_EQ(out[size_t(at)], want) << o << " " << i << " " << y << " " << x;
                    ASSERT_EQ(out1[size_t((((o / 16 * c + i) * kh + y) * kw + x) * 16 + o % 16)], want);
                }
}

TEST(WeightLayout, AddsTensorsWithElementsOnlyWhenTheSourceHasThem) {
    ModelGraph g;
    g.tensors["w"] = {"w", {2, 3}, TensorKind::Weight, 1, {}, iota(6), {}, {}};
    g.tensors["v"] = {"v", {16, 16, 1, 1}, TensorKind::Weight, 1, {}, {}, {}, {}};
    add_relaid_weights(g, {make_relayout("w", {2, 3}, "transpose"), make_relayout("v", {16, 16, 1, 1}, "OIhw16i16o")});
    const GraphTensor &t = g.tensor("w@transpose");
    EXPECT_EQ(t.kind, TensorKind::Weight);
    EXPECT_EQ(t.data, (std::vector<float>{0, 3, 1, 4, 2, 5}));
    EXPECT_TRUE(g.tensor("v@OIhw16i16o").data.empty());
    EXPECT_EQ(g.tensor("v@OIhw16i16o").elements(), 256);
}

}  // namespace
