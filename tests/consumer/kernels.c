/* The consumer's kernel runner, in C: loads the cached kernels of matmul, conv2d_nchw and softmax
 * through opgen_cache (no Halide compiler, no LLVM in this program) at their tuned shapes (exact
 * kernels), at shapes next to them (derived: the generic kernel compiled from the neighbour's
 * schedule) and at shapes far from any tuned one (never tuned: generic kernels too), runs each on
 * deterministic inputs and checks every output element against a naive loop, and that the kernel
 * is exact for a tuned shape and generic otherwise. Prints one line per call; exits 1 on the first
 * failure. Usage: consumer_kernels CACHE.db TARGET */
#include <runtime/opgen_cache.h>

#include <stdio.h>

#include "naive.h"

static long long elements(const opgen_cache_kernel *k, int argument, long long *dims) {
    int n = opgen_cache_kernel_argument_dims(k, argument, dims, 8);
    long long total = 1;
    for (int i = 0; i < n; i++) total *= dims[i];
    return total;
}

/* The kind of shape asked for, and the kernel it must get. */
typedef enum { EXACT, DERIVED, NEVER_TUNED } shape_kind;
static const char *const kind_names[] = {"exact", "derived", "never-tuned"};
static shape_kind kind; /* of the shape being run */

static const opgen_cache_kernel *find(opgen_cache *cache, const char *op, const char *shape,
                                      const char *target) {
    const opgen_cache_kernel *k = NULL;
    if (opgen_cache_kernel_find(cache, op, shape, NULL, target, &k) != 0) {
        fprintf(stderr, "error: %s %s: %s\n", op, shape, opgen_cache_error(cache));
        return NULL;
    }
    if (opgen_cache_kernel_is_generic(k) != (kind == EXACT ? 0 : 1)) {
        fprintf(stderr, "error: %s %s (%s): got a%s kernel\n", op, shape, kind_names[kind],
                opgen_cache_kernel_is_generic(k) ? " generic" : "n exact");
        return NULL;
    }
    return k;
}

static int report(const char *op, const char *shape, int rc, double error, double tolerance) {
    printf("%s %s %s (%s kernel): call %d, max relative error %.2g\n", kind_names[kind], op, shape,
           kind == EXACT ? "exact" : "generic", rc, error);
    return rc == 0 && error <= tolerance ? 0 : 1;
}

static int run_matmul(opgen_cache *cache, const char *shape, const char *target) {
    const opgen_cache_kernel *k = find(cache, "matmul", shape, target);
    if (!k) return 1;
    long long a[8], b[8], c[8];
    long long na = elements(k, 0, a), nb = elements(k, 1, b), nc = elements(k, 2, c);
    long long M = a[0], K = a[1], N = b[1];
    float *A = filled(na, 7, 3), *B = filled(nb, 5, 2), *C = filled(nc, 3, 9), *want = malloc(nc * 4);
    naive_matmul(A, B, want, M, N, K);
    void *args[] = {A, B, C};
    int rc = opgen_cache_kernel_call(k, args, 3);
    int status = report("matmul", shape, rc, worst(C, want, nc), 1e-6);
    free(A), free(B), free(C), free(want);
    return status;
}

static int run_conv(opgen_cache *cache, const char *shape, const char *target) {
    const opgen_cache_kernel *k = find(cache, "conv2d_nchw", shape, target);
    if (!k) return 1;
    long long x[8], w[8], y[8];
    long long nx = elements(k, 0, x), nw = elements(k, 1, w), ny = elements(k, 2, y);
    long long N = x[0], C = x[1], H = x[2], W = x[3], F = w[0], KH = w[2], KW = w[3];
    long long OH = y[2], OW = y[3];
    float *X = filled(nx, 7, 3), *Wt = filled(nw, 5, 2), *Y = filled(ny, 3, 9), *want = malloc(ny * 4);
    naive_conv(X, Wt, want, N, C, H, W, F, KH, KW, OH, OW);
    void *args[] = {X, Wt, Y};
    int rc = opgen_cache_kernel_call(k, args, 3);
    int status = report("conv2d_nchw", shape, rc, worst(Y, want, ny), 1e-6);
    free(X), free(Wt), free(Y), free(want);
    return status;
}

static int run_softmax(opgen_cache *cache, const char *shape, const char *target) {
    const opgen_cache_kernel *k = find(cache, "softmax", shape, target);
    if (!k) return 1;
    long long x[8], y[8];
    long long nx = elements(k, 0, x), ny = elements(k, 1, y);
    long long M = x[0], N = x[1];
    float *X = filled(nx, 11, 5), *Y = filled(ny, 3, 9), *want = malloc(ny * 4);
    naive_softmax(X, want, M, N);
    void *args[] = {X, Y};
    int rc = opgen_cache_kernel_call(k, args, 2);
    int status = report("softmax", shape, rc, worst(Y, want, ny), 1e-5);
    free(X), free(Y), free(want);
    return status;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: consumer_kernels CACHE.db TARGET\n");
        return 2;
    }
    opgen_cache *cache = NULL;
    char *error = NULL;
    if (opgen_cache_open(argv[1], &cache, &error) != 0) {
        fprintf(stderr, "error: %s\n", error);
        opgen_cache_free_string(error);
        return 1;
    }
    /* Without the tuner's extension a tuned conv is asked for as the cache keys it (every
     * parameter and attribute, defaults included); a generic kernel takes the defaults itself. */
    static const char *const shapes[3][3] = {
        {"M=24,N=56,K=40", "N=1,C=8,H=10,W=10,F=16,KH=3,KW=3,stride=1,pad=1,dilation=1", "M=16,N=100"},
        {"M=25,N=56,K=40", "N=1,C=8,H=11,W=11,F=16", "M=17,N=100"},
        {"M=3,N=300,K=129", "N=2,C=3,H=31,W=9,F=5", "M=70,N=1003"}};
    int failed = 0;
    for (int i = 0; i < 3 && !failed; i++) {
        kind = (shape_kind)i;
        failed = run_matmul(cache, shapes[i][0], argv[2]) || run_conv(cache, shapes[i][1], argv[2]) ||
                 run_softmax(cache, shapes[i][2], argv[2]);
    }
    opgen_cache_close(cache);
    return failed;
}
