#include "tests/bench/Naive.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace opgen::bench {

namespace {

class NaiveLoop : public Contender {
public:
    NaiveLoop(HostTensor out, std::function<void(float *)> body)
        : out_(std::move(out)), body_(std::move(body)) {}
    void run() override {
        std::fill(out_.data.begin(), out_.data.end(), 0.0f);
        body_(out_.data.data());
    }
    HostTensor &output() override { return out_; }

private:
    HostTensor out_;
    std::function<void(float *)> body_;
};

const float *in(const Problem &p, const char *name) {
    return p.inputs.at(name).data.data();
}

// C[m, n] = sum_k A[m, k] B[k, n], i-k-j order.
std::function<void(float *)> matmul(const Problem &p) {
    const int64_t M = p.value("M"), N = p.value("N"), K = p.value("K");
    const float *A = in(p, "A"), *B = in(p, "B");
    return [=](float *C) {
        for (int64_t m = 0; m < M; m++) {
            for (int64_t k = 0; k < K; k++) {
                const float a = A[m * K + k];
                for (int64_t n = 0; n < N; n++)
                    C[m * N + n] += a * B[k * N + n];
            }
        }
    };
}

struct ConvGeometry {
    int64_t N, C, H, W, F, KH, KW, OH, OW, stride, pad, dilation;
};

ConvGeometry geometry(const Problem &p, bool depthwise) {
    ConvGeometry g;
    g.N = p.value("N");
    g.C = p.value("C");
    g.H = p.value("H");
    g.W = p.value("W");
    g.F = depthwise ? g.C : p.value("F");
    g.KH = p.value("KH");
    g.KW = p.value("KW");
    g.OH = p.value("OH");
    g.OW = p.value("OW");
    g.stride = p.value("stride");
    g.pad = p.value("pad");
    g.dilation = p.value("dilation");
    return g;
}

// One output plane += one input plane under one filter tap, zero outside the input.
inline void accumulate_plane(float *Y, const float *X, float w, const ConvGeometry &g, int64_t ry,
                             int64_t rx) {
    for (int64_t y = 0; y < g.OH; y++) {
        int64_t iy = y * g.stride + ry * g.dilation - g.pad;
        if (iy < 0 || iy >= g.H)
            continue;
        for (int64_t x = 0; x < g.OW; x++) {
            int64_t ix = x * g.stride + rx * g.dilation - g.pad;
            if (ix >= 0 && ix < g.W)
                Y[y * g.OW + x] += X[iy * g.W + ix] * w;
        }
    }
}

std::function<void(float *)> conv2d(const Problem &p, bool depthwise) {
    const ConvGeometry g = geometry(p, depthwise);
    const float *X = in(p, "X"), *Wt = in(p, "Wt");
    return [=](float *Y) {
        for (int64_t n = 0; n < g.N; n++) {
            for (int64_t f = 0; f < g.F; f++) {
                float *yplane = Y + (n * g.F + f) * g.OH * g.OW;
                int64_t c0 = depthwise ? f : 0, c1 = depthwise ? f + 1 : g.C;
                for (int64_t c = c0; c < c1; c++) {
                    const float *xplane = X + (n * g.C + c) * g.H * g.W;
                    const float *w =
                        depthwise ? Wt + f * g.KH * g.KW : Wt + (f * g.C + c) * g.KH * g.KW;
                    for (int64_t ry = 0; ry < g.KH; ry++) {
                        for (int64_t rx = 0; rx < g.KW; rx++)
                            accumulate_plane(yplane, xplane, w[ry * g.KW + rx], g, ry, rx);
                    }
                }
            }
        }
    };
}

std::function<void(float *)> softmax(const Problem &p) {
    const int64_t M = p.value("M"), N = p.value("N");
    const float *X = in(p, "X");
    return [=](float *Y) {
        for (int64_t m = 0; m < M; m++) {
            const float *x = X + m * N;
            float *y = Y + m * N;
            float mx = x[0];
            for (int64_t n = 1; n < N; n++)
                mx = std::max(mx, x[n]);
            float sum = 0;
            for (int64_t n = 0; n < N; n++) {
                y[n] = std::exp(x[n] - mx);
                sum += y[n];
            }
            for (int64_t n = 0; n < N; n++)
                y[n] /= sum;
        }
    };
}

std::function<void(float *)> layernorm(const Problem &p) {
    const int64_t M = p.value("M"), N = p.value("N");
    const float *X = in(p, "X"), *gamma = in(p, "gamma"), *beta = in(p, "beta");
    return [=](float *Y) {
        for (int64_t m = 0; m < M; m++) {
            const float *x = X + m * N;
            float mean = 0;
            for (int64_t n = 0; n < N; n++)
                mean += x[n];
            mean /= float(N);
            float var = 0;
            for (int64_t n = 0; n < N; n++)
                var += (x[n] - mean) * (x[n] - mean);
            var /= float(N);
            float inv = 1.0f / std::sqrt(var + 1e-5f);
            for (int64_t n = 0; n < N; n++)
                Y[m * N + n] = (x[n] - mean) * inv * gamma[n] + beta[n];
        }
    };
}

} // namespace

Entrant make_naive(const Problem &p) {
    const std::string &op = p.def->name;
    std::function<void(float *)> body;
    if (op == "matmul")
        body = matmul(p);
    if (op == "conv2d_nchw")
        body = conv2d(p, false);
    if (op == "depthwise_conv2d")
        body = conv2d(p, true);
    if (op == "softmax")
        body = softmax(p);
    if (op == "layernorm")
        body = layernorm(p);
    if (!body)
        return Entrant::failed("naive", "naive", "unsupported",
                               "no naive loop for op '" + op + "'");
    Entrant e;
    e.name = "naive";
    e.family = "naive";
    e.detail = "plain loops, serial, baseline x86-64 ISA";
    e.contender = std::make_unique<NaiveLoop>(p.make_output(), std::move(body));
    return e;
}

} // namespace opgen::bench
