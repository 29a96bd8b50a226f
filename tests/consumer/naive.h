/* Naive reference loops and deterministic inputs, shared by the consumer's C programs. */
#ifndef OPGEN_CONSUMER_NAIVE_H
#define OPGEN_CONSUMER_NAIVE_H

#include <math.h>
#include <stdlib.h>

static float *filled(long long n, int modulus, int offset) {
    float *v = malloc((size_t)n * sizeof(float));
    for (long long i = 0; i < n; i++) v[i] = (float)((i * 7 + 3) % modulus - offset);
    return v;
}

/* The largest |got - want| / max(1, |want|). */
static double worst(const float *got, const float *want, long long n) {
    double w = 0;
    for (long long i = 0; i < n; i++) {
        double e = fabs((double)got[i] - want[i]) / fmax(1.0, fabs((double)want[i]));
        if (!(e <= w)) w = e; /* NaN counts as the worst */
    }
    return w;
}

/* C[M,N] = A[M,K] B[K,N], all row-major. */
static void naive_matmul(const float *A, const float *B, float *C, long long M, long long N, long long K) {
    for (long long m = 0; m < M; m++)
        for (long long n = 0; n < N; n++) {
            double s = 0;
            for (long long k = 0; k < K; k++) s += (double)A[m * K + k] * B[k * N + n];
            C[m * N + n] = (float)s;
        }
}

/* conv2d_nchw with stride 1, dilation 1 and padding 1 (the op's defaults): rows and columns
 * outside X read 0. */
static void naive_conv(const float *X, const float *Wt, float *Y, long long N, long long C, long long H,
                       long long W, long long F, long long KH, long long KW, long long OH, long long OW) {
    for (long long n = 0; n < N; n++)
        for (long long f = 0; f < F; f++)
            for (long long oy = 0; oy < OH; oy++)
                for (long long ox = 0; ox < OW; ox++) {
                    double s = 0;
                    for (long long c = 0; c < C; c++)
                        for (long long ry = 0; ry < KH; ry++)
                            for (long long rx = 0; rx < KW; rx++) {
                                long long iy = oy + ry - 1, ix = ox + rx - 1;
                                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                                s += (double)X[((n * C + c) * H + iy) * W + ix] *
                                     Wt[((f * C + c) * KH + ry) * KW + rx];
                            }
                    Y[((n * F + f) * OH + oy) * OW + ox] = (float)s;
                }
}

/* Softmax over each row of X[M,N]. */
static void naive_softmax(const float *X, float *Y, long long M, long long N) {
    for (long long m = 0; m < M; m++) {
        double top = X[m * N], sum = 0;
        for (long long n = 1; n < N; n++) top = fmax(top, X[m * N + n]);
        for (long long n = 0; n < N; n++) sum += exp(X[m * N + n] - top);
        for (long long n = 0; n < N; n++) Y[m * N + n] = (float)(exp(X[m * N + n] - top) / sum);
    }
}

#endif
