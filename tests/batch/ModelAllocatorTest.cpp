// The deployed model's allocator for kernel temporaries (ModelAllocator.h), its C text compiled
// with a small harness that stands in for the two Halide runtime calls it makes: a freed block
// comes back to the next request of its size (so a model's second run takes no new memory), a
// request of another size does not take it, blocks are 64-byte aligned with 64 bytes readable on
// either side, installing sets both of Halide's hooks, two threads allocating at once each get
// their own blocks, and the kept blocks are bounded (the 65th freed makes room by freeing the
// longest-kept one; a block over the byte limit is freed at once).
#include "onnx/ModelAllocator.h"

#include "tests/batch/CommandRun.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;

namespace {

// Declares what the allocator takes from HalideRuntime.h; the checks print one line each.
const char *harness_head = R"C(
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef void *(*halide_malloc_t)(void *, size_t);
typedef void (*halide_free_t)(void *, void *);
static halide_malloc_t installed_malloc;
static halide_free_t installed_free;
halide_malloc_t halide_set_custom_malloc(halide_malloc_t f) { halide_malloc_t old = installed_malloc; installed_malloc = f; return old; }
halide_free_t halide_set_custom_free(halide_free_t f) { halide_free_t old = installed_free; installed_free = f; return old; }
)C";

const char *harness_main = R"C(
static int bad;
static void check(int ok, const char *what) { printf("%s %s\n", ok ? "ok" : "FAIL", what); bad |= !ok; }
static void *churn(void *arg) {
    (void)arg;
    for (int i = 0; i < 20000; i++) {
        unsigned char *p = installed_malloc(0, 3000 + (i % 3) * 1000);
        if (!p) return (void *)1;
        memset(p, i & 0xff, 3000);
        for (int j = 0; j < 3000; j++) if (p[j] != (i & 0xff)) return (void *)1;
        installed_free(0, p);
    }
    return 0;
}
int main(void) {
    model_alloc_install();
    check(installed_malloc == model_alloc && installed_free == model_alloc_free, "installed");
    unsigned char *a = installed_malloc(0, 1 << 20);
    check(a && ((uintptr_t)a % 64) == 0, "aligned");
    memset(a, 1, 1 << 20);
    volatile unsigned sum = 0;
    for (int i = 1; i <= 64; i++) sum += a[-i] + a[(1 << 20) - 1 + i];  /* readable, as Halide may read them */
    installed_free(0, a);
    unsigned char *b = installed_malloc(0, 1 << 20);
    check(b == a, "a freed block comes back at its size");
    unsigned char *c = installed_malloc(0, (1 << 20) + 64);
    check(c && c != b, "another size takes another block");
    installed_free(0, b);
    installed_free(0, c);
    void *kept[70];
    for (int i = 0; i < 70; i++) kept[i] = installed_malloc(0, 4096 + 64 * i);
    for (int i = 0; i < 70; i++) installed_free(0, kept[i]);
    check(model_alloc_kept_count == 64, "at most 64 blocks kept");
    void *newest = installed_malloc(0, 4096 + 64 * 69), *oldest = installed_malloc(0, 4096);
    check(newest == kept[69] && oldest != kept[0], "the longest-kept blocks make room");
    installed_free(0, newest);
    installed_free(0, oldest);
    void *huge = installed_malloc(0, ((size_t)256 << 20) + 64);
    int before = model_alloc_kept_count;
    installed_free(0, huge);
    check(huge && model_alloc_kept_count == before, "a block over the limit is not kept");
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, churn, 0);
    void *r0 = 0, *r1 = 0;
    pthread_join(t[0], &r0);
    pthread_join(t[1], &r1);
    check(!r0 && !r1, "two threads at once");
    model_alloc_release();
    check(model_alloc_kept_count == 0 && model_alloc_kept_bytes == 0, "released");
    check(installed_malloc(0, SIZE_MAX - 16) == 0, "an impossible size is refused");
    return bad;
}
)C";

TEST(ModelAllocator, KeepsFreedBlocksForTheNextRequestOfTheirSize) {
    fs::path dir = opgen::test::fresh_test_dir("opgen-alloc");
    std::ofstream(dir / "alloc.c") << harness_head << opgen::onnx_import::allocator_source() << harness_main;
    opgen::test::CommandRun build =
        opgen::test::run_in(dir, "cc -std=gnu11 -O2 -Wall -Wextra -Werror -o alloc alloc.c -lpthread");
    ASSERT_EQ(build.status, 0) << build.err;
    opgen::test::CommandRun r = opgen::test::run_in(dir, "./alloc");
    EXPECT_EQ(r.status, 0) << r.out;
    for (const char *line : {"ok installed", "ok aligned", "ok a freed block comes back at its size",
                             "ok another size takes another block", "ok at most 64 blocks kept",
                             "ok the longest-kept blocks make room", "ok a block over the limit is not kept",
                             "ok two threads at once", "ok released", "ok an impossible size is refused"}) {
        EXPECT_NE(r.out.find(line), std::string::npos) << r.out;
    }
    fs::remove_all(dir);
}

}  // namespace
