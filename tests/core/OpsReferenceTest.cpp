// Every bundled op against a hand-written naive loop nest of what it should compute: Halide's
// default schedule, the heuristic schedule, and the project's ReferenceEvaluator must all agree
// with it, at a small regular shape and at one with odd, non-power-of-two extents (and, where the
// op has them, non-default attributes). The naive functions below are deliberately independent of
// the op language: they read nothing but the shape parameters and the input tensors, and compute
// in double precision. A new file in ops/ without an entry in the table makes EveryOpIsCovered
// fail.
#include "core/Kernel.h"
#include "core/Lower.h"
#include "core/OpLibrary.h"
#include "core/Parser.h"
#include "core/Reference.h"
#include "core/Schedule.h"
#include "core/Shape.h"
#include "core/Target.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

using namespace opgen;

namespace {

using Inputs = std::map<std::string, HostTensor>;

// The shape parameters and attributes, by name, as the test gave them or as the op's defaults.
struct Params {
    const BoundShape &shape;
    int64_t operator()(const char *name) const { return shape.values.at(name); }
};

// A row-major view with bounds checks, so that a mistake in a naive function fails loudly.
struct View {
    const HostTensor &t;
    double operator()(std::initializer_list<int64_t> index) const {
        EXPECT_EQ(index.size(), t.dims.size());
        int64_t flat = 0;
        size_t d = 0;
        for (int64_t i : index) {
            EXPECT_TRUE(i >= 0 && i < t.dims[d]) << "naive reference reads out of range";
            flat = flat * t.dims[d++] + i;
        }
        EXPECT_LT(flat, t.elements());
        return t.at(flat);
    }
};

// Output tensor built in double and stored in the output's type (float unless told), like a
// kernel's output.
struct Out {
    HostTensor t;
    explicit Out(std::vector<int64_t> dims, DType type = DType::F32) : t(make_host_tensor(type, std::move(dims))) {}
    void set(std::initializer_list<int64_t> index, double v) {
        int64_t flat = 0;
        size_t d = 0;
        for (int64_t i : index)
            flat = flat * t.dims[d++] + i;
        ASSERT_LT(flat, t.elements());
        t.set(flat, v);
    }
};

double gelu(double x) {
    return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

// Plain convolution size arithmetic, as the frameworks document it.
int64_t conv_out(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dilation) {
    return (in + 2 * pad - dilation * (k - 1) - 1) / stride + 1;
}

HostTensor naive_matmul(const Params &p, const Inputs &in) {
    int64_t M = p("M"), N = p("N"), K = p("K");
    View A{in.at("A")}, B{in.at("B")};
    Out C({M, N});
    for (int64_t m = 0; m < M; m++) {
        for (int64_t n = 0; n < N; n++) {
            double s = 0;
            for (int64_t k = 0; k < K; k++)
                s += A({m, k}) * B({k, n});
            C.set({m, n}, s);
        }
    }
    return C.t;
}

// C = A B with B read from its packed layout B[k / g, n, k % g] (K a multiple of g, as binding
// checks): matmul_u8s8 (g = 4, an i32 output; double holds its sums exactly) and matmul_bf16 (g =
// 2).
HostTensor naive_packed_matmul(const Params &p, const Inputs &in, int64_t g, DType out) {
    int64_t M = p("M"), N = p("N"), K = p("K");
    View A{in.at("A")}, B{in.at("B")};
    Out C({M, N}, out);
    for (int64_t m = 0; m < M; m++) {
        for (int64_t n = 0; n < N; n++) {
            double s = 0;
            for (int64_t k = 0; k < K; k++)
                s += A({m, k}) * B({k / g, n, k % g});
            C.set({m, n}, s);
        }
    }
    return C.t;
}

// Requantization of an exact integer sum, as ONNX Runtime's int8 kernels do it: the sum plus its
// bias times the float32 scale, one float32 product, rounded to the nearest integer (ties to
// even), offset by the zero point and clamped to the output type's range.
double requantize(double sum, double scale, double zp, DType out) {
    const float y = float(sum) * float(scale);
    const double lo = out == DType::U8 ? 0 : -128, hi = out == DType::U8 ? 255 : 127;
    return std::min(hi, std::max(lo, std::nearbyint(double(y)) + zp));
}

// matmul_u8s8_requant(_s8): the exact i32 matmul, then requantize per output column.
HostTensor naive_requant_matmul(const Params &p, const Inputs &in, DType out) {
    HostTensor sums = naive_packed_matmul(p, in, 4, DType::I32);
    int64_t M = p("M"), N = p("N");
    View bias{in.at("bias")}, scale{in.at("scale")}, zp{in.at("zp")};
    Out C({M, N}, out);
    for (int64_t m = 0; m < M; m++) {
        for (int64_t n = 0; n < N; n++)
            C.set({m, n}, requantize(sums.at(m * N + n) + bias({n}), scale({n}), zp({0}), out));
    }
    return C.t;
}

// conv2d_nhwc_u8s8_requant: NHWC u8 X, s8 Wt[ry, rx, c / 4, f, c % 4], exact sums, requantized.
HostTensor naive_requant_conv_nhwc(const Params &p, const Inputs &in) {
    int64_t N = p("N"), H = p("H"), W = p("W"), C = p("C"), F = p("F"), KH = p("KH"), KW = p("KW");
    int64_t s = p("stride"), pad = p("pad"), d = p("dilation");
    int64_t OH = conv_out(H, KH, s, pad, d), OW = conv_out(W, KW, s, pad, d);
    View X{in.at("X")}, Wt{in.at("Wt")}, bias{in.at("bias")}, scale{in.at("scale")},
        zp{in.at("zp")};
    Out Y({N, OH, OW, F}, DType::U8);
    for (int64_t n = 0; n < N; n++) {
        for (int64_t y = 0; y < OH; y++) {
            for (int64_t x = 0; x < OW; x++) {
                for (int64_t f = 0; f < F; f++) {
                    double sum = bias({f});
                    for (int64_t ry = 0; ry < KH; ry++) {
                        for (int64_t rx = 0; rx < KW; rx++) {
                            int64_t iy = y * s + ry * d - pad, ix = x * s + rx * d - pad;
                            if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                                continue;
                            for (int64_t c = 0; c < C; c++)
                                sum += X({n, iy, ix, c}) * Wt({ry, rx, c / 4, f, c % 4});
                        }
                    }
                    Y.set({n, y, x, f}, requantize(sum, scale({f}), zp({0}), DType::U8));
                }
            }
        }
    }
    return Y.t;
}

// C[b] = A[b] B[b], or A[b] B[b]^T when `b_transposed` (B is then BATCH x N x K).
HostTensor naive_batch_matmul(const Params &p, const Inputs &in, bool b_transposed) {
    int64_t L = p("BATCH"), M = p("M"), N = p("N"), K = p("K");
    View A{in.at("A")}, B{in.at("B")};
    Out C({L, M, N});
    for (int64_t b = 0; b < L; b++) {
        for (int64_t m = 0; m < M; m++) {
            for (int64_t n = 0; n < N; n++) {
                double s = 0;
                for (int64_t k = 0; k < K; k++)
                    s += A({b, m, k}) * (b_transposed ? B({b, n, k}) : B({b, k, n}));
                C.set({b, m, n}, s);
            }
        }
    }
    return C.t;
}

HostTensor naive_matmul_bias(const Params &p, const Inputs &in, double (*act)(double)) {
    int64_t M = p("M"), N = p("N"), K = p("K");
    View A{in.at("A")}, B{in.at("B")}, bias{in.at("bias")};
    Out C({M, N});
    for (int64_t m = 0; m < M; m++) {
        for (int64_t n = 0; n < N; n++) {
            double s = 0;
            for (int64_t k = 0; k < K; k++)
                s += A({m, k}) * B({k, n});
            C.set({m, n}, act(s + bias({n})));
        }
    }
    return C.t;
}

double relu(double x) {
    return x > 0 ? x : 0.0;
}

// NCHW convolution with an F x C x KH x KW filter, optional per-channel bias and activation.
HostTensor naive_conv_nchw(const Params &p, const Inputs &in, bool bias_relu) {
    int64_t N = p("N"), C = p("C"), H = p("H"), W = p("W"), F = p("F"), KH = p("KH"), KW = p("KW"),
            S = p("stride"), P = p("pad"), D = p("dilation");
    int64_t OH = conv_out(H, KH, S, P, D), OW = conv_out(W, KW, S, P, D);
    View X{in.at("X")}, Wt{in.at("Wt")};
    Out Y({N, F, OH, OW});
    for (int64_t n = 0; n < N; n++) {
        for (int64_t f = 0; f < F; f++) {
            for (int64_t y = 0; y < OH; y++) {
                for (int64_t x = 0; x < OW; x++) {
                    double s = 0;
                    for (int64_t c = 0; c < C; c++) {
                        for (int64_t ky = 0; ky < KH; ky++) {
                            for (int64_t kx = 0; kx < KW; kx++) {
                                int64_t iy = y * S + ky * D - P, ix = x * S + kx * D - P;
                                if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                                    continue;
                                s += X({n, c, iy, ix}) * Wt({f, c, ky, kx});
                            }
                        }
                    }
                    if (bias_relu)
                        s = relu(s + View{in.at("bias")}({f}));
                    Y.set({n, f, y, x}, s);
                }
            }
        }
    }
    return Y.t;
}

// NHWC convolution with a KH x KW x C x F (HWIO) filter.
HostTensor naive_conv_nhwc(const Params &p, const Inputs &in) {
    int64_t N = p("N"), C = p("C"), H = p("H"), W = p("W"), F = p("F"), KH = p("KH"), KW = p("KW"),
            S = p("stride"), P = p("pad"), D = p("dilation");
    int64_t OH = conv_out(H, KH, S, P, D), OW = conv_out(W, KW, S, P, D);
    View X{in.at("X")}, Wt{in.at("Wt")};
    Out Y({N, OH, OW, F});
    for (int64_t n = 0; n < N; n++) {
        for (int64_t y = 0; y < OH; y++) {
            for (int64_t x = 0; x < OW; x++) {
                for (int64_t f = 0; f < F; f++) {
                    double s = 0;
                    for (int64_t ky = 0; ky < KH; ky++) {
                        for (int64_t kx = 0; kx < KW; kx++) {
                            int64_t iy = y * S + ky * D - P, ix = x * S + kx * D - P;
                            if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                                continue;
                            for (int64_t c = 0; c < C; c++) {
                                s += X({n, iy, ix, c}) * Wt({ky, kx, c, f});
                            }
                        }
                    }
                    Y.set({n, y, x, f}, s);
                }
            }
        }
    }
    return Y.t;
}

HostTensor naive_depthwise(const Params &p, const Inputs &in) {
    int64_t N = p("N"), C = p("C"), H = p("H"), W = p("W"), KH = p("KH"), KW = p("KW"),
            S = p("stride"), P = p("pad"), D = p("dilation");
    int64_t OH = conv_out(H, KH, S, P, D), OW = conv_out(W, KW, S, P, D);
    View X{in.at("X")}, Wt{in.at("Wt")};
    Out Y({N, C, OH, OW});
    for (int64_t n = 0; n < N; n++) {
        for (int64_t c = 0; c < C; c++) {
            for (int64_t y = 0; y < OH; y++) {
                for (int64_t x = 0; x < OW; x++) {
                    double s = 0;
                    for (int64_t ky = 0; ky < KH; ky++) {
                        for (int64_t kx = 0; kx < KW; kx++) {
                            int64_t iy = y * S + ky * D - P, ix = x * S + kx * D - P;
                            if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                                continue;
                            s += X({n, c, iy, ix}) * Wt({c, ky, kx});
                        }
                    }
                    Y.set({n, c, y, x}, s);
                }
            }
        }
    }
    return Y.t;
}

// Channel-blocked convolutions (conv2d_nchwc, depthwise_conv2d_nchwc): the blocked tensors are
// unblocked into NCHW, convolved by the NCHW references above, and the result blocked again, so
// these references rest on the same loops as the NCHW ops (and on index arithmetic written here,
// not in the op language): channel c is block c / cb, lane c % cb.
HostTensor unblock_activations(const HostTensor &t) {
    int64_t N = t.dims[0], CB = t.dims[1], H = t.dims[2], W = t.dims[3], cb = t.dims[4];
    View v{t};
    Out plain({N, CB * cb, H, W});
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < CB * cb; c++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t w = 0; w < W; w++)
                    plain.set({n, c, h, w}, v({n, c / cb, h, w, c % cb}));
    return plain.t;
}

HostTensor block_activations(const HostTensor &t, int64_t cb) {
    int64_t N = t.dims[0], C = t.dims[1], H = t.dims[2], W = t.dims[3];
    View v{t};
    Out blocked({N, C / cb, H, W, cb});
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t w = 0; w < W; w++)
                    blocked.set({n, c / cb, h, w, c % cb}, v({n, c, h, w}));
    return blocked.t;
}

