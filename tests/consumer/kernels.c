/* The consumer's kernel runner, in C: loads the cached kernels of matmul, conv2d_nchw and softmax
 * at their tuned shapes through opgen_cache (no Halide compiler, no LLVM in this program), runs
 * each on deterministic inputs and checks every output element against a naive loop. Prints one
 * line per op; exits 1 on the first failure. Usage: consumer_kernels CACHE.db TARGET */
#include <db/opgen_cache.h>

#include <stdio.h>

#include "naive.h"

static long long elements(const opgen_cache_kernel *k, int argument, long long *dims) {
    int n = opgen_cache_kernel_argument_dims(k, argument, dims, 8);
    long long total = 1;
    for (int i = 0; i < n; i++) total *= dims[i];
    return total;
}

static const opgen_cache_kernel *find(opgen_cache *cache, const char *op, const char *shape,
                                      const char *target) {
    const opgen_cache_kernel *k = NULL;
    if (opgen_cache_kernel_find(cache, op, shape, NULL, target, &k) != 0) {
        fprintf(stderr, "error: %s %s: %s\n", op, shape, opgen_cache_error(cache));
        return NULL;
    }
    return k;
}

static int report(const char *op, const char *shape, int rc, double error, double tolerance) {
    printf("%s %s: call %d, max relative error %.2g\n", op, shape, rc, error);
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
    int failed = run_matmul(cache, "M=24,N=56,K=40", argv[2]) ||
                 /* Without the tuner's extension the shape is asked for as the cache keys it: */
                 /* every parameter and attribute, defaults included. */
                 run_conv(cache, "N=1,C=8,H=14,W=14,F=16,KH=3,KW=3,stride=1,pad=1,dilation=1", argv[2]) ||
                 run_softmax(cache, "M=16,N=100", argv[2]);
    opgen_cache_close(cache);
    return failed;
}
