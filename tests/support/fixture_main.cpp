// opgen_test_fixture NAME: makes the shared kernel fixture NAME (tests/support/KernelFixtures.h)
// unless this run already made it, and prints its folder. For tests that are not GoogleTest
// binaries (tests/consumer/run.cmake), so that they share the code tests' tuned caches.
#include "tests/support/KernelFixtures.h"

#include <cstdio>
#include <cstring>
#include <exception>

int main(int argc, char **argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: opgen_test_fixture code-tuned|code-generic\n");
        return 2;
    }
    try {
        if (std::strcmp(argv[1], "code-tuned") == 0) {
            std::printf("%s\n", opgen::test::tuned_cache_folder().c_str());
        } else if (std::strcmp(argv[1], "code-generic") == 0) {
            std::printf("%s\n", opgen::test::generic_cache_folder().c_str());
        } else {
            std::fprintf(stderr, "error: no fixture named '%s'\n", argv[1]);
            return 2;
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}