// The parameters of the NCHW op that computes the same convolution.
BoundShape unblocked_shape(const Params &p, bool depthwise) {
    BoundShape s;
    for (const char *name : {"N", "H", "W", "KH", "KW", "stride", "pad", "dilation"})
        s.values[name] = p(name);
    s.values["C"] = p("CB") * p("cb");
    if (!depthwise)
        s.values["F"] = p("FB") * p("fb");
    return s;
}

HostTensor naive_conv_nchwc(const Params &p, const Inputs &in) {
    int64_t CB = p("CB"), FB = p("FB"), cb = p("cb"), fb = p("fb"), KH = p("KH"), KW = p("KW");
    View Wt{in.at("Wt")};
    Out oihw({FB * fb, CB * cb, KH, KW});
    for (int64_t f = 0; f < FB * fb; f++)
        for (int64_t c = 0; c < CB * cb; c++)
            for (int64_t ky = 0; ky < KH; ky++)
                for (int64_t kx = 0; kx < KW; kx++)
                    oihw.set({f, c, ky, kx}, Wt({f / fb, c / cb, ky, kx, c % cb, f % fb}));
    BoundShape plain = unblocked_shape(p, false);
    Inputs nchw{{"X", unblock_activations(in.at("X"))}, {"Wt", oihw.t}};
    return block_activations(naive_conv_nchw(Params{plain}, nchw, false), fb);
}

