// The C API (opgen_cache.h) over KernelLookup. No exception crosses into C: every one becomes -1
// and a message.
#include "db/opgen_cache.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>

#include "db/CacheHandle.h"

namespace {

char *copy_string(const std::string &text) {
    char *copy = static_cast<char *>(std::malloc(text.size() + 1));
    if (copy) {
        std::memcpy(copy, text.c_str(), text.size() + 1);
    }
    return copy;
}

} // namespace

extern "C" {

int opgen_cache_open(const char *path, opgen_cache **cache_out, char **error_out) {
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
        cache->lookup = opgen::db::open_kernel_lookup(path);
        *cache_out = cache.release();
        return 0;
    } catch (const std::exception &e) {
        if (error_out) {
            *error_out = copy_string(e.what());
        }
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
        opgen::db::LookupRequest request;
        request.op_name = op;
        request.shape = shape;
        request.target = target;
        if (dtype) {
            request.dtype = dtype;
        }
        cache->last = cache->lookup->find(request);
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
    answer->verified = a.kind == opgen::db::AnswerKind::Exact && a.kernel.verified ? 1 : 0;
    return 0;
}

const char *opgen_cache_error(const opgen_cache *cache) {
    return cache ? cache->error.c_str() : "no cache handle";
}

} // extern "C"
