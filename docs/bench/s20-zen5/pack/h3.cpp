// h3: times kernel `kern` (conv2d_nchw 3x3 pad 1 stride 1) at H C F; checks 100 outputs.
#include "HalideBuffer.h"
#include "kern.h"
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
using Halide::Runtime::Buffer;
int main(int argc, char **argv) {
    int H = atoi(argv[1]), C = atoi(argv[2]), F = atoi(argv[3]), reps = atoi(argv[4]);
    Buffer<float> X(H, H, C, 1), W(3, 3, C, F), Y(H, H, F, 1);
    for (int c = 0; c < C; c++) for (int y = 0; y < H; y++) for (int x = 0; x < H; x++) X(x, y, c, 0) = float((x * 7 + y * 5 + c * 3) % 13) * 0.1f;
    for (int f = 0; f < F; f++) for (int c = 0; c < C; c++) for (int r = 0; r < 9; r++) W(r % 3, r / 3, c, f) = float((f * 5 + c + r) % 11) * 0.1f;
    if (kern(X, W, Y)) return 2;
    double err = 0;
    for (int t = 0; t < 100; t++) { int x = (t * 7) % H, y = (t * 11) % H, f = (t * 31) % F; double s = 0;
        for (int c = 0; c < C; c++) for (int ry = 0; ry < 3; ry++) for (int rx = 0; rx < 3; rx++) {
            int yy = y + ry - 1, xx = x + rx - 1; if (yy < 0 || xx < 0 || yy >= H || xx >= H) continue;
            s += double(X(xx, yy, c, 0)) * W(rx, ry, c, f); }
        err = std::max(err, std::abs(s - Y(x, y, f, 0)) / (1 + std::abs(s))); }
    std::vector<double> ts;
    for (int r = 0; r < reps; r++) { auto t0 = std::chrono::steady_clock::now(); kern(X, W, Y);
        ts.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()); }
    std::sort(ts.begin(), ts.end()); double fl = 2.0 * H * H * C * F * 9;
    printf("err %.2g GFLOP/s p0 %.1f p25 %.1f p50 %.1f p75 %.1f\n", err, fl / ts[0] / 1e9, fl / ts[ts.size() / 4] / 1e9, fl / ts[ts.size() / 2] / 1e9, fl / ts[3 * ts.size() / 4] / 1e9);
}