HostTensor naive_depthwise_nchwc(const Params &p, const Inputs &in) {
    int64_t CB = p("CB"), cb = p("cb"), KH = p("KH"), KW = p("KW");
    View Wt{in.at("Wt")};
    Out ckk({CB * cb, KH, KW});
    for (int64_t c = 0; c < CB * cb; c++)
        for (int64_t ky = 0; ky < KH; ky++)
            for (int64_t kx = 0; kx < KW; kx++)
                ckk.set({c, ky, kx}, Wt({c / cb, ky, kx, c % cb}));
    BoundShape plain = unblocked_shape(p, true);
    Inputs nchw{{"X", unblock_activations(in.at("X"))}, {"Wt", ckk.t}};
    return block_activations(naive_depthwise(Params{plain}, nchw), cb);
}

// Pooling: max ignores padding positions; average counts them (count_include_pad=True).
HostTensor naive_pool(const Params &p, const Inputs &in, bool is_max) {
    int64_t N = p("N"), C = p("C"), H = p("H"), W = p("W"), KH = p("KH"), KW = p("KW"),
            S = p("stride"), P = p("pad");
    int64_t OH = conv_out(H, KH, S, P, 1), OW = conv_out(W, KW, S, P, 1);
    View X{in.at("X")};
    Out Y({N, C, OH, OW});
    for (int64_t n = 0; n < N; n++) {
        for (int64_t c = 0; c < C; c++) {
            for (int64_t y = 0; y < OH; y++) {
                for (int64_t x = 0; x < OW; x++) {
                    double best = -std::numeric_limits<double>::infinity(), sum = 0;
                    for (int64_t ky = 0; ky < KH; ky++) {
                        for (int64_t kx = 0; kx < KW; kx++) {
                            int64_t iy = y * S + ky - P, ix = x * S + kx - P;
                            if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                                continue;
                            best = std::max(best, X({n, c, iy, ix}));
                            sum += X({n, c, iy, ix});
                        }
                    }
                    Y.set({n, c, y, x}, is_max ? best : sum / double(KH * KW));
                }
            }
        }
    }
    return Y.t;
}

