// Reading kernel rows out of a query, shared by the cache (KernelCache.cpp) and the lookup library
// (Lookup.cpp) so both read the columns the same way. Used only inside db/.
#ifndef OPGEN_DB_ROWS_H
#define OPGEN_DB_ROWS_H

#include "db/KernelCache.h"
#include "db/Sqlite.h"

namespace opgen::db {

// The KernelKey columns in key order, as a SELECT list.
inline constexpr const char *kKeyColumns =
    "op_name, op_hash, shape, dtype, target, halide_version, tuner_version";
// The KernelRecord fields other than the key, as a SELECT list, in the order read_record reads.
inline constexpr const char *kRecordColumns = "schedule_json, schedule_source, time_ms, gflops, "
                                              "default_time_ms, verified, trials, created_at";

// Reads the seven key columns starting at `first_column`.
KernelKey read_key(const SqliteQuery &query, int first_column);
// Reads the kRecordColumns starting at `first_column` into `record` (its key is left alone).
void read_record(const SqliteQuery &query, int first_column, KernelRecord &record);

} // namespace opgen::db

#endif
