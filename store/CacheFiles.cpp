#include "store/CacheFiles.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

#include <nlohmann/json.hpp>
#include <sqlite3.h>
#include <unistd.h>

#include "store/KernelCache.h"
#include "store/Rows.h"
#include "store/Schema.h"
#include "store/Sqlite.h"

namespace opgen::db {

namespace {

std::string quoted(const std::string &path) {
    return "database '" + path + "'";
}

// The seven fields of a cache key, as every exported row starts.
nlohmann::json key_json(const KernelKey &key) {
    return {{"op", key.op_name},           {"op_hash", key.op_hash},
            {"shape", key.shape},          {"dtype", key.dtype},
            {"target", key.target},        {"halide_version", key.halide_version},
            {"tuner_version", key.tuner_version}};
}

// A stored JSON text as JSON, or as a plain string when it does not parse.
nlohmann::json json_or_text(const std::string &text) {
    nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
    return parsed.is_discarded() ? nlohmann::json(text) : parsed;
}

// The schema version of an input, read without writing (check_schema refuses what is not a
// cache, is corrupt or is newer than this build).
int input_version(const std::string &path) {
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error)) {
        throw DbError(quoted(path) + (std::filesystem::exists(path, error) ? " is not a regular file"
                                                                            : " does not exist"));
    }
    SqliteConnection connection(path, SQLITE_OPEN_READONLY, busy_timeout_from_environment(path));
    return check_schema(connection);
}

void remove_files(const std::string &path) {
    for (const char *suffix : {"", "-wal", "-shm", "-journal"}) {
        ::unlink((path + suffix).c_str());
    }
}

int64_t count(SqliteConnection &connection, const std::string &table) {
    SqliteQuery query(connection, "SELECT count(*) FROM " + table, "counting " + table);
    query.step();
    return query.integer(0);
}

// Compiled code follows its kernel: the input's code enters where it was compiled from the merged
// winner's schedule (code already there for that schedule stays), and code whose kernel a faster
// one replaced is dropped, so the merged file holds no stale code.
void merge_code(SqliteConnection &out, const std::string &what) {
    const std::string columns = "op_name, op_hash, shape, dtype, target, halide_version, "
                                "tuner_version, " + std::string(kCodeColumns);
    out.exec("INSERT INTO main.kernel_code (" + columns + ") SELECT c.op_name, c.op_hash, c.shape, "
             "c.dtype, c.target, c.halide_version, c.tuner_version, " + code_columns("c") +
             " FROM src.kernel_code AS c JOIN main.kernels AS k ON " + code_of_kernel("c", "k") +
             " ORDER BY c.rowid ON CONFLICT (target, op_name, op_hash, shape, dtype, "
             "halide_version, tuner_version) DO UPDATE SET schedule_json = excluded.schedule_json, "
             "format = excluded.format, abi_version = excluded.abi_version, halide_target = "
             "excluded.halide_target, cpu_features = excluded.cpu_features, code_halide_version = "
             "excluded.code_halide_version, function = excluded.function, signature = "
             "excluded.signature, size = excluded.size, digest = excluded.digest, created_at = "
             "excluded.created_at, signed_by = excluded.signed_by, ed25519_signature = "
             "excluded.ed25519_signature, bytes = excluded.bytes WHERE kernel_code.schedule_json <> "
             "excluded.schedule_json;\n"
             "DELETE FROM main.kernel_code AS c WHERE NOT EXISTS (SELECT 1 FROM main.kernels AS k "
             "WHERE " + code_of_kernel("c", "k") + ");",
             what);
}

