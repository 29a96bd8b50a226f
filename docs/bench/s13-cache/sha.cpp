#include "db/Sha256.h"
#include <chrono>
#include <cstdio>
#include <vector>
int main() {
    std::vector<unsigned char> b(1 << 20, 7);
    for (int r = 0; r < 3; r++) {
        auto t0 = std::chrono::steady_clock::now();
        opgen::db::Sha256 h; h.add(b.data(), b.size()); std::string d = h.hex();
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        std::printf("sha256 1 MiB: %.2f ms (%s)\n", ms, d.substr(0, 8).c_str());
    }
}
