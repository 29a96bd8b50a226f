// The C API (opgen_cache.h) over KernelLookup. No exception crosses into C: every one becomes -1
// and a message.
#include "runtime/opgen_cache.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>

#include "runtime/CacheHandle.h"
#include "store/KeyFiles.h"

namespace {

char *copy_string(const std::string &text) {
    char *copy = static_cast<char *>(std::malloc(text.size() + 1));
    if (copy) {
        std::memcpy(copy, text.c_str(), text.size() + 1);
    }
    return copy;
}

// The request of a C call; dtype NULL means the default, "f32".
opgen::db::LookupRequest request_of(const char *op, const char *shape, const char *dtype,
                                    const char *target) {
    opgen::db::LookupRequest request;
    request.op_name = op;
    request.shape = shape;
    request.target = target;
    if (dtype) {
        request.dtype = dtype;
    }
    return request;
}

// The trust an application gives at open (opgen_cache_options). Raises for a key that is not
// one or a trust file that cannot be read.
opgen::db::TrustPolicy policy_of(const opgen_cache_options &options) {
    opgen::db::TrustPolicy policy;
    if (options.trusted_key_count < 0 || (options.trusted_key_count > 0 && !options.trusted_keys)) {
        throw opgen::db::DbError("opgen_cache_options: trusted_keys must hold trusted_key_count keys");
    }
    for (int i = 0; i < options.trusted_key_count; i++) {
        const char *text = options.trusted_keys[i];
        std::optional<opgen::db::PublicKey> key = text ? opgen::db::parse_public_key(text) : std::nullopt;
        if (!key) {
            throw opgen::db::DbError("opgen_cache_options: trusted key " + std::to_string(i) + " ('" +
                                     (text ? text : "NULL") + "') is not ed25519:<64 hex digits>");
        }
        policy.keys.push_back(*key);
    }
    if (options.trust_file) {
        for (const opgen::db::PublicKey &key : opgen::db::read_trust_file(options.trust_file)) {
            policy.keys.push_back(key);
        }
    }
    policy.allow_unsigned = options.allow_unsigned != 0;
    return policy;
}

const opgen::db::CodeArgument *argument(const opgen_cache_kernel *kernel, int i) {
    if (!kernel || i < 0 || size_t(i) >= kernel->loaded->arguments().size()) {
        return nullptr;
    }
    return &kernel->loaded->arguments()[size_t(i)];
}

} // namespace

