// Reading kernel rows out of a query, shared by the cache (KernelCache.cpp) and the lookup library
// (Lookup.cpp) so both read the columns the same way. Used only inside db/.
#ifndef OPGEN_DB_ROWS_H
#define OPGEN_DB_ROWS_H

#include "db/KernelCache.h"
#include "db/Sqlite.h"

#include <string>

namespace opgen::db {

// The KernelKey columns in key order, as a SELECT list.
inline constexpr const char *kKeyColumns =
    "op_name, op_hash, shape, dtype, target, halide_version, tuner_version";
// The KernelRecord fields other than the key, as a SELECT list, in the order read_record reads.
inline constexpr const char *kRecordColumns = "schedule_json, schedule_source, time_ms, gflops, "
                                              "default_time_ms, verified, trials, created_at";

// The busy timeout for connections to `path`: OPGEN_DB_BUSY_TIMEOUT_MS, else 10 s. Raises DbError
// naming the variable when it is not a number of milliseconds.
int busy_timeout_from_environment(const std::string &path);

// Reads the seven key columns starting at `first_column`.
KernelKey read_key(const SqliteQuery &query, int first_column);
// Reads the kRecordColumns starting at `first_column` into `record` (its key is left alone).
void read_record(const SqliteQuery &query, int first_column, KernelRecord &record);

} // namespace opgen::db

#endif