HostTensor naive_elementwise(const Params &p, const Inputs &in,
                             const std::function<double(const Inputs &, int64_t, int64_t)> &f) {
    int64_t M = p("M"), N = p("N");
    Out Y({M, N});
    for (int64_t m = 0; m < M; m++) {
        for (int64_t n = 0; n < N; n++)
            Y.set({m, n}, f(in, m, n));
    }
    return Y.t;
}

HostTensor naive_row_reduce(const Params &p, const Inputs &in, bool is_max) {
    int64_t M = p("M"), N = p("N");
    View X{in.at("X")};
    Out Y({M});
    for (int64_t m = 0; m < M; m++) {
        double acc = is_max ? X({m, 0}) : 0.0;
        for (int64_t n = 0; n < N; n++)
            acc = is_max ? std::max(acc, X({m, n})) : acc + X({m, n});
        Y.set({m}, acc);
    }
    return Y.t;
}

HostTensor naive_softmax(const Params &p, const Inputs &in) {
    int64_t M = p("M"), N = p("N");
    View X{in.at("X")};
    Out Y({M, N});
    for (int64_t m = 0; m < M; m++) {
        double mx = X({m, 0}), total = 0;
        for (int64_t n = 1; n < N; n++)
            mx = std::max(mx, X({m, n}));
        for (int64_t n = 0; n < N; n++)
            total += std::exp(X({m, n}) - mx);
        for (int64_t n = 0; n < N; n++)
            Y.set({m, n}, std::exp(X({m, n}) - mx) / total);
    }
    return Y.t;
}

HostTensor naive_layernorm(const Params &p, const Inputs &in) {
    int64_t M = p("M"), N = p("N");
    View X{in.at("X")}, gamma{in.at("gamma")}, beta{in.at("beta")};
    Out Y({M, N});
    for (int64_t m = 0; m < M; m++) {
        double mean = 0, var = 0;
        for (int64_t n = 0; n < N; n++)
            mean += X({m, n});
        mean /= double(N);
        for (int64_t n = 0; n < N; n++)
            var += (X({m, n}) - mean) * (X({m, n}) - mean);
        var /= double(N);
        for (int64_t n = 0; n < N; n++) {
            Y.set({m, n}, (X({m, n}) - mean) / std::sqrt(var + 1e-5) * gamma({n}) + beta({n}));
        }
    }
    return Y.t;
}

HostTensor naive_transpose2d(const Params &p, const Inputs &in) {
    int64_t M = p("M"), N = p("N");
    View X{in.at("X")};
    Out Y({N, M});
    for (int64_t m = 0; m < M; m++) {
        for (int64_t n = 0; n < N; n++)
            Y.set({n, m}, X({m, n}));
    }
    return Y.t;
}

