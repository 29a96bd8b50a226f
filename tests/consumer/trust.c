/* The consumer's trust check, in C, linking only the installed opgen_cache: opens a cache trusting
 * exactly one public key (opgen_cache_open_trusted) and asks for the matmul kernel the fixture
 * tuned. With EXPECT "runs" the kernel must load; otherwise it must be refused with a reason that
 * contains EXPECT, the refusal must be counted, and no kernel code may be mapped into this process
 * (no memfd:opgen-kernel in /proc/self/maps). Prints one line; exits 1 on failure.
 * Usage: consumer_trust CACHE.db TARGET PUBLIC_KEY EXPECT */
#include <runtime/opgen_cache.h>

#include <stdio.h>
#include <string.h>

static const char *const kShape = "M=24,N=56,K=40";

/* Lines of /proc/self/maps that map loaded kernel code. */
static int mapped_kernel_lines(void) {
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[4096];
    int count = 0;
    if (!maps) return -1;
    while (fgets(line, sizeof line, maps)) {
        if (strstr(line, "memfd:opgen-kernel")) count++;
    }
    fclose(maps);
    return count;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: consumer_trust CACHE.db TARGET PUBLIC_KEY EXPECT\n");
        return 2;
    }
    const char *keys[] = {argv[3]};
    opgen_cache *cache = NULL;
    char *error = NULL;
    if (opgen_cache_open_trusted(argv[1], keys, 1, &cache, &error) != 0) {
        fprintf(stderr, "error: open: %s\n", error);
        opgen_cache_free_string(error);
        return 1;
    }
    const opgen_cache_kernel *kernel = NULL;
    int found = opgen_cache_kernel_find(cache, "matmul", kShape, NULL, argv[2], &kernel);
    long long refused = opgen_cache_refused_code(cache);
    int mapped = mapped_kernel_lines();
    int ok;
    if (strcmp(argv[4], "runs") == 0) {
        ok = found == 0 && refused == 0 && mapped > 0;
        printf("runs: found %d, refused %lld, mapped %d\n", found, refused, mapped);
    } else {
        const char *why = opgen_cache_error(cache);
        ok = found == -1 && strstr(why, argv[4]) != NULL && refused == 1 && mapped == 0;
        printf("refused (%lld counted, %d mapped): %s\n", refused, mapped, why);
    }
    opgen_cache_close(cache);
    return ok ? 0 : 1;
}
