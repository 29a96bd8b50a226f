// The deployed model's thread pool (ModelThreadPool.h), its C text compiled with a small harness
// that stands in for the two Halide runtime calls it makes: every index of a loop runs exactly
// once, whatever the loop's size against the workers, with workers spinning and with workers
// that sleep between loops; a failing task's status comes back; loops nested in a task run; the
// second thread really takes iterations; one thread, or a spin of 0, restores Halide's pool.
#include "onnx/ModelThreadPool.h"

#include "tests/batch/CommandRun.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;

namespace {

// Declares what the pool takes from HalideRuntime.h; the checks print one line each.
const char *harness_head = R"C(
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
typedef int (*halide_task_t)(void *user_context, int task_number, uint8_t *closure);
typedef int (*halide_do_par_for_t)(void *, halide_task_t, int, int, uint8_t *);
static halide_do_par_for_t installed;
int halide_default_do_par_for(void *uc, halide_task_t f, int min, int size, uint8_t *closure) {
    for (int i = min; i < min + size; i++) { int rc = f(uc, i, closure); if (rc) return rc; }
    return 0;
}
halide_do_par_for_t halide_set_custom_do_par_for(halide_do_par_for_t f) {
    halide_do_par_for_t old = installed;
    installed = f;
    return old;
}
)C";

const char *harness_main = R"C(
#include <unistd.h>
static atomic_int hits[4096], failed_at;
static _Atomic(unsigned long) threads_seen[8];
static int count(void *uc, int i, uint8_t *closure) {
    (void)uc; (void)closure;
    atomic_fetch_add(&hits[i], 1);
    return 0;
}
static int note_thread(void *uc, int i, uint8_t *closure) {
    (void)uc; (void)closure;
    usleep(5000);
    atomic_fetch_add(&hits[i], 1);
    unsigned long me = (unsigned long)pthread_self(), none = 0;
    for (int t = 0; t < 8; t++)
        if (atomic_load(&threads_seen[t]) == me || atomic_compare_exchange_strong(&threads_seen[t], &none, me)) break;
        else none = 0;
    return 0;
}
static int fail_at_7(void *uc, int i, uint8_t *closure) {
    (void)uc; (void)closure;
    if (i == 7) { atomic_store(&failed_at, i); return -42; }
    return 0;
}
static int nested(void *uc, int i, uint8_t *closure) {
    (void)closure;
    return model_pool_do_par_for(uc, count, 64 * i, 64, 0);
}
/* Runs loops of every size from 1 to 200 at base offsets and checks each index ran once. */
static int every_index_once(const char *what) {
    for (int size = 1; size <= 200; size++) {
        memset(hits, 0, sizeof hits);
        int rc = installed(0, count, 3, size, 0);
        for (int i = 0; i < 4096; i++)
            if (atomic_load(&hits[i]) != (i >= 3 && i < 3 + size)) {
                printf("FAIL %s: size %d index %d ran %d times (rc %d)\n", what, size, i, atomic_load(&hits[i]), rc);
                return 1;
            }
    }
    printf("ok %s\n", what);
    return 0;
}
int main(int argc, char **argv) {
    int threads = atoi(argv[1]);
    int workers = model_pool_start(threads);
    printf("workers %d installed %s\n", workers, installed == model_pool_do_par_for ? "pool" : "halide");
    if (argc > 2) return 0;
    int bad = every_index_once("spinning");
    usleep(300000); /* past the spin: the workers sleep, the next loop wakes them */
    bad |= every_index_once("after sleeping");
    memset(hits, 0, sizeof hits);
    int rc = installed(0, nested, 0, 32, 0), once = 1;
    for (int i = 0; i < 2048; i++) once &= atomic_load(&hits[i]) == 1;
    printf("%s nested rc %d\n", once && rc == 0 ? "ok" : "FAIL", rc);
    bad |= !(once && rc == 0);
    rc = installed(0, fail_at_7, 0, 100, 0);
    printf("%s failure rc %d at %d\n", rc == -42 && atomic_load(&failed_at) == 7 ? "ok" : "FAIL", rc, atomic_load(&failed_at));
    bad |= rc != -42;
    memset(hits, 0, sizeof hits);
    installed(0, note_thread, 0, 32, 0);
    int seen = 0;
    for (int t = 0; t < 8; t++) seen += atomic_load(&threads_seen[t]) != 0;
    printf("threads that ran tasks: %d\n", seen);
    return bad;
}
)C";

class ModelThreadPool : public ::testing::Test {
protected:
    fs::path dir;
    void SetUp() override {
        dir = opgen::test::fresh_test_dir("opgen-pool");
        std::ofstream(dir / "pool.c") << harness_head << opgen::onnx_import::thread_pool_source() << harness_main;
        opgen::test::CommandRun r =
            opgen::test::run_in(dir, "cc -std=gnu11 -O2 -Wall -Wextra -Werror -o pool pool.c -lpthread");
        ASSERT_EQ(r.status, 0) << r.err;
    }
    void TearDown() override { fs::remove_all(dir); }
    opgen::test::CommandRun run(const std::string &args) { return opgen::test::run_in(dir, "./pool " + args); }
};

TEST_F(ModelThreadPool, EveryIndexRunsOnceOnTwoAndFiveThreads) {
    for (const char *threads : {"2", "5"}) {
        opgen::test::CommandRun r = run(threads);
        EXPECT_EQ(r.status, 0) << r.out;
        EXPECT_NE(r.out.find(std::string("workers ") + (threads[0] == '2' ? "1" : "4") + " installed pool"),
                  std::string::npos)
            << r.out;
        for (const char *line : {"ok spinning", "ok after sleeping", "ok nested rc 0", "ok failure rc -42 at 7"})
            EXPECT_NE(r.out.find(line), std::string::npos) << threads << " threads:\n" << r.out;
    }
}

TEST_F(ModelThreadPool, TheWorkersTakeIterations) {
    opgen::test::CommandRun r = run("2");
    ASSERT_EQ(r.status, 0) << r.out;
    // 32 tasks of 5 ms each: the worker, awake or not, takes some of them.
    EXPECT_NE(r.out.find("threads that ran tasks: 2"), std::string::npos) << r.out;
}

TEST_F(ModelThreadPool, OneThreadOrNoSpinKeepsHalidesPool) {
    opgen::test::CommandRun one = run("1 only-start");
    EXPECT_NE(one.out.find("workers 0 installed halide"), std::string::npos) << one.out;
    opgen::test::CommandRun off = opgen::test::run_in(dir, "OPGEN_SPIN_US=0 ./pool 2 only-start");
    EXPECT_NE(off.out.find("workers 0 installed halide"), std::string::npos) << off.out;
}

}  // namespace