// Generic code belongs to no kernel row: the input's rows enter, replacing a row of the same key
// (the same op, target, versions and source shape) only when compiled from another schedule.
void merge_generic_code(SqliteConnection &out, const std::string &what) {
    out.exec("INSERT INTO main.generic_code SELECT * FROM src.generic_code AS g WHERE true ORDER BY g.rowid "
             "ON CONFLICT (target, op_name, dtype, op_hash, halide_version, tuner_version, shape) DO UPDATE "
             "SET schedule_json = excluded.schedule_json, format = excluded.format, abi_version = "
             "excluded.abi_version, halide_target = excluded.halide_target, cpu_features = "
             "excluded.cpu_features, code_halide_version = excluded.code_halide_version, function = "
             "excluded.function, signature = excluded.signature, size = excluded.size, digest = "
             "excluded.digest, created_at = excluded.created_at, signed_by = excluded.signed_by, "
             "ed25519_signature = excluded.ed25519_signature, bytes = excluded.bytes, symbols = "
             "excluded.symbols, fixed = excluded.fixed, defaults = excluded.defaults, checked_shapes = "
             "excluded.checked_shapes WHERE generic_code.schedule_json <> excluded.schedule_json;",
             what);
    // Timings of generic code follow it; a timing of code no longer the key's (replaced above,
    // or by the input with older code) measured something else and is dropped.
    out.exec("INSERT OR REPLACE INTO main.generic_timings SELECT * FROM src.generic_timings ORDER BY rowid;"
             "DELETE FROM main.generic_timings AS t WHERE NOT EXISTS (SELECT 1 FROM main.generic_code AS g "
             "WHERE g.target = t.target AND g.op_name = t.op_name AND g.dtype = t.dtype AND g.op_hash = "
             "t.op_hash AND g.halide_version = t.halide_version AND g.tuner_version = t.tuner_version AND "
             "g.shape = t.shape AND g.digest = t.digest);",
             what);
}

// The ops, targets, kernels, variants and models of the attached input `src`, merged into main
// as put_kernel and put_model would: per key the faster row stays.
void merge_rows(SqliteConnection &out, const std::string &what) {
    out.exec(R"sql(
INSERT INTO main.ops (name, op_hash, source)
    SELECT name, op_hash, source FROM src.ops WHERE true
    ON CONFLICT (name, op_hash) DO UPDATE SET source = excluded.source WHERE ops.source = '';
INSERT INTO main.targets (name, description, fingerprint)
    SELECT name, description, fingerprint FROM src.targets WHERE true
    ON CONFLICT (name) DO UPDATE SET description = excluded.description,
                                     fingerprint = excluded.fingerprint
    WHERE targets.fingerprint = '';
-- The best per key, as put_kernel decides: the old row stays unless the new one is faster.
INSERT INTO main.kernels (op_name, op_hash, shape, dtype, target, halide_version, tuner_version,
                          schedule_json, schedule_source, time_ms, gflops, default_time_ms,
                          verified, trials, created_at)
    SELECT op_name, op_hash, shape, dtype, target, halide_version, tuner_version, schedule_json,
           schedule_source, time_ms, gflops, default_time_ms, verified, trials, created_at
    FROM src.kernels WHERE true ORDER BY rowid
    ON CONFLICT (target, op_name, op_hash, shape, dtype, halide_version, tuner_version)
    DO UPDATE SET schedule_json = excluded.schedule_json,
                  schedule_source = excluded.schedule_source, time_ms = excluded.time_ms,
                  gflops = excluded.gflops, default_time_ms = excluded.default_time_ms,
                  verified = excluded.verified, trials = excluded.trials,
                  created_at = excluded.created_at
    WHERE excluded.time_ms < kernels.time_ms;
-- Variants likewise, per key and contention level.
INSERT INTO main.kernel_variants (op_name, op_hash, shape, dtype, target, halide_version,
                                  tuner_version, level, load, schedule_json, schedule_source,
                                  time_ms, quiet_time_ms, trials, created_at)
    SELECT op_name, op_hash, shape, dtype, target, halide_version, tuner_version, level, load,
           schedule_json, schedule_source, time_ms, quiet_time_ms, trials, created_at
    FROM src.kernel_variants WHERE true ORDER BY rowid
    ON CONFLICT (target, op_name, op_hash, shape, dtype, halide_version, tuner_version, level)
    DO UPDATE SET load = excluded.load, schedule_json = excluded.schedule_json,
                  schedule_source = excluded.schedule_source, time_ms = excluded.time_ms,
                  quiet_time_ms = excluded.quiet_time_ms, trials = excluded.trials,
                  created_at = excluded.created_at
    WHERE excluded.time_ms < kernel_variants.time_ms;
INSERT INTO main.models (target, name, created_at, train_rows, quality_json, bytes)
    SELECT target, name, created_at, train_rows, quality_json, bytes FROM src.models ORDER BY id;
)sql",
             what);
    merge_code(out, what);
    merge_generic_code(out, what);
}

