#include "HalideBuffer.h"
#include "k.h"
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cmath>
using Halide::Runtime::Buffer;
int main(int argc, char **argv) {
    int H = atoi(argv[1]), C = atoi(argv[2]), F = atoi(argv[3]), reps = atoi(argv[4]); int Wo = H / 2;
    Buffer<float> X(H, H, C, 1), W(1, 1, C, F), Y(Wo, Wo, F, 1);
    for (int c = 0; c < C; c++) for (int y = 0; y < H; y++) for (int x = 0; x < H; x++) X(x, y, c, 0) = float((x * 7 + y * 5 + c * 3) % 13) * 0.1f;
    for (int f = 0; f < F; f++) for (int c = 0; c < C; c++) W(0, 0, c, f) = float((f * 5 + c) % 11) * 0.1f;
    if (k(X, W, Y)) return 2;
    double err = 0;
    for (int t = 0; t < 100; t++) { int x = (t * 7) % Wo, y = (t * 11) % Wo, f = (t * 31) % F; double s = 0;
        for (int c = 0; c < C; c++) s += double(X(2 * x, 2 * y, c, 0)) * W(0, 0, c, f);
        err = std::max(err, std::abs(s - Y(x, y, f, 0)) / (1 + std::abs(s))); }
    std::vector<double> ts;
    for (int r = 0; r < reps; r++) { auto t0 = std::chrono::steady_clock::now(); k(X, W, Y);
        ts.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()); }
    std::sort(ts.begin(), ts.end()); double fl = 2.0 * Wo * Wo * C * F;
    printf("err %.2g  GFLOP/s p0 %.1f p10 %.1f p25 %.1f p50 %.1f p75 %.1f p90 %.1f\n", err, fl/ts[0]/1e9, fl/ts[ts.size()/10]/1e9, fl/ts[ts.size()/4]/1e9, fl/ts[ts.size()/2]/1e9, fl/ts[3*ts.size()/4]/1e9, fl/ts[9*ts.size()/10]/1e9);
}