// Layout change between NCHW and NHWC, either way.
HostTensor naive_relayout(const Params &p, const Inputs &in, bool to_nhwc) {
    int64_t N = p("N"), C = p("C"), H = p("H"), W = p("W");
    View X{in.at("X")};
    Out Y(to_nhwc ? std::vector<int64_t>{N, H, W, C} : std::vector<int64_t>{N, C, H, W});
    for (int64_t n = 0; n < N; n++) {
        for (int64_t c = 0; c < C; c++) {
            for (int64_t h = 0; h < H; h++) {
                for (int64_t w = 0; w < W; w++) {
                    if (to_nhwc) {
                        Y.set({n, h, w, c}, X({n, c, h, w}));
                    } else {
                        Y.set({n, c, h, w}, X({n, h, w, c}));
                    }
                }
            }
        }
    }
    return Y.t;
}

using Naive = std::function<HostTensor(const Params &, const Inputs &)>;

// One bundled op: two shapes and how close a float32 kernel must come to the double-precision
// naive result, as max |got - want| / (1 + |want|). Copies, max, min and single additions or
// multiplications of floats are exact (0). Reductions over up to a few hundred products of values
// in [-1, 1) lose a few float ulps to rounding and summation order (seen: up to 6.5e-7; allowed
// 1e-5); exp and erf are Halide's polynomial approximations (seen: 4e-8; allowed 1e-6).
struct OpCase {
    std::string op;
    std::vector<std::string> shapes; // the second has odd, non-power-of-two extents
    double tolerance;
    Naive naive;
};

