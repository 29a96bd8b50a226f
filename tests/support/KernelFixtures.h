// The kernel fixtures of the tests that load code from a cache: caches tuned by the real opgen
// command (which stores each winner's code), made once per test run and shared
// (tests/support/SharedFixture.h). Read-only: tests copy the database out. The code tests
// (tests/code), and the consumer project through opgen_test_fixture (tests/consumer/run.cmake),
// use them. Each raises std::runtime_error when the command fails.
#ifndef OPGEN_TESTS_SUPPORT_KERNEL_FIXTURES_H
#define OPGEN_TESTS_SUPPORT_KERNEL_FIXTURES_H

#include <filesystem>
#include <stdexcept>
#include <string>

#include "tests/batch/CommandRun.h"
#include "tests/support/SharedFixture.h"

namespace opgen::test {

namespace fs = std::filesystem;

// Small enough to tune in seconds; three unequal extents, so a transposed kernel is caught.
inline constexpr int kM = 24, kN = 56, kK = 40;
inline const char *kMatmulShape = "M=24,N=56,K=40";
inline constexpr int kSoftmaxM = 16, kSoftmaxN = 100;
inline const char *kSoftmaxShape = "M=16,N=100";

// The stamp of the fixtures the opgen command makes: they are made again when it is rebuilt.
inline std::string opgen_stamp() { return file_stamp(OPGEN_EXE); }

// A folder holding `base.db`, made once per test run and shared (tests/support/SharedFixture.h):
// matmul at kMatmulShape and softmax at kSoftmaxShape tuned (a few trials, one thread) with their
// code stored. Read-only: tests copy base.db out. Raises when the command fails.
inline const fs::path &tuned_cache_folder() {
    static const fs::path folder = shared_fixture("code-tuned", opgen_stamp(), [](const fs::path &dir) {
        CommandRun r = run_opgen(std::string("tune --op matmul --shape ") + kMatmulShape +
                                     " --trials 3 --min-time 5 --threads 1 --jobs 1 --quiet --db base.db",
                                 dir);
        if (r.status != 0) throw std::runtime_error("opgen tune failed: " + r.err);
        r = run_opgen(std::string("tune --op softmax --shape ") + kSoftmaxShape +
                          " --trials 2 --min-time 5 --threads 1 --jobs 1 --quiet --db base.db",
                      dir);
        if (r.status != 0) throw std::runtime_error("opgen tune failed: " + r.err);
    });
    return folder;
}

inline const char *kConvShape = "N=1,C=8,H=10,W=10,F=16";

// base.db with a conv tuned beside matmul and softmax, and the generic code of all three: made once
// per test run and shared, read-only (each test copies g.db).
inline const fs::path &generic_cache_folder() {
    static const fs::path folder = shared_fixture("code-generic", opgen_stamp(), [](const fs::path &dir) {
        fs::copy_file(tuned_cache_folder() / "base.db", dir / "g.db");
        CommandRun r = run_opgen(std::string("tune --op conv2d_nchw --shape ") + kConvShape +
                                     " --trials 3 --min-time 5 --threads 1 --jobs 1 --quiet --db g.db",
                                 dir);
        if (r.status != 0) throw std::runtime_error("opgen tune failed: " + r.err);
        r = run_opgen("db compile --generic --op matmul --op softmax --op conv2d_nchw --db g.db", dir);
        if (r.status != 0) throw std::runtime_error("opgen db compile --generic failed: " + r.err + r.out);
    });
    return folder;
}

}  // namespace opgen::test

#endif
