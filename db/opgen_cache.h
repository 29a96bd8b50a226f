/* The C API of the kernel-cache lookup library (opgen_cache), for runtimes that are not C++.
 *
 * opgen_cache_open opens a cache file read-only; opgen_cache_find answers "which kernel for this op
 * at this shape on this target?" with an exact hit, a derived answer (nearest tuned shape, its
 * schedule re-fitted) or a predicted one (the cost model's pick); `kind` says which. Derived and
 * predicted answers need the tuner's extension (opgen_cache_attach_tuner in tuner/Predict.h);
 * without it only exact answers come back. Every query filters by target.
 *
 * Strings in an answer belong to the handle and stay valid until the next call on it. One handle
 * may be used from several threads (calls are serialised), but the answer strings then race:
 * give each thread its own handle. Functions return 0 on success and -1 on failure, with the
 * reason in opgen_cache_error(handle) (or, for a failed open, in *error_out). */
#ifndef OPGEN_CACHE_H
#define OPGEN_CACHE_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct opgen_cache opgen_cache;

typedef enum opgen_cache_kind {
    OPGEN_CACHE_NONE = 0,
    OPGEN_CACHE_EXACT = 1,
    OPGEN_CACHE_DERIVED = 2,
    OPGEN_CACHE_PREDICTED = 3
} opgen_cache_kind;

typedef struct opgen_cache_answer {
    opgen_cache_kind kind;
    const char *kind_name;       /* "none", "exact", "derived", "predicted" */
    const char *shape;           /* the canonical shape answered */
    const char *from_shape;      /* derived: the tuned shape the schedule came from, else "" */
    const char *schedule_json;   /* the schedule point, "" for none */
    const char *schedule_source; /* printed Halide schedule; exact answers only, else "" */
    const char *op_hash;
    const char *reason;          /* none: why; else "" */
    double time_ms;              /* exact: measured; derived: the neighbour's; predicted: estimate */
    double gflops;
    int verified;                /* 1 for a measured, checked kernel (exact) */
} opgen_cache_answer;

/* Opens `path` read-only. On failure returns -1, sets *cache_out to NULL and, when error_out is
 * not NULL, *error_out to a message the caller frees with opgen_cache_free_string. */
int opgen_cache_open(const char *path, opgen_cache **cache_out, char **error_out);
void opgen_cache_close(opgen_cache *cache);
void opgen_cache_free_string(char *text);

/* dtype NULL means "f32". A missing answer is not a failure: it returns 0 with kind NONE and the
 * reason; -1 means the file failed (corrupt, removed) or an argument was NULL. */
int opgen_cache_find(opgen_cache *cache, const char *op, const char *shape, const char *dtype,
                     const char *target, opgen_cache_answer *answer);

/* The last failure on this handle, "" if none. */
const char *opgen_cache_error(const opgen_cache *cache);

#ifdef __cplusplus
}
#endif

#endif
