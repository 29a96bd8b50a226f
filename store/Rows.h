// Reading kernel rows out of a query, shared by the cache (KernelCache.cpp) and the lookup library
// (Lookup.cpp) so both read the columns the same way. Used only inside db/.
#ifndef OPGEN_STORE_ROWS_H
#define OPGEN_STORE_ROWS_H

#include "store/KernelCache.h"
#include "store/Sqlite.h"

#include <string>
#include <vector>

namespace opgen::db {

// The KernelKey columns in key order, as a SELECT list.
inline constexpr const char *kKeyColumns =
    "op_name, op_hash, shape, dtype, target, halide_version, tuner_version";
// The condition that a row's key columns equal parameters ?1 to ?7 (bind_key).
inline constexpr const char *kKeyMatches = "op_name = ?1 AND op_hash = ?2 AND shape = ?3 AND dtype = ?4 "
                                           "AND target = ?5 AND halide_version = ?6 "
                                           "AND tuner_version = ?7";
// The KernelRecord fields other than the key, as a SELECT list, in the order read_record reads.
inline constexpr const char *kRecordColumns = "schedule_json, schedule_source, time_ms, gflops, "
                                              "default_time_ms, verified, trials, created_at";

// The KernelCode fields, as a SELECT list (of table `kernel_code`), in the order read_code reads.
inline constexpr const char *kCodeColumns =
    "format, abi_version, halide_target, cpu_features, code_halide_version, function, signature, "
    "schedule_json, size, digest, created_at, signed_by, ed25519_signature, bytes";
// The same list with every column prefixed by `alias` and a dot, for joins.
std::string code_columns(const std::string &alias);
// kernel_code's columns matching kernels' on the key, `code` and `kernel` the two tables' aliases,
// and the code compiled from the kernel's current schedule: a join condition.
std::string code_of_kernel(const std::string &code, const std::string &kernel);

// The busy timeout for connections to `path`: OPGEN_DB_BUSY_TIMEOUT_MS, else 10 s. Raises DbError
// naming the variable when it is not a number of milliseconds.
int busy_timeout_from_environment(const std::string &path);

// Reads the seven key columns starting at `first_column`.
KernelKey read_key(const SqliteQuery &query, int first_column);
// Reads the kRecordColumns starting at `first_column` into `record` (its key is left alone).
void read_record(const SqliteQuery &query, int first_column, KernelRecord &record);
// Every remaining row of a query that selects kKeyColumns then kRecordColumns.
std::vector<KernelRecord> read_kernels(SqliteQuery &query);
// Binds a key's seven fields to parameters 1 to 7, in kKeyColumns' order.
void bind_key(SqliteQuery &query, const KernelKey &key);
// Binds a code's schedule_json, format, abi_version, halide_target, cpu_features, halide_version,
// function, signature, size, digest, `created_at`, signed_by, ed25519_signature and bytes to the
// fourteen parameters from `first`.
void bind_code(SqliteQuery &query, int first, const KernelCode &code, const std::string &created_at);
// Reads the kCodeColumns starting at `first_column`.
KernelCode read_code(const SqliteQuery &query, int first_column);

} // namespace opgen::db

#endif
