// A thin RAII layer over the sqlite3 C API, used only inside store/: a connection that keeps its
// prepared statements, a query that resets its statement when it goes out of scope, and a write
// transaction that rolls back unless committed. Every failure becomes a DbError naming the file,
// what was being done and SQLite's reason, so the kernel cache above never handles result codes.
//
// Not thread-safe: one connection serves one thread at a time (the cache holds a mutex).
#ifndef OPGEN_STORE_SQLITE_H
#define OPGEN_STORE_SQLITE_H

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "store/KernelCache.h"

struct sqlite3;
struct sqlite3_stmt;

namespace opgen::db {

// The DbError for SQLITE_BUSY and SQLITE_LOCKED, so that the few callers that retry on their own
// can tell it apart. Never escapes store/ as anything but a DbError.
class DbLockedError : public DbError {
public:
    using DbError::DbError;
};

class SqliteConnection {
public:
    // Opens `path` with the sqlite3_open_v2 `flags` and waits up to `busy_timeout_ms` for locks
    // held by other connections. Raises DbError when SQLite cannot open the file. Opening reads
    // nothing: a file that is not a database is only noticed by the first statement.
    SqliteConnection(const std::string &path, int flags, int busy_timeout_ms);
    ~SqliteConnection();
    SqliteConnection(const SqliteConnection &) = delete;
    SqliteConnection &operator=(const SqliteConnection &) = delete;

    const std::string &path() const { return path_; }
    int busy_timeout_ms() const { return busy_timeout_ms_; }
    // True when SQLite opened the file read-only (asked to, or the file is not writable).
    bool is_read_only() const;
    // The rows changed by the last INSERT, UPDATE or DELETE.
    int64_t changes() const;
    // The rowid of the last row inserted on this connection.
    int64_t last_insert_rowid() const;

    // Runs `sql` (one or more statements; rows are discarded). `what` names the action for the
    // error message, e.g. "creating the schema".
    void exec(const std::string &sql, const std::string &what);
    // Rolls back the open transaction, if any. Never throws: destructors call it while an error
    // is already on its way.
    void rollback() noexcept;
    // The prepared statement for `sql`, compiled on first use and kept until the connection
    // closes.
    sqlite3_stmt *prepared(const std::string &sql, const std::string &what);
    // Raises the DbError for SQLite result code `rc`, met while doing `what`.
    [[noreturn]] void fail(int rc, const std::string &what) const;

private:
    std::string path_;
    int busy_timeout_ms_;
    sqlite3 *db_ = nullptr;
    std::unordered_map<std::string, sqlite3_stmt *> statements_;
};

// One use of a cached statement. Parameters and columns are numbered as in SQLite: parameters
// from 1, columns from 0. The destructor resets the statement, so it holds no lock afterwards.
class SqliteQuery {
public:
    SqliteQuery(SqliteConnection &connection, const std::string &sql, std::string what);
    ~SqliteQuery();
    SqliteQuery(const SqliteQuery &) = delete;
    SqliteQuery &operator=(const SqliteQuery &) = delete;

    SqliteQuery &bind(int index, const std::string &value);
    // NaN binds as NULL (SQLite has no NaN).
    SqliteQuery &bind(int index, double value);
    SqliteQuery &bind(int index, int64_t value);
    SqliteQuery &bind_blob(int index, const std::vector<uint8_t> &bytes);

    // Advances to the next row; false when there are no more.
    bool step();
    // Runs a statement that returns no rows.
    void run();

    // NULL reads as "" for text, NaN for reals, 0 for integers and no bytes for blobs.
    bool is_null(int column) const;
    std::string text(int column) const;
    // The text without a copy: valid until the next step() or the query's end.
    std::string_view text_view(int column) const;
    double real(int column) const;
    int64_t integer(int column) const;
    std::vector<uint8_t> blob(int column) const;

private:
    SqliteConnection &connection_;
    sqlite3_stmt *statement_;
    std::string what_;
};

// A write transaction begun with BEGIN IMMEDIATE, so that it takes the write lock at once
// (waiting up to the busy timeout) instead of failing halfway when a reader would upgrade. Rolls
// back on destruction unless commit() succeeded.
class SqliteTransaction {
public:
    SqliteTransaction(SqliteConnection &connection, std::string what);
    ~SqliteTransaction();
    SqliteTransaction(const SqliteTransaction &) = delete;
    SqliteTransaction &operator=(const SqliteTransaction &) = delete;

    void commit();

private:
    SqliteConnection &connection_;
    std::string what_;
    bool open_ = true;
};

} // namespace opgen::db

#endif
