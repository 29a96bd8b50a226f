// Reading and writing rows of the generic_code table (schema version 5) and of the timings of
// generic code (generic_timings, version 6), shared by the cache
// (KernelCache.cpp) and the lookup library (Lookup.cpp, GenericKernels.cpp). Used only inside db/.
#ifndef OPGEN_STORE_GENERIC_CODE_ROWS_H
#define OPGEN_STORE_GENERIC_CODE_ROWS_H

#include "store/KernelCache.h"
#include "store/Sqlite.h"

#include <string>
#include <vector>

namespace opgen::db {

// Inserts or replaces `record`, its created_at filled (the caller holds the write transaction). Raises DbError naming
// `what` when the code is not generic or does not match its size or digest.
void write_generic_code(SqliteConnection &connection, const GenericCodeRecord &record,
                        const std::string &what);

// Whether read_generic_code reads each row's code bytes, or leaves them empty (every other field
// read) for read_generic_code_bytes to fetch for the rows that are checked in full or loaded.
enum class CodeBytes { Read, Leave };

// The generic code rows of an op on a target with the dtype; `op_hash`, `halide_version` and
// `tuner_version` filter when not empty. In key order; as stored, unchecked.
std::vector<GenericCodeRecord> read_generic_code(SqliteConnection &connection,
                                                 const std::string &target,
                                                 const std::string &op_name,
                                                 const std::string &dtype,
                                                 const std::string &op_hash = "",
                                                 const std::string &halide_version = "",
                                                 const std::string &tuner_version = "",
                                                 CodeBytes bytes = CodeBytes::Read);

// The code bytes of the generic row of `key` whose stored digest is `digest`; empty when there is
// no such row now (removed or replaced since it was read: its code then fails its checks).
std::vector<uint8_t> read_generic_code_bytes(SqliteConnection &connection, const KernelKey &key,
                                             const std::string &digest);

// Inserts or replaces the timing (the caller holds the write transaction). Raises DbError naming
// `what` when no generic code of the record's key has its digest, or a time or the ratio is not
// positive and finite.
void write_generic_timing(SqliteConnection &connection, const GenericTimingRecord &record,
                          const std::string &what);

// The timings of an op's generic code on a target with the dtype, filtered as read_generic_code
// does; in key order, then at_shape.
std::vector<GenericTimingRecord> read_generic_timings(SqliteConnection &connection,
                                                      const std::string &target,
                                                      const std::string &op_name,
                                                      const std::string &dtype,
                                                      const std::string &op_hash = "",
                                                      const std::string &halide_version = "",
                                                      const std::string &tuner_version = "");

} // namespace opgen::db

#endif
