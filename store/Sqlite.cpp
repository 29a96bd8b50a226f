#include "store/Sqlite.h"

#include <cmath>
#include <utility>

#include <sqlite3.h>

namespace opgen::db {

SqliteConnection::SqliteConnection(const std::string &path, int flags, int busy_timeout_ms)
    : path_(path), busy_timeout_ms_(busy_timeout_ms) {
    int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
    if (rc != SQLITE_OK) {
        // sqlite3_open_v2 hands back a handle even on failure; it carries the message and must
        // still be closed.
        std::string reason = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
        sqlite3_close_v2(db_);
        db_ = nullptr;
        throw DbError("database '" + path + "' cannot be opened: " + reason);
    }
    sqlite3_busy_timeout(db_, busy_timeout_ms);
}

SqliteConnection::~SqliteConnection() {
    for (auto &entry : statements_) {
        sqlite3_finalize(entry.second);
    }
    sqlite3_close_v2(db_);
}

bool SqliteConnection::is_read_only() const {
    return sqlite3_db_readonly(db_, "main") == 1;
}

int64_t SqliteConnection::changes() const {
    return sqlite3_changes64(db_);
}

int64_t SqliteConnection::last_insert_rowid() const {
    return sqlite3_last_insert_rowid(db_);
}

void SqliteConnection::exec(const std::string &sql, const std::string &what) {
    int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) {
        fail(rc, what);
    }
}

void SqliteConnection::rollback() noexcept {
    // Some errors (SQLITE_FULL, SQLITE_IOERR, ...) already rolled the transaction back.
    if (sqlite3_get_autocommit(db_) == 0) {
        sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    }
}

sqlite3_stmt *SqliteConnection::prepared(const std::string &sql, const std::string &what) {
    auto found = statements_.find(sql);
    if (found != statements_.end()) {
        return found->second;
    }
    sqlite3_stmt *statement = nullptr;
    int rc = sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size() + 1),
                                SQLITE_PREPARE_PERSISTENT, &statement, nullptr);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(statement);
        fail(rc, what);
    }
    statements_.emplace(sql, statement);
    return statement;
}

void SqliteConnection::fail(int rc, const std::string &what) const {
    // Read the message now: the reset that follows the throw would replace it.
    std::string reason = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    std::string database = "database '" + path_ + "'";
    switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        throw DbLockedError(database + " is locked: " + what + " gave up after waiting " +
                            std::to_string(busy_timeout_ms_) + " ms for another connection");
    case SQLITE_NOTADB:
        throw DbError(database + " is not an opgen kernel cache: " + reason);
    case SQLITE_CORRUPT:
        throw DbError(database + " is corrupt: " + what + ": " + reason);
    case SQLITE_READONLY:
        throw DbError(database + " is read-only: " + what + ": " + reason);
    default:
        throw DbError(database + ": " + what + " failed: " + reason);
    }
}

SqliteQuery::SqliteQuery(SqliteConnection &connection, const std::string &sql, std::string what)
    : connection_(connection), statement_(connection.prepared(sql, what)), what_(std::move(what)) {}

SqliteQuery::~SqliteQuery() {
    sqlite3_reset(statement_);
    sqlite3_clear_bindings(statement_);
}

SqliteQuery &SqliteQuery::bind(int index, const std::string &value) {
    int rc = sqlite3_bind_text(statement_, index, value.data(), static_cast<int>(value.size()),
                               SQLITE_TRANSIENT);
    if (rc != SQLITE_OK) {
        connection_.fail(rc, what_);
    }
    return *this;
}

SqliteQuery &SqliteQuery::bind(int index, double value) {
    int rc = std::isnan(value) ? sqlite3_bind_null(statement_, index)
                               : sqlite3_bind_double(statement_, index, value);
    if (rc != SQLITE_OK) {
        connection_.fail(rc, what_);
    }
    return *this;
}

SqliteQuery &SqliteQuery::bind(int index, int64_t value) {
    int rc = sqlite3_bind_int64(statement_, index, value);
    if (rc != SQLITE_OK) {
        connection_.fail(rc, what_);
    }
    return *this;
}

SqliteQuery &SqliteQuery::bind_blob(int index, const std::vector<uint8_t> &bytes) {
    // A null data pointer would bind NULL, not an empty blob, and the columns are NOT NULL.
    int rc = bytes.empty() ? sqlite3_bind_zeroblob(statement_, index, 0)
                           : sqlite3_bind_blob(statement_, index, bytes.data(),
                                               static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
    if (rc != SQLITE_OK) {
        connection_.fail(rc, what_);
    }
    return *this;
}

bool SqliteQuery::step() {
    int rc = sqlite3_step(statement_);
    if (rc == SQLITE_ROW) {
        return true;
    }
    if (rc == SQLITE_DONE) {
        return false;
    }
    connection_.fail(rc, what_);
}

void SqliteQuery::run() {
    while (step()) {
    }
}

bool SqliteQuery::is_null(int column) const {
    return sqlite3_column_type(statement_, column) == SQLITE_NULL;
}

std::string SqliteQuery::text(int column) const {
    const unsigned char *data = sqlite3_column_text(statement_, column);
    if (!data) {
        return std::string();
    }
    return std::string(reinterpret_cast<const char *>(data),
                       static_cast<size_t>(sqlite3_column_bytes(statement_, column)));
}

std::string_view SqliteQuery::text_view(int column) const {
    const unsigned char *data = sqlite3_column_text(statement_, column);
    if (!data) {
        return std::string_view();
    }
    return std::string_view(reinterpret_cast<const char *>(data),
                            static_cast<size_t>(sqlite3_column_bytes(statement_, column)));
}

double SqliteQuery::real(int column) const {
    if (sqlite3_column_type(statement_, column) == SQLITE_NULL) {
        return std::nan("");
    }
    return sqlite3_column_double(statement_, column);
}

int64_t SqliteQuery::integer(int column) const {
    return sqlite3_column_int64(statement_, column);
}

std::vector<uint8_t> SqliteQuery::blob(int column) const {
    const auto *data = static_cast<const uint8_t *>(sqlite3_column_blob(statement_, column));
    if (!data) {
        return {};
    }
    return std::vector<uint8_t>(data, data + sqlite3_column_bytes(statement_, column));
}

SqliteTransaction::SqliteTransaction(SqliteConnection &connection, std::string what)
    : connection_(connection), what_(std::move(what)) {
    connection_.exec("BEGIN IMMEDIATE", what_);
}

SqliteTransaction::~SqliteTransaction() {
    if (open_) {
        connection_.rollback();
    }
}

void SqliteTransaction::commit() {
    connection_.exec("COMMIT", what_);
    open_ = false;
}

} // namespace opgen::db
