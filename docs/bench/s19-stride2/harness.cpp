// Times one emitted conv2d_nchw kernel: median of many calls, GFLOP/s.
#include "HalideBuffer.h"
#include "kern.h"
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
using Halide::Runtime::Buffer;
int main(int argc, char **argv) {
    int P = atoi(argv[1]), C = atoi(argv[2]), F = atoi(argv[3]);
    int reps = argc > 4 ? atoi(argv[4]) : 200;
    Buffer<float> X(P, 1, C, 1), W(1, 1, C, F), Y(P, 1, F, 1);
    for (int c = 0; c < C; c++) for (int p = 0; p < P; p++) X(p, 0, c, 0) = float((p * 7 + c * 3) % 13) * 0.1f;
    for (int f = 0; f < F; f++) for (int c = 0; c < C; c++) W(0, 0, c, f) = float((f * 5 + c) % 11) * 0.1f;
    kern(X, W, Y);
    // check a few outputs
    double err = 0;
    for (int t = 0; t < 50; t++) { int p = (t * 977) % P, f = (t * 31) % F; double s = 0;
        for (int c = 0; c < C; c++) s += double(X(p, 0, c, 0)) * W(0, 0, c, f);
        err = std::max(err, std::abs(s - Y(p, 0, f, 0)) / (1 + std::abs(s))); }
    std::vector<double> ts;
    for (int r = 0; r < reps; r++) {
        auto t0 = std::chrono::steady_clock::now(); kern(X, W, Y);
        ts.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()); }
    std::sort(ts.begin(), ts.end());
    double fl = 2.0 * P * C * F;
    printf("err %.2g  GFLOP/s p0 %.1f p10 %.1f p25 %.1f p50 %.1f p75 %.1f p90 %.1f\n", err, fl/ts[0]/1e9, fl/ts[ts.size()/10]/1e9, fl/ts[ts.size()/4]/1e9, fl/ts[ts.size()/2]/1e9, fl/ts[3*ts.size()/4]/1e9, fl/ts[9*ts.size()/10]/1e9);
}
