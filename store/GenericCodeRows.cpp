#include "store/GenericCodeRows.h"

#include "store/Rows.h"

#include <cmath>

namespace opgen::db {
namespace {

// How both generic tables are read: ?1 target, ?2 op, ?3 dtype; ?4-?6 the op hash, Halide and
// tuner versions filter when not empty.
constexpr const char *kOpFilter =
    " WHERE target = ?1 AND op_name = ?2 AND dtype = ?3 AND (?4 = '' OR op_hash = ?4) AND "
    "(?5 = '' OR halide_version = ?5) AND (?6 = '' OR tuner_version = ?6) ";

// One generic row: its key (bind_key, ?1-?7) and stored digest (?8).
const std::string kRowOfDigest = std::string(" WHERE ") + kKeyMatches + " AND digest = ?8";

void bind_op_filter(SqliteQuery &query, const std::string &target, const std::string &op_name,
                    const std::string &dtype, const std::string &op_hash, const std::string &halide_version,
                    const std::string &tuner_version) {
    query.bind(1, target).bind(2, op_name).bind(3, dtype).bind(4, op_hash);
    query.bind(5, halide_version).bind(6, tuner_version);
}

}  // namespace

void write_generic_code(SqliteConnection &connection, const GenericCodeRecord &record,
                        const std::string &what) {
    const KernelCode &code = record.code;
    if (!code.generic || !code_matches_itself(code)) {
        throw DbError("database '" + connection.path() + "': " + what +
                      ": the code is not generic or does not match its own size or digest");
    }
    SqliteQuery insert(connection, R"sql(
INSERT OR REPLACE INTO generic_code (op_name, op_hash, shape, dtype, target, halide_version,
    tuner_version, schedule_json, format, abi_version, halide_target, cpu_features,
    code_halide_version, function, signature, size, digest, created_at, signed_by,
    ed25519_signature, bytes, symbols, fixed, defaults, checked_shapes)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19,
    ?20, ?21, ?22, ?23, ?24, ?25)
)sql",
                       what);
    bind_key(insert, record.key);
    bind_code(insert, 8, code, code.created_at);
    insert.bind(22, code.symbols)
        .bind(23, code.fixed)
        .bind(24, code.defaults)
        .bind(25, record.checked_shapes);
    insert.run();
}

std::vector<GenericCodeRecord> read_generic_code(SqliteConnection &connection,
                                                 const std::string &target,
                                                 const std::string &op_name,
                                                 const std::string &dtype,
                                                 const std::string &op_hash,
                                                 const std::string &halide_version,
                                                 const std::string &tuner_version,
                                                 CodeBytes bytes) {
    static const std::string columns = std::string(kKeyColumns) + ", " + kCodeColumns;
    static const std::string rest = ", symbols, fixed, defaults, checked_shapes FROM generic_code" +
                                    std::string(kOpFilter) + "ORDER BY op_hash, halide_version, tuner_version, shape";
    static const std::string with_bytes = "SELECT " + columns + rest;
    // The same columns with an empty blob for the bytes (the last one).
    static const std::string without_bytes = "SELECT " + columns.substr(0, columns.rfind("bytes")) + "x''" + rest;
    SqliteQuery query(connection, bytes == CodeBytes::Read ? with_bytes : without_bytes,
                      "reading the generic code of op '" + op_name + "' on target '" + target + "'");
    bind_op_filter(query, target, op_name, dtype, op_hash, halide_version, tuner_version);
    std::vector<GenericCodeRecord> rows;
    while (query.step()) {
        GenericCodeRecord row;
        row.key = read_key(query, 0);
        row.code = read_code(query, 7);
        row.code.generic = true;
        row.code.symbols = query.text(21);
        row.code.fixed = query.text(22);
        row.code.defaults = query.text(23);
        row.checked_shapes = query.text(24);
        rows.push_back(std::move(row));
    }
    return rows;
}

std::vector<uint8_t> read_generic_code_bytes(SqliteConnection &connection, const KernelKey &key,
                                             const std::string &digest) {
    SqliteQuery query(connection, std::string("SELECT bytes FROM generic_code") + kRowOfDigest,
                      "reading the generic code of op '" + key.op_name + "' from shape " + key.shape);
    bind_key(query, key);
    query.bind(8, digest);
    if (!query.step()) return {};
    return query.blob(0);
}

void write_generic_timing(SqliteConnection &connection, const GenericTimingRecord &record,
                          const std::string &what) {
    for (double v : {record.time_ms, record.tuned_ms, record.ratio}) {
        if (!std::isfinite(v) || v <= 0) {
            throw DbError("database '" + connection.path() + "': " + what +
                          ": times and ratio must be positive and finite, got " +
                          std::to_string(record.time_ms) + " ms, " + std::to_string(record.tuned_ms) +
                          " ms, ratio " + std::to_string(record.ratio));
        }
    }
    SqliteQuery code(connection, std::string("SELECT 1 FROM generic_code") + kRowOfDigest, what);
    bind_key(code, record.key);
    code.bind(8, record.digest);
    if (!code.step()) {
        throw DbError("database '" + connection.path() + "': " + what + ": no generic code of digest " +
                      record.digest + " is stored for its key");
    }
    SqliteQuery insert(connection, R"sql(
INSERT OR REPLACE INTO generic_timings (op_name, op_hash, shape, dtype, target, halide_version,
    tuner_version, digest, at_shape, time_ms, tuned_ms, ratio, created_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
)sql",
                       what);
    bind_key(insert, record.key);
    insert.bind(8, record.digest)
        .bind(9, record.at_shape)
        .bind(10, record.time_ms)
        .bind(11, record.tuned_ms)
        .bind(12, record.ratio)
        .bind(13, record.created_at);
    insert.run();
}

std::vector<GenericTimingRecord> read_generic_timings(SqliteConnection &connection,
                                                      const std::string &target,
                                                      const std::string &op_name,
                                                      const std::string &dtype,
                                                      const std::string &op_hash,
                                                      const std::string &halide_version,
                                                      const std::string &tuner_version) {
    static const std::string sql =
        std::string("SELECT ") + kKeyColumns +
        ", digest, at_shape, time_ms, tuned_ms, ratio, created_at FROM generic_timings" + kOpFilter +
        "ORDER BY op_hash, halide_version, tuner_version, shape, at_shape";
    SqliteQuery query(connection, sql,
                      "reading the generic kernel timings of op '" + op_name + "' on target '" + target + "'");
    bind_op_filter(query, target, op_name, dtype, op_hash, halide_version, tuner_version);
    std::vector<GenericTimingRecord> rows;
    while (query.step()) {
        GenericTimingRecord row;
        row.key = read_key(query, 0);
        row.digest = query.text(7);
        row.at_shape = query.text(8);
        row.time_ms = query.real(9);
        row.tuned_ms = query.real(10);
        row.ratio = query.real(11);
        row.created_at = query.text(12);
        rows.push_back(std::move(row));
    }
    return rows;
}

} // namespace opgen::db
