#include "onnx/ModelThreadPool.h"

namespace opgen::onnx_import {

namespace {

// A worker's slot holds NULL (idle), the job offered to it, or TAKEN while it works on one. The
// caller offers a job by storing it, then takes the offer back with a compare-exchange once its
// own share is done: a worker that was not yet awake never holds the caller up, and one that
// took the job is waited for (its iterations are under way). The sleeping flag and the slot are
// stored and then read in opposite orders by the two sides (sequentially consistent atomics), so
// an offer made while a worker goes to sleep is either seen by it or followed by a wake-up.
const char *pool_text = R"C(
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#define MODEL_POOL_MAX 64

struct model_pool_job {
    halide_task_t f;
    void *user_context;
    uint8_t *closure;
    atomic_int next, status;
    int end;
};
#define MODEL_POOL_TAKEN ((struct model_pool_job *)1)

static int model_pool_workers, model_pool_made;
static uint64_t model_pool_spin_ns = 200000;
static pthread_t model_pool_thread[MODEL_POOL_MAX];
static _Atomic(struct model_pool_job *) model_pool_slot[MODEL_POOL_MAX];
static atomic_int model_pool_sleeping[MODEL_POOL_MAX];
static pthread_mutex_t model_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t model_pool_wake = PTHREAD_COND_INITIALIZER;
static __thread int model_pool_in_task;

static void model_pool_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static uint64_t model_pool_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Takes the job's indices one at a time until none is left or a task failed. */
static void model_pool_work(struct model_pool_job *j) {
    model_pool_in_task = 1;
    for (int i; !atomic_load_explicit(&j->status, memory_order_relaxed) && (i = atomic_fetch_add(&j->next, 1)) < j->end;) {
        int rc = j->f(j->user_context, i, j->closure);
        if (rc) {
            int none = 0;
            atomic_compare_exchange_strong(&j->status, &none, rc);
        }
    }
    model_pool_in_task = 0;
}

/* The job offered to worker w: spins (yielding now and then, for a busy machine) for the spin
 * time, then sleeps until one is offered. */
static struct model_pool_job *model_pool_wait(int w) {
    uint64_t since = model_pool_now_ns();
    for (unsigned n = 1;; n++) {
        struct model_pool_job *j = atomic_load(&model_pool_slot[w]);
        if (j) return j;
        model_pool_pause();
        if (n % 256) continue;
        if (model_pool_now_ns() - since < model_pool_spin_ns) {
            sched_yield();
            continue;
        }
        pthread_mutex_lock(&model_pool_lock);
        atomic_store(&model_pool_sleeping[w], 1);
        while (!(j = atomic_load(&model_pool_slot[w]))) pthread_cond_wait(&model_pool_wake, &model_pool_lock);
        atomic_store(&model_pool_sleeping[w], 0);
        pthread_mutex_unlock(&model_pool_lock);
        return j;
    }
}

static void *model_pool_worker(void *arg) {
    int w = (int)(intptr_t)arg;
    for (;;) {
        struct model_pool_job *j = model_pool_wait(w);
        if (!atomic_compare_exchange_strong(&model_pool_slot[w], &j, MODEL_POOL_TAKEN)) continue;  /* taken back */
        model_pool_work(j);
        atomic_store(&model_pool_slot[w], (struct model_pool_job *)0);
    }
    return 0;
}

static int model_pool_do_par_for(void *user_context, halide_task_t f, int min, int size, uint8_t *closure) {
    if (size <= 1 || model_pool_workers == 0 || model_pool_in_task) {
        for (int i = min; i < min + size; i++) {
            int rc = f(user_context, i, closure);
            if (rc) return rc;
        }
        return 0;
    }
    struct model_pool_job j = {f, user_context, closure, min, 0, min + size};
    int offered = size - 1 < model_pool_workers ? size - 1 : model_pool_workers;
    for (int w = 0; w < offered; w++) {
        atomic_store(&model_pool_slot[w], &j);
        if (!atomic_load(&model_pool_sleeping[w])) continue;
        pthread_mutex_lock(&model_pool_lock);
        pthread_cond_broadcast(&model_pool_wake);
        pthread_mutex_unlock(&model_pool_lock);
    }
    model_pool_work(&j);
    for (int w = 0; w < offered; w++) {
        struct model_pool_job *mine = &j;
        if (atomic_compare_exchange_strong(&model_pool_slot[w], &mine, (struct model_pool_job *)0)) continue;
        while (atomic_load(&model_pool_slot[w])) model_pool_pause();
    }
    return atomic_load(&j.status);
}

static int model_pool_start(int threads) {
    const char *spin = getenv("OPGEN_SPIN_US");
    if (spin && *spin) model_pool_spin_ns = 1000ull * strtoull(spin, 0, 10);
    int want = threads - 1 < MODEL_POOL_MAX ? threads - 1 : MODEL_POOL_MAX;
    if (model_pool_spin_ns == 0) want = 0;
    for (; model_pool_made < want; model_pool_made++)
        if (pthread_create(&model_pool_thread[model_pool_made], 0, model_pool_worker, (void *)(intptr_t)model_pool_made) != 0) break;
    model_pool_workers = want > 0 && model_pool_made > 0 ? (want < model_pool_made ? want : model_pool_made) : 0;
    halide_set_custom_do_par_for(model_pool_workers ? model_pool_do_par_for : halide_default_do_par_for);
    return model_pool_workers;
}
)C";

}  // namespace

std::string thread_pool_source() {
    return pool_text;
}

}  // namespace opgen::onnx_import
