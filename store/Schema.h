// The tables of the kernel cache and their versions, used only inside db/.
//
// The version lives in the file's `PRAGMA user_version`: 0 is a new, empty file, and each later
// version is reached from the one before by one step of SQL, so a file of any older version is
// brought forward at open, in one transaction. A file of a newer version, or one that holds
// someone else's tables, is refused untouched.
#ifndef OPGEN_STORE_SCHEMA_H
#define OPGEN_STORE_SCHEMA_H

namespace opgen::db {

class SqliteConnection;

// Reads the schema version of the open file and checks that this build can use it; returns the
// version (0 for a new, empty file). Raises DbError for a file that is not a SQLite database, a
// version newer than kernel_cache_schema_version(), a version-0 file that already holds tables,
// or a current-version file that lacks one of ours. Writes nothing.
int check_schema(SqliteConnection &connection);

// Brings the file to kernel_cache_schema_version() in one write transaction. Checks again under
// the write lock, since another process may have created or upgraded the schema meanwhile.
// Raises DbError as check_schema does, or when the write lock cannot be had in time.
void upgrade_schema(SqliteConnection &connection);

} // namespace opgen::db

#endif
