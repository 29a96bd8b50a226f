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
 * reason in opgen_cache_error(handle) (or, for a failed open, in *error_out).
 *
 * Callable kernels: opgen_cache_kernel gives the exact answer's compiled code, loaded into
 * executable memory (no compiler in the process; the Halide runtime is inside opgen_cache) after
 * checking its signature (an Ed25519 signature by a key the application trusts, over the row's key
 * and the code's digest: runtime/CodeTrust.h), size, digest, format, ABI version, target and the
 * CPU features it needs: code that fails a check is refused with the reason, counted
 * (opgen_cache_refused_code) and never runs. A kernel is loaded once per handle and
 * kept: asking again loads nothing. The kernel pointer stays valid until opgen_cache_close of its
 * handle. Calling one kernel from several threads at once is safe (each call uses only the
 * buffers it is given); the lookups themselves are serialised per handle. */
#ifndef OPGEN_RUNTIME_OPGEN_CACHE_H
#define OPGEN_RUNTIME_OPGEN_CACHE_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct opgen_cache opgen_cache;

typedef enum opgen_cache_kind {
    OPGEN_CACHE_NONE = 0,
    OPGEN_CACHE_EXACT = 1,
    OPGEN_CACHE_DERIVED = 2,
    OPGEN_CACHE_PREDICTED = 3,
    OPGEN_CACHE_GENERIC = 4
} opgen_cache_kind;

typedef struct opgen_cache_answer {
    opgen_cache_kind kind;
    const char *kind_name;       /* "none", "exact", "derived", "predicted", "generic" */
    const char *shape;           /* the canonical shape answered */
    const char *from_shape;      /* derived, generic: the tuned shape the schedule came from */
    const char *schedule_json;   /* the schedule point, "" for none */
    const char *schedule_source; /* printed Halide schedule; exact answers only, else "" */
    const char *op_hash;
    const char *reason;          /* none: why; else "" */
    double time_ms;              /* exact: measured; derived: the neighbour's; predicted: estimate */
    double gflops;
    int verified;                /* 1 for a checked kernel (exact; generic: checked when built) */
} opgen_cache_answer;

/* Opens `path` read-only. Its code runs when signed by a key of the trust file named by the
 * environment's OPGEN_TRUST_FILE (one "ed25519:<hex>" a line); without one no code runs. On failure
 * returns -1, sets *cache_out to NULL and, when error_out is not NULL, *error_out to a message the
 * caller frees with opgen_cache_free_string. */
int opgen_cache_open(const char *path, opgen_cache **cache_out, char **error_out);

/* Which code may run, given at open instead of by the environment. */
typedef struct opgen_cache_options {
    const char *const *trusted_keys; /* public keys, "ed25519:<64 hex digits>" each */
    int trusted_key_count;
    const char *trust_file;          /* a trust file of more keys; NULL for none */
    int allow_unsigned;              /* 1: unsigned code and unknown signers run too (local
                                        development only; a signature that does not verify is
                                        still refused); 0 for an application */
} opgen_cache_options;

/* opgen_cache_open with the trust of `options` (NULL: the environment's, as opgen_cache_open).
 * A key that is not one, or a trust file that cannot be read, fails the open. */
int opgen_cache_open_with(const char *path, const opgen_cache_options *options,
                          opgen_cache **cache_out, char **error_out);
/* opgen_cache_open trusting exactly `count` public keys. */
int opgen_cache_open_trusted(const char *path, const char *const *public_keys, int count,
                             opgen_cache **cache_out, char **error_out);

/* How many times this handle refused code since it was opened (unsigned, an untrusted signer, a
 * signature that does not verify, or a failed check of size, digest, target or CPU features);
 * -1 for NULL. */
long long opgen_cache_refused_code(opgen_cache *cache);
void opgen_cache_close(opgen_cache *cache);
void opgen_cache_free_string(char *text);

/* dtype NULL means "f32". A missing answer is not a failure: it returns 0 with kind NONE and the
 * reason; -1 means the file failed (corrupt, removed) or an argument was NULL. */
int opgen_cache_find(opgen_cache *cache, const char *op, const char *shape, const char *dtype,
                     const char *target, opgen_cache_answer *answer);

typedef struct opgen_cache_kernel opgen_cache_kernel;
struct halide_buffer_t;

/* The callable kernel for this shape: the exact kernel's code, else a generic kernel's bound to the
 * shape (opgen_cache_kernel_is_generic says which; its argument dims are the shape's). Returns 0
 * and sets *kernel_out; -1 with the reason in opgen_cache_error when there is neither, the code is
 * refused or the file failed. dtype NULL means "f32". */
int opgen_cache_kernel_find(opgen_cache *cache, const char *op, const char *shape,
                            const char *dtype, const char *target,
                            const opgen_cache_kernel **kernel_out);

/* 1 when the kernel is shape-generic code bound to the shape it was found for, 0 when exact, -1
 * for NULL; opgen_cache_kernel_shape gives a generic kernel's canonical shape ("" when exact). */
int opgen_cache_kernel_is_generic(const opgen_cache_kernel *kernel);
const char *opgen_cache_kernel_shape(const opgen_cache_kernel *kernel);

/* The kernel's arguments: their number, and the i-th one's name, whether it is the output (the
 * last), its element type ("f32") and dims (outermost first; the data is dense row-major). */
int opgen_cache_kernel_arguments(const opgen_cache_kernel *kernel);
const char *opgen_cache_kernel_argument_name(const opgen_cache_kernel *kernel, int i);
const char *opgen_cache_kernel_argument_dtype(const opgen_cache_kernel *kernel, int i);
int opgen_cache_kernel_argument_dims(const opgen_cache_kernel *kernel, int i, long long *dims,
                                     int max_dims);

/* Calls the kernel on one pointer per argument (inputs, then the output), each to dense
 * row-major data of the argument's dims. Returns 0 on success, -1 for a NULL kernel, a wrong
 * count or a NULL pointer, else the Halide runtime's (negative) error code. */
int opgen_cache_kernel_call(const opgen_cache_kernel *kernel, void *const *data, int count);
/* The same with one halide_buffer_t per argument (HalideRuntime.h); each must have the argument's
 * type, dimension count and extents (Halide's order: innermost first). */
int opgen_cache_kernel_call_buffers(const opgen_cache_kernel *kernel,
                                    struct halide_buffer_t *const *buffers, int count);

/* The last failure on this handle, "" if none. */
const char *opgen_cache_error(const opgen_cache *cache);

#ifdef __cplusplus
}
#endif

#endif
