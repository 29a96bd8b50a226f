// Winograd F(2x2, 3x3) (onnx/Winograd.h): the transformed weights (WeightLayout's winograd_f23)
// and the transforms' constants give the direct convolution's outputs, padding included, and
// only the convolutions whose tiles cover the output exactly take it.
#include "onnx/Winograd.h"

#include "onnx/WeightLayout.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace {

using namespace opgen::onnx_import;

// The convolution of X (C x H x W) with Wt (F x C x 3 x 3), padding 1, as the three kernels
// compute it: V = B^T d B per tile, M = V U per tile position, Y = A^T M A.
std::vector<double> winograd(const std::vector<float> &x, const std::vector<float> &w, int64_t C, int64_t H,
                             int64_t W, int64_t F) {
    const std::vector<float> u = relaid_elements(make_relayout("w", {F, C, 3, 3}, "winograd_f23"), {F, C, 3, 3}, w);
    const std::vector<GraphTensor> k = winograd_constants(true);
    const std::vector<float> &b2 = k[0].data, &a2 = k[1].data;
    const int64_t TY = H / 2, TX = W / 2;
    auto at = [&](int64_t c, int64_t y, int64_t xx) {
        return y < 0 || y >= H || xx < 0 || xx >= W ? 0.0 : double(x[size_t((c * H + y) * W + xx)]);
    };
    std::vector<double> out(size_t(F * H * W), 0.0);
    for (int64_t ty = 0; ty < TY; ty++)
        for (int64_t tx = 0; tx < TX; tx++)
            for (int64_t f = 0; f < F; f++) {
                double m[16] = {0};
                for (int64_t c = 0; c < C; c++)
                    for (int e = 0; e < 16; e++) {
                        double v = 0;
                        for (int i = 0; i < 4; i++)
                            for (int j = 0; j < 4; j++) v += b2[size_t(e * 16 + i * 4 + j)] * at(c, 2 * ty + i - 1, 2 * tx + j - 1);
                        m[e] += v * u[size_t((e * C + c) * F + f)];
                    }
                for (int d = 0; d < 4; d++) {
                    double y = 0;
                    for (int e = 0; e < 16; e++) y += a2[size_t(d * 16 + e)] * m[e];
                    out[size_t((f * H + 2 * ty + d / 2) * W + 2 * tx + d % 2)] = y;
                }
            }
    return out;
}

TEST(Winograd, TransformsGiveTheDirectConvolutionWithItsPadding) {
    const int64_t C = 5, H = 6, W = 8, F = 3;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::vector<float> x(size_t(C * H * W)), w(size_t(F * C * 9));
    for (float &v : x) v = d(rng);
    for (float &v : w) v = d(rng);
    const std::vector<double> got = winograd(x, w, C, H, W, F);
    for (int64_t f = 0; f < F; f++)
        for (int64_t y = 0; y < H; y++)
            for (int64_t xx = 0; xx < W; xx++) {
                double want = 0;
                for (int64_t c = 0; c < C; c++)
                    for (int64_t ry = 0; ry < 3; ry++)
                        for (int64_t rx = 0; rx < 3; rx++) {
                            int64_t iy = y + ry - 1, ix = xx + rx - 1;
                            if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                                want += double(x[size_t((c * H + iy) * W + ix)]) * w[size_t(((f * C + c) * 3 + ry) * 3 + rx)];
                        }
                ASSERT_NEAR(got[size_t((f * H + y) * W + xx)], want, 1e-5) << f << " " << y << " " << xx;
            }
}

TEST(Winograd, AppliesToOneImageStrideOnePaddingOneEvenSizesInWholeBlocks) {
    std::map<std::string, int64_t> s = {{"N", 1}, {"C", 64}, {"H", 56}, {"W", 56}, {"F", 64}, {"KH", 3},
                                        {"KW", 3}, {"stride", 1}, {"pad", 1}, {"dilation", 1}};
    EXPECT_TRUE(winograd_applies(s));
    for (auto [key, value] : std::vector<std::pair<std::string, int64_t>>{
             {"N", 2}, {"C", 24}, {"F", 40}, {"H", 7}, {"W", 7}, {"KH", 1}, {"stride", 2}, {"pad", 0}, {"dilation", 2}}) {
        auto t = s;
        t[key] = value;
        EXPECT_FALSE(winograd_applies(t)) << key << "=" << value;
    }
}

}  // namespace
