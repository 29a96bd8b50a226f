/* Calls the kernels of a library built by `opgen library` at their tuned shapes and at shapes
 * nobody tuned (served by each op's generic kernel) and checks every output element against a
 * naive loop; a conv with a window the generic kernel was not compiled for must answer
 * OPGEN_LIBRARY_NO_KERNEL. Links opgen's lookup library too, from the same prefix. Prints one line
 * per call; exits 1 on any failure. */
#include <runtime/opgen_cache.h>
#include <opgen_library.h>

#include <stdio.h>

#include "naive.h"

static int check(const char *what, int rc, double error, double tolerance) {
    printf("library %s: call %d, max relative error %.2g\n", what, rc, error);
    return rc == 0 && error <= tolerance ? 0 : 1;
}

int main(void) {
    int failed = 0;
    {
        /* opgen's lookup library, found beside the kernel library: a missing cache is refused
         * with its reason. */
        opgen_cache *cache = NULL;
        char *error = NULL;
        int rc = opgen_cache_open("no-such-cache.db", &cache, &error);
        printf("opgen_cache beside the library: open of a missing cache %s\n", rc != 0 && error ? "refused" : "accepted");
        failed |= !(rc != 0 && error);
        opgen_cache_free_string(error);
    }
    {
        const long long M = 24, N = 56, K = 40;
        const int64_t shape[] = {K, M, N}; /* the header's order: K, M, N */
        float *A = filled(M * K, 7, 3), *B = filled(K * N, 5, 2), *C = filled(M * N, 3, 9);
        float *want = filled(M * N, 1, 0);
        naive_matmul(A, B, want, M, N, K);
        void *tensors[] = {A, B, C};
        int called = opgen_library_matmul(shape, tensors); /* before worst() reads C */
        failed |= check("matmul K=40,M=24,N=56", called, worst(C, want, M * N), 1e-6);
    }
    {
        /* Listed in the manifest but not tuned, and never listed: the generic kernel. */
        const long long sizes[2][3] = {{25, 56, 40}, {3, 300, 129}};
        for (int i = 0; i < 2; i++) {
            const long long M = sizes[i][0], N = sizes[i][1], K = sizes[i][2];
            const int64_t shape[] = {K, M, N};
            float *A = filled(M * K, 7, 3), *B = filled(K * N, 5, 2), *C = filled(M * N, 3, 9);
            float *want = filled(M * N, 1, 0);
            naive_matmul(A, B, want, M, N, K);
            void *tensors[] = {A, B, C};
            int called = opgen_library_matmul(shape, tensors);
            char what[64];
            snprintf(what, sizeof what, "matmul K=%lld,M=%lld,N=%lld (generic)", K, M, N);
            failed |= check(what, called, worst(C, want, M * N), 1e-6);
        }
    }
    {
        const long long N = 1, C = 8, H = 10, W = 10, F = 16;
        /* C, F, H, KH, KW, N, W, dilation, pad, stride */
        const int64_t shape[] = {C, F, H, 3, 3, N, W, 1, 1, 1};
        float *X = filled(N * C * H * W, 7, 3), *Wt = filled(F * C * 9, 5, 2), *Y = filled(N * F * H * W, 3, 9);
        float *want = filled(N * F * H * W, 1, 0);
        naive_conv(X, Wt, want, N, C, H, W, F, 3, 3, H, W);
        void *tensors[] = {X, Wt, Y};
        int called = opgen_library_conv2d_nchw(shape, tensors);
        failed |= check("conv2d_nchw", called, worst(Y, want, N * F * H * W), 1e-6);
    }
    {
        const long long N = 2, C = 3, H = 31, W = 9, F = 5;
        const int64_t shape[] = {C, F, H, 3, 3, N, W, 1, 1, 1};
        float *X = filled(N * C * H * W, 7, 3), *Wt = filled(F * C * 9, 5, 2), *Y = filled(N * F * H * W, 3, 9);
        float *want = filled(N * F * H * W, 1, 0);
        naive_conv(X, Wt, want, N, C, H, W, F, 3, 3, H, W);
        void *tensors[] = {X, Wt, Y};
        int called = opgen_library_conv2d_nchw(shape, tensors);
        failed |= check("conv2d_nchw C=3,F=5,H=31,N=2,W=9 (generic)", called, worst(Y, want, N * F * H * W), 1e-6);
        const int64_t window5[] = {C, F, H, 5, 5, N, W, 1, 1, 1};
        int rc = opgen_library_conv2d_nchw(window5, tensors);
        printf("library conv2d_nchw KH=KW=5: %d\n", rc);
        failed |= rc != OPGEN_LIBRARY_NO_KERNEL;
    }
    {
        const long long M = 16, N = 100;
        const int64_t shape[] = {M, N};
        float *X = filled(M * N, 11, 5), *Y = filled(M * N, 3, 9), *want = filled(M * N, 1, 0);
        naive_softmax(X, want, M, N);
        void *tensors[] = {X, Y};
        int called = opgen_library_softmax(shape, tensors);
        failed |= check("softmax M=16,N=100", called, worst(Y, want, M * N), 1e-5);
    }
    {
        const long long M = 70, N = 1003;
        const int64_t shape[] = {M, N};
        float *X = filled(M * N, 11, 5), *Y = filled(M * N, 3, 9), *want = filled(M * N, 1, 0);
        naive_softmax(X, want, M, N);
        void *tensors[] = {X, Y};
        int called = opgen_library_softmax(shape, tensors);
        failed |= check("softmax M=70,N=1003 (generic)", called, worst(Y, want, M * N), 1e-5);
    }
    return failed;
}
