#include "HalideBuffer.h"
#include "kern.h"
#include <chrono>
#include <cstdio>
#include <cstdlib>
using Halide::Runtime::Buffer;
int main(int argc, char **argv) {
    int P = atoi(argv[1]), C = atoi(argv[2]), F = atoi(argv[3]), reps = atoi(argv[4]);
    Buffer<float> X(P, 1, C, 1), W(1, 1, C, F), Y(P, 1, F, 1);
    X.fill(0.5f); W.fill(0.25f);
    double fl = 2.0 * P * C * F;
    auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; r++) {
        auto t0 = std::chrono::steady_clock::now(); kern(X, W, Y);
        auto t1 = std::chrono::steady_clock::now();
        printf("%.3f %.1f\n", std::chrono::duration<double>(t0 - start).count() * 1e3, fl / std::chrono::duration<double>(t1 - t0).count() / 1e9);
    }
}
