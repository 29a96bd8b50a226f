// Schedule variants of one cache key (docs/design.md §7.6), by path: the VariantRowStore of the
// cache file at a path (store/KernelCache.h). Besides the winner on a quiet machine,
// the winners measured under controlled memory-bandwidth contention, one row per contention level,
// in the table `kernel_variants` of the kernel-cache file.
//
// The table is part of the schema since version 3 (store/Schema.cpp); before, put_variant made it on
// first use, in the same form, and the migration keeps such a table with its rows.
#ifndef OPGEN_STORE_VARIANT_STORE_H
#define OPGEN_STORE_VARIANT_STORE_H

#include "store/KernelCache.h"

#include <string>
#include <vector>

namespace opgen::db {

// Raises DbError naming the cache at `path` unless `record`'s time is positive and finite: what
// every VariantRowStore checks before storing a variant.
void check_variant_time(const std::string &path, const VariantRecord &record);

// Stores `record` in the cache file at `path` (opened read-write, created or migrated as
// open_kernel_cache does), replacing the key's variant at the same level. Raises DbError as
// open_kernel_cache does, and for a time that is not positive.
void put_variant(const std::string &path, const VariantRecord &record);

// The variants of `key` in the file at `path`, by increasing level; empty when the key has none.
// Opens the file read-only; raises DbError as open_kernel_cache does.
std::vector<VariantRecord> variants_for(const std::string &path, const KernelKey &key);

}  // namespace opgen::db

#endif
