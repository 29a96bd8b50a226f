// Reading and writing rows of the generic_code table (schema version 5), shared by the cache
// (KernelCache.cpp) and the lookup library (Lookup.cpp, GenericKernels.cpp). Used only inside db/.
#ifndef OPGEN_DB_GENERIC_CODE_ROWS_H
#define OPGEN_DB_GENERIC_CODE_ROWS_H

#include "db/KernelCache.h"
#include "db/Sqlite.h"

#include <string>
#include <vector>

namespace opgen::db {

// Inserts or replaces `record`, its created_at filled (the caller holds the write transaction). Raises DbError naming
// `what` when the code is not generic or does not match its size or digest.
void write_generic_code(SqliteConnection &connection, const GenericCodeRecord &record,
                        const std::string &what);

// The generic code rows of an op on a target with the dtype; `op_hash`, `halide_version` and
// `tuner_version` filter when not empty. In key order; as stored, unchecked.
std::vector<GenericCodeRecord> read_generic_code(SqliteConnection &connection,
                                                 const std::string &target,
                                                 const std::string &op_name,
                                                 const std::string &dtype,
                                                 const std::string &op_hash = "",
                                                 const std::string &halide_version = "",
                                                 const std::string &tuner_version = "");

} // namespace opgen::db

#endif
