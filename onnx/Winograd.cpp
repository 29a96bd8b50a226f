#include "onnx/Winograd.h"

#include "onnx/OpText.h"

namespace opgen::onnx_import {

namespace {

// Lavin and Gray's F(2, 3) matrices: B^T (4 x 4) and A^T (2 x 4); G is WeightLayout's.
const double kBT[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
const double kAT[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};

GraphTensor constant(const std::string &name, const std::vector<int64_t> &dims) {
    GraphTensor t;
    t.name = name;
    t.dims = dims;
    t.kind = TensorKind::Weight;
    return t;
}

}  // namespace

bool winograd_applies(const std::map<std::string, int64_t> &s) {
    auto is = [&](const char *key, int64_t v) { return s.count(key) && s.at(key) == v; };
    const int64_t H = s.at("H"), W = s.at("W");
    return is("N", 1) && is("KH", 3) && is("KW", 3) && is("stride", 1) && is("pad", 1) && is("dilation", 1) &&
           s.at("C") % 16 == 0 && s.at("F") % 16 == 0 && H % 2 == 0 && W % 2 == 0;
}

std::string winograd_in_text() {
    return std::string(kGeneratedHeader) +
           "# Winograd F(2x2, 3x3) input transform of channel-blocked X (one image): V[a, b, ty, tx] is\n"
           "# B^T d B of the 4 x 4 patch d at (2 ty - 1, 2 tx - 1); B2[a, b, i, j] = B^T[a, i] B^T[b, j].\n"
           "# Reads outside X are zero (padding 1).\n"
           "op winograd_f23_in\nparam CB, H, W, cb = 16\nlet TY = H / 2\nlet TX = W / 2\n"
           "input  X: f32[CB, H, W, cb] zero_pad\ninput  B2: f32[4, 4, 4, 4]\noutput V: f32[4, 4, TY, TX, CB, cb]\n"
           "V[a, b, ty, tx, co, ci] = sum(i: 4, j: 4) B2[a, b, i, j] * X[co, 2*ty + i - 1, 2*tx + j - 1, ci]\n";
}

std::string winograd_out_text(const std::string &name, const std::vector<std::string> &steps) {
    const std::string at = "fo, ty, dy, tx, dx, fi", dims = "[FB, TY, 2, TX, 2, fb]";
    std::string text = std::string(kGeneratedHeader) +
                       "# Winograd F(2x2, 3x3) output transform into channel-blocked Y (FB x 2TY x 2TX x fb seen as\n"
                       "# FB x TY x 2 x TX x 2 x fb): each tile is A^T M A, A2[dy, dx, a, b] = A^T[dy, a] A^T[dx, b]";
    text += blocked_epilogue_doc(steps) + ".\nop " + name + "\nparam TY, TX, FB, fb = 16\ninput  M: f32[4, 4, TY, TX, FB, fb]\ninput  A2: f32[2, 2, 4, 4]\n";
    for (const auto &s : steps) {
        if (s == "bias") text += "input  bias: f32[FB, fb]\n";
        if (s == "add") text += "input  R: f32" + dims + "\n";
    }
    const std::string sum = "sum(a: 4, b: 4) A2[dy, dx, a, b] * M[a, b, ty, tx, fo, fi]";
    if (steps.empty()) return text + "output Y: f32" + dims + "\nY[" + at + "] = " + sum + "\n";
    text += "local  Z: f32" + dims + "\noutput Y: f32" + dims + "\nZ[" + at + "] = " + sum + "\n";
    return text + "Y[" + at + "] = " + blocked_epilogue(at, steps) + "\n";
}

std::vector<GraphTensor> winograd_constants(bool with_data) {
    GraphTensor b2 = constant("winograd_f23_B2", {4, 4, 4, 4}), a2 = constant("winograd_f23_A2", {2, 2, 4, 4});
    if (!with_data) return {b2, a2};
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) b2.data.push_back(float(kBT[a][i] * kBT[b][j]));
    for (int dy = 0; dy < 2; dy++)
        for (int dx = 0; dx < 2; dx++)
            for (int a = 0; a < 4; a++)
                for (int b = 0; b < 4; b++) a2.data.push_back(float(kAT[dy][a] * kAT[dx][b]));
    return {b2, a2};
}

}  // namespace opgen::onnx_import