extern "C" {

int opgen_cache_open(const char *path, opgen_cache **cache_out, char **error_out) {
    return opgen_cache_open_with(path, nullptr, cache_out, error_out);
}

int opgen_cache_open_with(const char *path, const opgen_cache_options *options,
                          opgen_cache **cache_out, char **error_out) {
    if (error_out) {
        *error_out = nullptr;
    }
    if (!cache_out) {
        return -1;
    }
    *cache_out = nullptr;
    try {
        if (!path) {
            throw opgen::db::DbError("database path is NULL");
        }
        auto cache = std::make_unique<opgen_cache>();
        cache->lookup = options ? opgen::db::open_kernel_lookup(path, policy_of(*options))
                                : opgen::db::open_kernel_lookup(path);
        *cache_out = cache.release();
        return 0;
    } catch (const std::exception &e) {
        if (error_out) {
            *error_out = copy_string(e.what());
        }
        return -1;
    }
}

int opgen_cache_open_trusted(const char *path, const char *const *public_keys, int count,
                             opgen_cache **cache_out, char **error_out) {
    opgen_cache_options options{};
    options.trusted_keys = public_keys;
    options.trusted_key_count = count;
    return opgen_cache_open_with(path, &options, cache_out, error_out);
}

long long opgen_cache_refused_code(opgen_cache *cache) {
    if (!cache) {
        return -1;
    }
    try {
        return cache->lookup->refused_code();
    } catch (const std::exception &e) {
        cache->error = e.what();
        return -1;
    }
}

void opgen_cache_close(opgen_cache *cache) {
    delete cache;
}

void opgen_cache_free_string(char *text) {
    std::free(text);
}

int opgen_cache_find(opgen_cache *cache, const char *op, const char *shape, const char *dtype,
                     const char *target, opgen_cache_answer *answer) {
    if (!cache) {
        return -1;
    }
    if (!op || !shape || !target || !answer) {
        cache->error = "opgen_cache_find: op, shape, target and answer must not be NULL";
        return -1;
    }
    try {
        cache->last = cache->lookup->find(request_of(op, shape, dtype, target));
        cache->error.clear();
    } catch (const std::exception &e) {
        cache->error = e.what();
        cache->last = opgen::db::LookupAnswer();
        return -1;
    }
    const opgen::db::LookupAnswer &a = cache->last;
    answer->kind = static_cast<opgen_cache_kind>(static_cast<int>(a.kind));
    answer->kind_name = opgen::db::answer_kind_name(a.kind);
    answer->shape = a.kernel.key.shape.c_str();
    answer->from_shape = a.from_shape.c_str();
    answer->schedule_json = a.kernel.schedule_json.c_str();
    answer->schedule_source = a.kernel.schedule_source.c_str();
    answer->op_hash = a.kernel.key.op_hash.c_str();
    answer->reason = a.reason.c_str();
    answer->time_ms = a.kernel.time_ms;
    answer->gflops = a.kernel.gflops;
    bool checked = a.kind == opgen::db::AnswerKind::Exact || a.kind == opgen::db::AnswerKind::Generic;
    answer->verified = checked && a.kernel.verified ? 1 : 0;
    return 0;
}

int opgen_cache_kernel_find(opgen_cache *cache, const char *op, const char *shape,
                            const char *dtype, const char *target,
                            const opgen_cache_kernel **kernel_out) {
    if (!cache) {
        return -1;
    }
    if (!op || !shape || !target || !kernel_out) {
        cache->error = "opgen_cache_kernel_find: op, shape, target and kernel_out must not be NULL";
        return -1;
    }
    *kernel_out = nullptr;
    try {
        std::string why;
        std::shared_ptr<const opgen::db::LoadedKernel> loaded =
            cache->lookup->kernel(request_of(op, shape, dtype, target), &why);
        if (!loaded) {
            cache->error = why;
            return -1;
        }
        std::unique_ptr<opgen_cache_kernel> &kept = cache->kernels[loaded.get()];
        if (!kept) {
            kept.reset(new opgen_cache_kernel{std::move(loaded)});
        }
        *kernel_out = kept.get();
        cache->error.clear();
        return 0;
    } catch (const std::exception &e) {
        cache->error = e.what();
        return -1;
    }
}

int opgen_cache_kernel_is_generic(const opgen_cache_kernel *kernel) {
    return kernel ? (kernel->loaded->generic() ? 1 : 0) : -1;
}

const char *opgen_cache_kernel_shape(const opgen_cache_kernel *kernel) {
    return kernel ? kernel->loaded->shape().c_str() : "";
}

int opgen_cache_kernel_arguments(const opgen_cache_kernel *kernel) {
    return kernel ? int(kernel->loaded->arguments().size()) : -1;
}

const char *opgen_cache_kernel_argument_name(const opgen_cache_kernel *kernel, int i) {
    const opgen::db::CodeArgument *a = argument(kernel, i);
    return a ? a->name.c_str() : nullptr;
}

const char *opgen_cache_kernel_argument_dtype(const opgen_cache_kernel *kernel, int i) {
    const opgen::db::CodeArgument *a = argument(kernel, i);
    return a ? a->dtype.c_str() : nullptr;
}

int opgen_cache_kernel_argument_dims(const opgen_cache_kernel *kernel, int i, long long *dims,
                                     int max_dims) {
    const opgen::db::CodeArgument *a = argument(kernel, i);
    if (!a) {
        return -1;
    }
    for (int d = 0; d < int(a->dims.size()) && d < max_dims && dims; d++) {
        dims[d] = a->dims[d];
    }
    return int(a->dims.size());
}

int opgen_cache_kernel_call(const opgen_cache_kernel *kernel, void *const *data, int count) {
    if (!kernel || count < 0) {
        return -1;
    }
    return kernel->loaded->call(data, size_t(count));
}

int opgen_cache_kernel_call_buffers(const opgen_cache_kernel *kernel,
                                    struct halide_buffer_t *const *buffers, int count) {
    if (!kernel || count < 0) {
        return -1;
    }
    return kernel->loaded->call(buffers, size_t(count));
}

const char *opgen_cache_error(const opgen_cache *cache) {
    return cache ? cache->error.c_str() : "no cache handle";
}

} // extern "C"