const std::vector<OpCase> &op_cases() {
    static const std::vector<OpCase> cases = {
        {"matmul", {"M=16,N=64,K=32", "M=13,N=37,K=19"}, 1e-5, naive_matmul},
        {"matmul_u8s8",
         {"M=16,N=64,K=32", "M=13,N=37,K=20", "M=5,N=19,K=44"},
         0.0,
         [](const Params &p, const Inputs &in) {
             return naive_packed_matmul(p, in, 4, DType::I32);
         }},
        {"matmul_bf16",
         {"M=16,N=64,K=32", "M=13,N=37,K=20", "M=5,N=19,K=22"},
         1e-5,
         [](const Params &p, const Inputs &in) {
             return naive_packed_matmul(p, in, 2, DType::F32);
         }},
        {"matmul_u8s8_requant",
         {"M=16,N=64,K=32", "M=13,N=37,K=20"},
         0.0,
         [](const Params &p, const Inputs &in) { return naive_requant_matmul(p, in, DType::U8); }},
        {"matmul_u8s8_requant_s8",
         {"M=16,N=64,K=32", "M=13,N=37,K=20"},
         0.0,
         [](const Params &p, const Inputs &in) { return naive_requant_matmul(p, in, DType::I8); }},
        {"conv2d_nhwc_u8s8_requant",
         {"N=1,H=8,W=8,C=16,F=32", "N=2,H=7,W=9,C=12,F=20,stride=2,pad=2,dilation=2",
          "N=1,H=6,W=7,C=8,F=24,KH=1,KW=1,pad=0"},
         0.0,
         naive_requant_conv_nhwc},
        {"batch_matmul",
         {"BATCH=2,M=8,N=32,K=16", "BATCH=3,M=7,N=21,K=11"},
         1e-5,
         [](const Params &p, const Inputs &in) { return naive_batch_matmul(p, in, false); }},
        {"batch_matmul_nt",
         {"BATCH=2,M=8,N=32,K=16", "BATCH=3,M=7,N=21,K=11"},
         1e-5,
         [](const Params &p, const Inputs &in) { return naive_batch_matmul(p, in, true); }},
        {"matmul_bias_relu",
         {"M=16,N=64,K=32", "M=11,N=35,K=17"},
         1e-5,
         [](const Params &p, const Inputs &in) { return naive_matmul_bias(p, in, relu); }},
        {"matmul_bias_gelu",
         {"M=16,N=64,K=32", "M=9,N=23,K=13"},
         1e-5,
         [](const Params &p, const Inputs &in) { return naive_matmul_bias(p, in, gelu); }},
        {"conv2d_nchw",
         {"N=1,C=4,H=8,W=8,F=8", "N=2,C=3,H=9,W=11,F=5,stride=2,pad=2,dilation=2",
          "N=2,C=20,H=6,W=7,F=24,KH=1,KW=1,stride=1,pad=0",
          // A 1x1 at stride 2 with padding: the gathered row GEMM (rows of 21 rounded up to 32).
          "N=1,C=24,H=36,W=40,F=16,KH=1,KW=1,stride=2,pad=1"},
         1e-5,
         [](const Params &p, const Inputs &in) { return naive_conv_nchw(p, in, false); }},
        {"conv2d_nhwc",
         {"N=1,H=8,W=8,C=4,F=16", "N=2,H=7,W=9,C=3,F=5,KH=5,KW=3,stride=2,pad=1,dilation=1",
          "N=1,H=5,W=7,C=6,F=20,KH=1,KW=1,stride=1,pad=0",
          "N=1,H=9,W=11,C=6,F=20,KH=1,KW=1,stride=2,pad=0"},
         1e-5,
         naive_conv_nhwc},
        {"conv2d_bias_relu",
         {"N=1,C=4,H=8,W=8,F=8", "N=1,C=3,H=7,W=13,F=6,KH=1,KW=5,stride=1,pad=0,dilation=1",
          "N=1,C=9,H=4,W=9,F=16,KH=1,KW=1,stride=1,pad=0"},
         1e-5,
         [](const Params &p, const Inputs &in) { return naive_conv_nchw(p, in, true); }},
        {"depthwise_conv2d",
         {"N=1,C=8,H=16,W=16", "N=2,C=5,H=9,W=7,stride=2,pad=2,dilation=2"},
         1e-5,
         naive_depthwise},
        {"conv2d_nchwc",
         {"N=1,CB=2,H=8,W=8,FB=2,cb=4,fb=8",
          "N=2,CB=3,H=9,W=11,FB=2,cb=3,fb=5,KH=3,KW=2,stride=2,pad=2,dilation=2",
          "N=1,CB=3,H=5,W=6,FB=4,cb=4,fb=16,KH=1,KW=1,stride=1,pad=0"},
         1e-5,
         naive_conv_nchwc},
        {"depthwise_conv2d_nchwc",
         {"N=1,CB=2,H=16,W=16,cb=8", "N=2,CB=3,H=9,W=7,cb=5,stride=2,pad=2,dilation=2"},
         1e-5,
         naive_depthwise_nchwc},
        {"max_pool2d",
         {"N=1,C=4,H=8,W=16", "N=2,C=3,H=9,W=11,KH=3,KW=3,stride=2,pad=1"},
         0.0,
         [](const Params &p, const Inputs &in) { return naive_pool(p, in, true); }},
        {"avg_pool2d",
         {"N=1,C=4,H=8,W=16", "N=2,C=3,H=9,W=11,KH=3,KW=3,stride=2,pad=1"},
         1e-6,
         [](const Params &p, const Inputs &in) { return naive_pool(p, in, false); }},
        {"add",
         {"M=8,N=64", "M=7,N=37"},
         0.0,
         [](const Params &p, const Inputs &in) {
             return naive_elementwise(p, in, [](const Inputs &i, int64_t m, int64_t n) {
                 return View{i.at("A")}({m, n}) + View{i.at("B")}({m, n});
             });
         }},
        {"mul",
         {"M=8,N=64", "M=7,N=37"},
         0.0,
         [](const Params &p, const Inputs &in) {
             return naive_elementwise(p, in, [](const Inputs &i, int64_t m, int64_t n) {
                 return View{i.at("A")}({m, n}) * View{i.at("B")}({m, n});
             });
         }},
        {"relu",
         {"M=8,N=64", "M=5,N=23"},
         0.0,
         [](const Params &p, const Inputs &in) {
             return naive_elementwise(p, in, [](const Inputs &i, int64_t m, int64_t n) {
                 return relu(View{i.at("X")}({m, n}));
             });
         }},
        {"gelu",
         {"M=8,N=64", "M=5,N=23"},
         1e-6,
         [](const Params &p, const Inputs &in) {
             return naive_elementwise(p, in, [](const Inputs &i, int64_t m, int64_t n) {
                 return gelu(View{i.at("X")}({m, n}));
             });
         }},
        {"sigmoid",
         {"M=8,N=64", "M=5,N=23"},
         1e-6,
         [](const Params &p, const Inputs &in) {
             return naive_elementwise(p, in, [](const Inputs &i, int64_t m, int64_t n) {
                 return 1.0 / (1.0 + std::exp(-View{i.at("X")}({m, n})));
             });
         }},
        {"reduce_sum",
         {"M=32,N=64", "M=13,N=29"},
         1e-5,
         [](const Params &p, const Inputs &in) { return naive_row_reduce(p, in, false); }},
        {"reduce_max",
         {"M=32,N=64", "M=13,N=29"},
         0.0,
         [](const Params &p, const Inputs &in) { return naive_row_reduce(p, in, true); }},
        {"softmax", {"M=16,N=64", "M=7,N=19"}, 1e-6, naive_softmax},
        {"layernorm", {"M=16,N=64", "M=7,N=19"}, 1e-5, naive_layernorm},
        {"transpose2d", {"M=16,N=32", "M=7,N=13"}, 0.0, naive_transpose2d},
        {"nchw_to_nhwc",
         {"N=1,C=8,H=4,W=16", "N=2,C=3,H=5,W=7"},
         0.0,
         [](const Params &p, const Inputs &in) { return naive_relayout(p, in, true); }},
        {"nhwc_to_nchw",
         {"N=1,H=4,W=16,C=8", "N=2,H=5,W=7,C=3"},
         0.0,
         [](const Params &p, const Inputs &in) { return naive_relayout(p, in, false); }},
    };
    return cases;
}

