#include "onnx/ModelAllocator.h"

namespace opgen::onnx_import {

namespace {

// Each block carries a 64-byte header (its size) before the pointer it hands out and 64 bytes of
// slack after it: Halide may read 8 bytes beyond either end. The kept blocks are in the order they
// were freed, oldest first.
const char *allocator_text = R"C(
#include <pthread.h>

#define MODEL_ALLOC_BLOCKS 64
#define MODEL_ALLOC_BYTES ((size_t)256 << 20)
#define MODEL_ALLOC_HEADER 64

static void *model_alloc_kept[MODEL_ALLOC_BLOCKS];
static size_t model_alloc_kept_size[MODEL_ALLOC_BLOCKS], model_alloc_kept_bytes;
static int model_alloc_kept_count;
static pthread_mutex_t model_alloc_lock = PTHREAD_MUTEX_INITIALIZER;

static void *model_alloc(void *user_context, size_t bytes) {
    (void)user_context;
    void *block = 0;
    pthread_mutex_lock(&model_alloc_lock);
    for (int i = 0; i < model_alloc_kept_count; i++) {
        if (model_alloc_kept_size[i] != bytes) continue;
        block = model_alloc_kept[i];
        model_alloc_kept_bytes -= bytes;
        model_alloc_kept_count--;
        memmove(model_alloc_kept + i, model_alloc_kept + i + 1, sizeof(void *) * (size_t)(model_alloc_kept_count - i));
        memmove(model_alloc_kept_size + i, model_alloc_kept_size + i + 1,
                sizeof(size_t) * (size_t)(model_alloc_kept_count - i));
        break;
    }
    pthread_mutex_unlock(&model_alloc_lock);
    if (!block) {
        if (bytes > SIZE_MAX - 2 * MODEL_ALLOC_HEADER ||
            posix_memalign(&block, MODEL_ALLOC_HEADER, bytes + 2 * MODEL_ALLOC_HEADER) != 0) {
            return 0;
        }
        *(size_t *)block = bytes;
    }
    return (uint8_t *)block + MODEL_ALLOC_HEADER;
}

/* Keeps the block, making room by freeing the longest-kept ones (the sizes a model with dynamic
 * dimensions asked for at earlier values); frees it instead when it alone is over the limit. */
static void model_alloc_free(void *user_context, void *p) {
    (void)user_context;
    if (!p) return;
    void *block = (uint8_t *)p - MODEL_ALLOC_HEADER;
    size_t bytes = *(size_t *)block;
    if (bytes > MODEL_ALLOC_BYTES) {
        free(block);
        return;
    }
    void *evicted[MODEL_ALLOC_BLOCKS];
    int n_evicted = 0;
    pthread_mutex_lock(&model_alloc_lock);
    while (model_alloc_kept_count == MODEL_ALLOC_BLOCKS || bytes > MODEL_ALLOC_BYTES - model_alloc_kept_bytes) {
        evicted[n_evicted++] = model_alloc_kept[0];
        model_alloc_kept_bytes -= model_alloc_kept_size[0];
        model_alloc_kept_count--;
        memmove(model_alloc_kept, model_alloc_kept + 1, sizeof(void *) * (size_t)model_alloc_kept_count);
        memmove(model_alloc_kept_size, model_alloc_kept_size + 1, sizeof(size_t) * (size_t)model_alloc_kept_count);
    }
    model_alloc_kept[model_alloc_kept_count] = block;
    model_alloc_kept_size[model_alloc_kept_count++] = bytes;
    model_alloc_kept_bytes += bytes;
    pthread_mutex_unlock(&model_alloc_lock);
    for (int i = 0; i < n_evicted; i++) free(evicted[i]);
}

static void model_alloc_install(void) {
    halide_set_custom_malloc(model_alloc);
    halide_set_custom_free(model_alloc_free);
}

static void model_alloc_release(void) {
    pthread_mutex_lock(&model_alloc_lock);
    for (int i = 0; i < model_alloc_kept_count; i++) free(model_alloc_kept[i]);
    model_alloc_kept_count = 0;
    model_alloc_kept_bytes = 0;
    pthread_mutex_unlock(&model_alloc_lock);
}
)C";

}  // namespace

std::string allocator_source() {
    return allocator_text;
}

}  // namespace opgen::onnx_import
