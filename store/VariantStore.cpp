#include "store/VariantStore.h"

#include <sqlite3.h>

#include <cmath>
#include <ctime>

#include "store/Sqlite.h"

namespace opgen::db {

namespace {

constexpr int kBusyTimeoutMs = 10000;

// Key columns bound in KernelKey order as parameters 1-7.
void bind_key_columns(SqliteQuery &query, const KernelKey &key) {
    const std::string *columns[] = {&key.op_name, &key.dtype, &key.target, &key.halide_version,
                                    &key.tuner_version, &key.op_hash, &key.shape};
    const int parameter[] = {1, 4, 5, 6, 7, 2, 3};
    for (int i = 0; i < 7; i++) {
        query.bind(parameter[i], *columns[i]);
    }
}

}  // namespace

void put_variant(const std::string &path, const VariantRecord &record) {
    if (!(record.time_ms > 0) || !std::isfinite(record.time_ms)) {
        throw DbError("database '" + path + "': variant at level " + std::to_string(record.level) +
                      " has time " + std::to_string(record.time_ms) + " ms; it must be positive");
    }
    if (record.created_at.empty()) {
        std::time_t now = std::time(nullptr);
        std::tm utc{};
        gmtime_r(&now, &utc);
        char text[32];
        std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
        VariantRecord stamped = record;
        stamped.created_at = text;
        return put_variant(path, stamped);
    }
    // Opening through the cache creates or migrates the schema (which has the table since
    // version 3) and reports a foreign file.
    open_kernel_cache(path, OpenMode::ReadWrite);
    SqliteConnection connection(path, SQLITE_OPEN_READWRITE, kBusyTimeoutMs);
    const std::string what = "storing a schedule variant";
    SqliteTransaction transaction(connection, what);
    SqliteQuery insert(connection,
                       "INSERT OR REPLACE INTO kernel_variants (op_name, op_hash, shape, dtype, target, "
                       "halide_version, tuner_version, level, load, schedule_json, schedule_source, time_ms, "
                       "quiet_time_ms, trials, created_at) "
                       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
                       what);
    bind_key_columns(insert, record.key);
    insert.bind(8, record.level)
        .bind(9, record.load)
        .bind(10, record.schedule_json)
        .bind(11, record.schedule_source)
        .bind(12, record.time_ms)
        .bind(13, record.quiet_time_ms > 0 ? record.quiet_time_ms : NAN)
        .bind(14, record.trials)
        .bind(15, record.created_at);
    insert.run();
    transaction.commit();
}

std::vector<VariantRecord> variants_for(const std::string &path, const KernelKey &key) {
    // Opening through the cache checks the file is a kernel cache of a version we read.
    open_kernel_cache(path, OpenMode::ReadOnly);
    SqliteConnection connection(path, SQLITE_OPEN_READONLY, kBusyTimeoutMs);
    std::vector<VariantRecord> out;
    SqliteQuery query(connection,
                      "SELECT level, load, schedule_json, schedule_source, time_ms, quiet_time_ms, trials, "
                      "created_at FROM kernel_variants WHERE op_name = ?1 AND op_hash = ?2 AND shape = ?3 "
                      "AND dtype = ?4 AND target = ?5 AND halide_version = ?6 AND tuner_version = ?7 "
                      "ORDER BY level",
                      "reading schedule variants");
    bind_key_columns(query, key);
    while (query.step()) {
        VariantRecord r;
        r.key = key;
        r.level = query.real(0);
        r.load = query.text(1);
        r.schedule_json = query.text(2);
        r.schedule_source = query.text(3);
        r.time_ms = query.real(4);
        r.quiet_time_ms = query.is_null(5) ? 0 : query.real(5);
        r.trials = query.integer(6);
        r.created_at = query.text(7);
        out.push_back(std::move(r));
    }
    return out;
}

}  // namespace opgen::db