const OpCase *find_case(const std::string &op) {
    for (const auto &c : op_cases()) {
        if (c.op == op)
            return &c;
    }
    return nullptr;
}

std::string ops_dir() {
    return std::string(OPGEN_SOURCE_DIR) + "/ops";
}

ComputeDef load_bundled(const std::string &op) {
    return load_op_file(ops_dir() + "/" + op + ".op");
}

// max |got - want| / (1 + |want|) over every point, failing with the first point beyond `tol`.
testing::AssertionResult matches(const HostTensor &got, const HostTensor &want, double tol) {
    if (got.dims != want.dims)
        return testing::AssertionFailure() << "output dims differ";
    double worst = 0;
    int64_t worst_at = -1;
    for (int64_t i = 0; i < want.elements(); i++) {
        double g = got.at(i), w = want.at(i);
        double err = std::isfinite(g) ? std::fabs(g - w) / (1.0 + std::fabs(w))
                                      : std::numeric_limits<double>::infinity();
        if (err > worst) {
            worst = err;
            worst_at = int64_t(i);
        }
    }
    if (worst <= tol)
        return testing::AssertionSuccess();
    return testing::AssertionFailure()
           << "max error " << worst << " > tolerance " << tol << " at flat index " << worst_at
           << ": got " << got.at(worst_at) << ", want " << want.at(worst_at);
}

struct Prepared {
    ComputeDef def;
    BoundShape shape;
    Inputs inputs;
    HostTensor want;
};

// The naive loop computes the op at the shape as given, with its inputs' dims there; where a view
// keys the op by another shape (a 1x1 convolution's flattened pixels) the kernel and the reference
// evaluator run at that one, over the same memory, so the view cannot change what is computed.
Prepared prepare(const OpCase &c, size_t shape_index) {
    Prepared p;
    p.def = load_bundled(c.op);
    p.shape = bind_shape(p.def, c.shapes.at(shape_index));
    p.inputs = random_inputs(p.def, p.shape, 1000 + shape_index);
    ComputeDef plain = p.def;
    plain.views.clear();
    const BoundShape given = bind_shape(plain, c.shapes.at(shape_index));
    Inputs as_given = p.inputs;
    for (auto &[name, t] : as_given) t.dims = given.dims.at(name);
    p.want = c.naive(Params{given}, as_given);
    EXPECT_EQ(p.want.elements(), p.shape.elements(p.def.output().name));
    p.want.dims = p.shape.dims.at(p.def.output().name);
    return p;
}

HostTensor run_kernel(Prepared &p, bool heuristic) {
    Target host = host_target();
    const SchedulePoint hp = heuristic_point(p.def, p.shape, host);
    LoweredOp op = lower_for_point(p.def, p.shape, heuristic ? &hp : nullptr);
    if (heuristic) {
        apply_schedule(op, hp, host);
    } else {
        apply_default_schedule(op, host);
    }
    JitKernel kernel(op, host);
    HostTensor out = make_host_tensor(p.def.output().dtype, p.shape.dims.at(p.def.output().name));
    // Poisoned everywhere, so that a point the kernel never writes cannot pass by accident.
    poison(out);
    kernel.bind(p.inputs, out);
    kernel.run();
    return out;
}

struct CaseParam {
    const OpCase *c;
    size_t shape_index;
};

std::string case_name(const testing::TestParamInfo<CaseParam> &info) {
    return info.param.c->op + "_shape" + std::to_string(info.param.shape_index);
}

std::vector<CaseParam> all_params() {
    std::vector<CaseParam> out;
    for (const auto &c : op_cases()) {
        for (size_t i = 0; i < c.shapes.size(); i++)
            out.push_back({&c, i});
    }
    return out;
}

class OpsReference : public testing::TestWithParam<CaseParam> {};

TEST_P(OpsReference, DefaultScheduleMatchesNaive) {
    const OpCase &c = *GetParam().c;
    Prepared p = prepare(c, GetParam().shape_index);
    EXPECT_TRUE(matches(run_kernel(p, false), p.want, c.tolerance))
        << c.op << " at " << p.shape.canonical;
}

TEST_P(OpsReference, HeuristicScheduleMatchesNaive) {
    const OpCase &c = *GetParam().c;
    Prepared p = prepare(c, GetParam().shape_index);
    SchedulePoint point = heuristic_point(p.def, p.shape, host_target());
    EXPECT_TRUE(matches(run_kernel(p, true), p.want, c.tolerance))
        << c.op << " at " << p.shape.canonical << " with " << point.summary();
}

