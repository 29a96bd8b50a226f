// An in-memory KernelCache: every interface of store/KernelCache.h over plain containers, with the
// SQLite cache's contract (which record wins, what is refused, the order rows come back in) and no
// file. Unit tests of other modules use it where a cache is a collaborator, not the subject; the
// store's own contract tests run on both implementations (tests/store/CacheContractTest.cpp).
#ifndef OPGEN_STORE_MEMORY_CACHE_H
#define OPGEN_STORE_MEMORY_CACHE_H

#include "store/KernelCache.h"

#include <memory>
#include <string>

namespace opgen::db {

// A new, empty in-memory cache; `name` is what path() returns and errors name. Safe to share
// between threads, as the SQLite cache is.
std::unique_ptr<KernelCache> open_memory_cache(const std::string &name = ":memory:");

}  // namespace opgen::db

#endif
