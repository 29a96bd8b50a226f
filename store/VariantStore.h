// Schedule variants of one cache key (docs/design.md §7.6): besides the winner on a quiet machine,
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

struct VariantRecord {
    KernelKey key;
    double level = 0;             // contention level it was tuned under; 0 is the quiet machine
    std::string load;             // how the load was made, e.g. "1 thread x 100% streaming 64 MiB"
    std::string schedule_json;
    std::string schedule_source;
    double time_ms = 0;           // median time under its own level
    double quiet_time_ms = 0;     // median time on the quiet machine, measured in the same run
    int64_t trials = 0;
    std::string created_at;       // ISO-8601 UTC; filled by put_variant when empty
};

// Stores `record` in the cache file at `path` (opened read-write, created or migrated as
// open_kernel_cache does), replacing the key's variant at the same level. Raises DbError as
// open_kernel_cache does, and for a time that is not positive.
void put_variant(const std::string &path, const VariantRecord &record);

// The variants of `key` in the file at `path`, by increasing level; empty when the key has none. Opens the file read-only; raises DbError as
// open_kernel_cache does.
std::vector<VariantRecord> variants_for(const std::string &path, const KernelKey &key);

}  // namespace opgen::db

#endif
