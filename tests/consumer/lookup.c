/* The C side of the consumer: one query through the C API, printed as "kind shape time". */
#include <runtime/opgen_cache.h>

#include <stdio.h>

int lookup_in_c(const char *path, const char *shape) {
    opgen_cache *cache = NULL;
    char *error = NULL;
    if (opgen_cache_open(path, &cache, &error) != 0) {
        fprintf(stderr, "error: %s\n", error);
        opgen_cache_free_string(error);
        return 1;
    }
    opgen_cache_answer answer;
    if (opgen_cache_find(cache, "matmul", shape, NULL, "x86-64-avx512:t1", &answer) != 0) {
        fprintf(stderr, "error: %s\n", opgen_cache_error(cache));
        opgen_cache_close(cache);
        return 1;
    }
    printf("c: %s %s %.3f\n", answer.kind_name, answer.shape, answer.time_ms);
    opgen_cache_close(cache);
    return 0;
}