// The largest run id merged so far: the next input's run ids move past it.
int64_t last_run_id(SqliteConnection &out, const std::string &what) {
    SqliteQuery last(out, "SELECT coalesce(max(id), 0) FROM main.tuning_runs", what);
    last.step();
    return last.integer(0);
}

// Appends every run and measurement of `src`, the run ids moved by `offset` on both sides, so
// each measurement still names its run.
void append_runs(SqliteConnection &out, int64_t offset, const std::string &what) {
    SqliteQuery runs(out, R"sql(
INSERT INTO main.tuning_runs (id, op_name, op_hash, shape, dtype, target, halide_version,
                              tuner_version, started_at, finished_at, trials, status, error,
                              options_json)
    SELECT id + ?1, op_name, op_hash, shape, dtype, target, halide_version, tuner_version,
           started_at, finished_at, trials, status, error, options_json
    FROM src.tuning_runs ORDER BY id
)sql",
                     what);
    runs.bind(1, offset).run();
    SqliteQuery measurements(out, R"sql(
INSERT INTO main.measurements (op_name, op_hash, shape, dtype, target, halide_version,
                               tuner_version, schedule_json, features, feature_rows, time_ms,
                               gflops, status, error, created_at, run_id)
    SELECT op_name, op_hash, shape, dtype, target, halide_version, tuner_version, schedule_json,
           features, feature_rows, time_ms, gflops, status, error, created_at, run_id + ?1
    FROM src.measurements ORDER BY id
)sql",
                             what);
    measurements.bind(1, offset).run();
}

// Merges the input attached as `src` in one transaction: all of it or none.
void merge_attached(SqliteConnection &out, MergeReport &report, const std::string &what) {
    report.kernels_read += count(out, "src.kernels");
    SqliteTransaction transaction(out, what);
    merge_rows(out, what);
    append_runs(out, last_run_id(out, what), what);
    transaction.commit();
}

// Copies one input into the merged file, attached as `src` for the time of the copy.
void merge_one(SqliteConnection &out, const std::string &input, MergeReport &report) {
    const std::string what = "merging " + quoted(input);
    {
        SqliteQuery attach(out, "ATTACH DATABASE ?1 AS src", what);
        attach.bind(1, input).run();
    }
    try {
        merge_attached(out, report, what);
    } catch (...) {
        out.exec("DETACH DATABASE src", what);
        throw;
    }
    out.exec("DETACH DATABASE src", what);
}

} // namespace

namespace {

// Refuses, before anything is written, inputs that cannot be merged into `output` (see
// merge_kernel_caches).
void check_merge_inputs(const std::vector<std::string> &inputs, const std::string &output) {
    if (inputs.empty()) {
        throw DbError("merge needs at least one input database");
    }
    std::error_code error;
    if (std::filesystem::exists(output, error)) {
        throw DbError(quoted(output) + " already exists; merge writes a new file");
    }
    std::vector<int> versions;
    for (const std::string &input : inputs) {
        versions.push_back(input_version(input));
    }
    for (size_t i = 1; i < inputs.size(); i++) {
        if (versions[i] != versions[0]) {
            throw DbError("cannot merge databases of different schema versions: '" + inputs[0] +
                          "' has version " + std::to_string(versions[0]) + ", '" + inputs[i] +
                          "' has version " + std::to_string(versions[i]));
        }
    }
    if (versions[0] != kernel_cache_schema_version()) {
        throw DbError(quoted(inputs[0]) + " has schema version " + std::to_string(versions[0]) +
                      ", not version " + std::to_string(kernel_cache_schema_version()) +
                      " that this build merges; open each input read-write once to upgrade it");
    }
}

// Counts what the merged file holds.
void count_merged(SqliteConnection &out, MergeReport &report) {
    report.kernels = count(out, "kernels");
    report.measurements = count(out, "measurements");
    report.models = count(out, "models");
    report.tuning_runs = count(out, "tuning_runs");
    report.variants = count(out, "kernel_variants");
    report.code = count(out, "kernel_code");
}

} // namespace