// The project's reference interpreter accepts the naive result at the op's tolerance (it computes
// in double as well, so it gets a tighter bound than a float kernel).
TEST_P(OpsReference, ReferenceEvaluatorMatchesNaive) {
    const OpCase &c = *GetParam().c;
    Prepared p = prepare(c, GetParam().shape_index);
    // The naive function computes the output size on its own (conv arithmetic included).
    ASSERT_EQ(p.want.dims, p.shape.dims.at(p.def.output().name));
    Verification v = verify_output(p.def, p.shape, p.inputs, p.want, std::max(c.tolerance, 1e-6));
    EXPECT_TRUE(v.ok) << c.op << " at " << p.shape.canonical << ": " << v.first_mismatch;
    EXPECT_EQ(v.points_checked, p.want.elements());
}

INSTANTIATE_TEST_SUITE_P(BundledOps, OpsReference, testing::ValuesIn(all_params()), case_name);

// Every op file parses, is named after its op, has a doc line, and has a naive reference here;
// every naive reference has its op file, at two shapes, and a third for an op with a view (a shape
// where the view applies: the naive loop runs at the shape as given, the kernel at the view's).
TEST(OpsLibrary, EveryOpIsCovered) {
    std::set<std::string> files;
    for (const auto &e : std::filesystem::directory_iterator(ops_dir())) {
        if (e.path().extension() != ".op")
            continue;
        std::string stem = e.path().stem().string();
        files.insert(stem);
        ComputeDef def;
        ASSERT_NO_THROW(def = load_op_file(e.path().string())) << e.path();
        EXPECT_EQ(def.name, stem);
        EXPECT_FALSE(def.doc.empty()) << stem << " has no doc comment";
        EXPECT_NE(find_case(stem), nullptr) << "ops/" << stem << ".op has no naive reference in "
                                            << "tests/core/OpsReferenceTest.cpp";
    }
    for (const auto &c : op_cases()) {
        EXPECT_TRUE(files.count(c.op)) << "naive reference for missing op '" << c.op << "'";
        // Two shapes, one more where a view applies (and the convolutions one at stride 2 with a 1x1
        // window: their gathered read, core/Gather.h).
        EXPECT_GE(c.shapes.size(), load_bundled(c.op).views.empty() ? 2u : 3u) << c.op;
    }
    EXPECT_GE(files.size(), 24u);
}

// The naive references are themselves checked on a hand-computed case, so that the suite does not
// rest on a reference that is wrong in the same way as the op.
TEST(OpsLibrary, NaiveReferencesOnHandComputedValues) {
    ComputeDef def = load_bundled("conv2d_nchw");
    BoundShape shape = bind_shape(def, "N=1,C=1,H=2,W=2,F=1");
    Inputs in;
    in["X"] = HostTensor{{1, 1, 2, 2}, {1, 2, 3, 4}};
    in["Wt"] = HostTensor{{1, 1, 3, 3}, {0, 0, 0, 0, 1, 1, 0, 1, 0}};
    HostTensor y = naive_conv_nchw(Params{shape}, in, false);
    // Centre tap + right neighbour + lower neighbour, zero outside.
    EXPECT_EQ(y.data, (std::vector<float>{1 + 2 + 3, 2 + 4, 3 + 4, 4}));

    ComputeDef pool = load_bundled("avg_pool2d");
    BoundShape ps = bind_shape(pool, "N=1,C=1,H=2,W=2,KH=2,KW=2,stride=1,pad=1");
    HostTensor avg = naive_pool(Params{ps}, {{"X", in["X"]}}, false);
    EXPECT_EQ(avg.dims, (std::vector<int64_t>{1, 1, 3, 3}));
    EXPECT_FLOAT_EQ(avg.data[0], 0.25f);        // only X[0, 0] in the window, divided by 4
    EXPECT_FLOAT_EQ(avg.data[4], 10.0f / 4.0f); // the full window
    HostTensor mx =
        naive_pool(Params{ps}, {{"X", HostTensor{{1, 1, 2, 2}, {-1, -2, -3, -4}}}}, true);
    EXPECT_FLOAT_EQ(mx.data[0], -1.0f); // padding never wins, even over negative values
    EXPECT_FLOAT_EQ(mx.data[8], -4.0f);
}

// Max pooling with padding over all-negative inputs: a zero from the padding must never win.
TEST(OpsLibrary, MaxPoolPaddingNeverWins) {
    ComputeDef def = load_bundled("max_pool2d");
    BoundShape shape = bind_shape(def, "N=1,C=2,H=5,W=6,KH=3,KW=3,stride=2,pad=1");
    Prepared p;
    p.def = def;
    p.shape = shape;
    p.inputs = random_inputs(def, shape, 5);
    for (auto &v : p.inputs["X"].data)
        v = -1.0f - std::fabs(v);
    p.want = naive_pool(Params{shape}, p.inputs, true);
    for (float v : p.want.data)
        ASSERT_LT(v, -1.0f);
    EXPECT_TRUE(matches(run_kernel(p, false), p.want, 0.0));
    EXPECT_TRUE(matches(run_kernel(p, true), p.want, 0.0));
}

} // namespace