MergeReport merge_kernel_caches(const std::vector<std::string> &inputs, const std::string &output) {
    check_merge_inputs(inputs, output);
    // Build under a temporary name, then link into place: a failure leaves nothing at `output`,
    // and a file that appeared there meanwhile is never overwritten.
    std::string temporary = output + ".merging-" + std::to_string(::getpid());
    remove_files(temporary);
    MergeReport report;
    try {
        open_kernel_cache(temporary); // creates the schema, in WAL mode
        {
            SqliteConnection out(temporary, SQLITE_OPEN_READWRITE, busy_timeout_from_environment(temporary));
            for (const std::string &input : inputs) {
                merge_one(out, input, report);
            }
            count_merged(out, report);
            // One self-contained file: fold the WAL back in before it moves.
            out.exec("PRAGMA wal_checkpoint(TRUNCATE)", "checkpointing the merged file");
        }
        if (::link(temporary.c_str(), output.c_str()) != 0) {
            int reason = errno;
            throw DbError("cannot create " + quoted(output) + ": " + std::strerror(reason));
        }
    } catch (...) {
        remove_files(temporary);
        throw;
    }
    remove_files(temporary);
    return report;
}

namespace {

// RFC 4648 base64, for the compiled code in the JSON export.
std::string base64(const std::vector<uint8_t> &bytes) {
    static const char digits[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string text;
    for (size_t i = 0; i < bytes.size(); i += 3) {
        uint32_t group = uint32_t(bytes[i]) << 16;
        if (i + 1 < bytes.size()) group |= uint32_t(bytes[i + 1]) << 8;
        if (i + 2 < bytes.size()) group |= bytes[i + 2];
        text += digits[(group >> 18) & 63];
        text += digits[(group >> 12) & 63];
        text += i + 1 < bytes.size() ? digits[(group >> 6) & 63] : '=';
        text += i + 2 < bytes.size() ? digits[group & 63] : '=';
    }
    return text;
}

nlohmann::json code_json(const KernelCode &code);

// The kernel's code compiled from its current schedule, its bytes in base64; null for none.
nlohmann::json exported_code(SqliteConnection &connection, const KernelRecord &kernel) {
    SqliteQuery query(connection,
                      std::string("SELECT ") + kCodeColumns +
                          " FROM kernel_code WHERE " + kKeyMatches + " AND schedule_json = ?8",
                      "exporting the kernels' code");
    bind_key(query, kernel.key);
    query.bind(8, kernel.schedule_json);
    if (!query.step()) {
        return nullptr;
    }
    return code_json(read_code(query, 0));
}

// Every generic code row (GenericSignature.h): its key (the tuned shape it came from), its
// generic fields and the shapes it was checked at, beside the code as exported_code gives it.
nlohmann::json exported_generic_code(SqliteConnection &connection) {
    nlohmann::json rows = nlohmann::json::array();
    SqliteQuery query(connection,
                      std::string("SELECT ") + kKeyColumns + ", " + kCodeColumns +
                          ", symbols, fixed, defaults, checked_shapes FROM generic_code ORDER BY target, "
                          "op_name, dtype, op_hash, halide_version, tuner_version, shape",
                      "exporting the generic code");
    while (query.step()) {
        nlohmann::json row = key_json(read_key(query, 0));
        row.update({{"schedule", json_or_text(query.text(14))},
                    {"symbols", query.text(21)},
                    {"fixed", query.text(22)},
                    {"defaults", query.text(23)},
                    {"checked_shapes", query.text(24)},
                    {"code", code_json(read_code(query, 7))}});
        rows.push_back(row);
    }
    return rows;
}

// Every timing of generic code at a tuned shape (schema version 6): the generic row's key and
// digest, the tuned shape, both medians and the ratio.
nlohmann::json exported_generic_timings(SqliteConnection &connection) {
    nlohmann::json rows = nlohmann::json::array();
    SqliteQuery query(connection,
                      std::string("SELECT ") + kKeyColumns +
                          ", digest, at_shape, time_ms, tuned_ms, ratio, created_at FROM generic_timings "
                          "ORDER BY target, op_name, dtype, op_hash, halide_version, tuner_version, shape, at_shape",
                      "exporting the generic kernel timings");
    while (query.step()) {
        nlohmann::json row = key_json(read_key(query, 0));
        row.update({{"digest", query.text(7)},
                    {"at_shape", query.text(8)},
                    {"time_ms", query.real(9)},
                    {"tuned_ms", query.real(10)},
                    {"ratio", query.real(11)},
                    {"created_at", query.text(12)}});
        rows.push_back(row);
    }
    return rows;
}

// A code row's fields, its bytes in base64.
nlohmann::json code_json(const KernelCode &code) {
    return {{"format", code.format},
            {"abi_version", code.abi_version},
            {"halide_target", code.halide_target},
            {"cpu_features", code.cpu_features},
            {"halide_version", code.halide_version},
            {"function", code.function},
            {"signature", code.signature},
            {"size", code.size},
            {"digest", code.digest},
            {"created_at", code.created_at},
            {"signed_by", code.signed_by},
            {"ed25519_signature", code.ed25519_signature},
            {"bytes_base64", base64(code.bytes)}};
}

// Every kernel row, key fields first, the schedule embedded as JSON.
nlohmann::json exported_kernels(SqliteConnection &connection) {
    nlohmann::json rows = nlohmann::json::array();
    SqliteQuery query(connection,
                      std::string("SELECT ") + kKeyColumns + ", " + kRecordColumns +
                          " FROM kernels ORDER BY target, op_name, shape, dtype, op_hash, "
                          "halide_version, tuner_version",
                      "exporting the kernels");
    while (query.step()) {
        KernelRecord r;
        r.key = read_key(query, 0);
        read_record(query, 7, r);
        nlohmann::json row = key_json(r.key);
        row.update({{"schedule", json_or_text(r.schedule_json)},
                    {"schedule_source", r.schedule_source},
                    {"time_ms", r.time_ms},
                    {"gflops", r.gflops},
                    {"default_time_ms", r.default_time_ms},
                    {"verified", r.verified},
                    {"trials", r.trials},
                    {"created_at", r.created_at},
                    {"code", exported_code(connection, r)}});
        rows.push_back(row);
    }
    return rows;
}

// The ops with their source text, and the targets with their description.
nlohmann::json exported_ops(SqliteConnection &connection) {
    nlohmann::json rows = nlohmann::json::array();
    SqliteQuery query(connection, "SELECT name, op_hash, source FROM ops ORDER BY name, op_hash",
                      "exporting the ops");
    while (query.step()) {
        rows.push_back(
            {{"name", query.text(0)}, {"op_hash", query.text(1)}, {"source", query.text(2)}});
    }
    return rows;
}

nlohmann::json exported_targets(SqliteConnection &connection) {
    nlohmann::json rows = nlohmann::json::array();
    SqliteQuery query(connection, "SELECT name, description, fingerprint FROM targets ORDER BY name",
                      "exporting the targets");
    while (query.step()) {
        rows.push_back({{"name", query.text(0)},
                        {"description", query.text(1)},
                        {"fingerprint", query.text(2)}});
    }
    return rows;
}

// Every tuning run, its options embedded as JSON.
nlohmann::json exported_runs(SqliteConnection &connection) {
    nlohmann::json rows = nlohmann::json::array();
    SqliteQuery query(connection,
                      std::string("SELECT ") + kKeyColumns +
                          ", id, started_at, finished_at, trials, status, error, options_json "
                          "FROM tuning_runs ORDER BY id",
                      "exporting the tuning runs");
    while (query.step()) {
        nlohmann::json row = key_json(read_key(query, 0));
        row.update({{"id", query.integer(7)},
                    {"started_at", query.text(8)},
                    {"finished_at", query.text(9)},
                    {"trials", query.integer(10)},
                    {"status", query.text(11)},
                    {"error", query.text(12)},
                    {"options", json_or_text(query.text(13))}});
        rows.push_back(row);
    }
    return rows;
}

nlohmann::json exported_variants(SqliteConnection &connection) {
    nlohmann::json rows = nlohmann::json::array();
    SqliteQuery query(connection,
                      std::string("SELECT ") + kKeyColumns +
                          ", level, load, time_ms, quiet_time_ms, trials, created_at, "
                          "schedule_json FROM kernel_variants ORDER BY target, op_name, shape, "
                          "dtype, op_hash, halide_version, tuner_version, level",
                      "exporting the variants");
    while (query.step()) {
        nlohmann::json row = key_json(read_key(query, 0));
        row.update({{"level", query.real(7)},
                    {"load", query.text(8)},
                    {"time_ms", query.real(9)},
                    {"quiet_time_ms", query.real(10)},
                    {"trials", query.integer(11)},
                    {"created_at", query.text(12)},
                    {"schedule", json_or_text(query.text(13))}});
        rows.push_back(row);
    }
    return rows;
}

// Every measurement, key by key, as the cache's measurements_for reads them (features as
// numbers, run_id null for none).
nlohmann::json exported_measurements(const std::string &path, SqliteConnection &connection) {
    nlohmann::json rows = nlohmann::json::array();
    auto cache = open_kernel_cache(path, OpenMode::ReadOnly);
    SqliteQuery keys(connection,
                     std::string("SELECT DISTINCT ") + kKeyColumns +
                         " FROM measurements ORDER BY target, op_name, shape",
                     "exporting the measurements");
    while (keys.step()) {
        for (const MeasurementRecord &m : cache->measurements_for(read_key(keys, 0))) {
            rows.push_back({{"op", m.key.op_name},
                            {"shape", m.key.shape},
                            {"target", m.key.target},
                            {"schedule", m.schedule_json},
                            {"features", m.features},
                            {"feature_rows", m.feature_rows},
                            {"time_ms", m.time_ms},
                            {"gflops", m.gflops},
                            {"status", m.status},
                            {"error", m.error},
                            {"run_id", m.run_id == 0 ? nlohmann::json(nullptr)
                                                     : nlohmann::json(m.run_id)}});
        }
    }
    return rows;
}

} // namespace

void export_kernel_cache(const std::string &path, bool with_measurements, std::ostream &out) {
    int version = open_kernel_cache(path, OpenMode::ReadOnly)->stats().schema_version;
    SqliteConnection connection(path, SQLITE_OPEN_READONLY, busy_timeout_from_environment(path));
    // One read transaction, so kernels and measurements come from one snapshot.
    connection.exec("BEGIN", "exporting");
    nlohmann::json doc;
    doc["schema_version"] = version;
    doc["kernels"] = exported_kernels(connection);
    doc["ops"] = exported_ops(connection);
    doc["targets"] = exported_targets(connection);
    doc["tuning_runs"] = exported_runs(connection);
    doc["variants"] = exported_variants(connection);
    doc["generic_code"] = exported_generic_code(connection);
    doc["generic_timings"] = exported_generic_timings(connection);
    if (with_measurements) {
        doc["measurements"] = exported_measurements(path, connection);
    }
    connection.exec("COMMIT", "exporting");
    out << doc.dump(2) << "\n";
}

std::vector<KernelCount> count_kernels(const std::string &path) {
    open_kernel_cache(path, OpenMode::ReadOnly);
    SqliteConnection connection(path, SQLITE_OPEN_READONLY, busy_timeout_from_environment(path));
    SqliteQuery query(connection, R"sql(
SELECT target, op_name, sum(k), sum(m), sum(r) FROM (
    SELECT target, op_name, count(*) AS k, 0 AS m, 0 AS r FROM kernels GROUP BY target, op_name
    UNION ALL
    SELECT target, op_name, 0, count(*), 0 FROM measurements GROUP BY target, op_name
    UNION ALL
    SELECT target, op_name, 0, 0, count(*) FROM tuning_runs GROUP BY target, op_name)
GROUP BY target, op_name ORDER BY target, op_name
)sql",
                      "counting the kernels of " + quoted(path));
    std::vector<KernelCount> counts;
    while (query.step()) {
        counts.push_back(
            {query.text(0), query.text(1), query.integer(2), query.integer(3), query.integer(4)});
    }
    return counts;
}

} // namespace opgen::db
