#include "store/KernelCache.h"

#include "store/CodeRowSigning.h"
#include "store/GenericCodeRows.h"

#include "base/DType.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/Rows.h"
#include "store/Schema.h"
#include "store/Sqlite.h"
#include "store/VariantStore.h"

namespace opgen::db {

std::string now_utc_iso8601() {
    std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char text[32];
    std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

namespace {

// The names of the dtype table (base/DType.h) in name order: the order rows of several dtypes come
// back in.
const std::vector<const char *> &stored_dtype_order() {
    static const std::vector<const char *> names = [] {
        std::vector<const char *> n;
        for (const DTypeInfo &d : dtype_table()) n.push_back(d.name);
        std::sort(n.begin(), n.end(), [](const char *a, const char *b) { return std::strcmp(a, b) < 0; });
        return n;
    }();
    return names;
}


// Long enough to outwait any one writer (a batch of measurements commits in milliseconds), short
// enough that a stuck process is reported rather than waited on forever.
constexpr int kDefaultBusyTimeoutMs = 10000;
constexpr const char *kBusyTimeoutVariable = "OPGEN_DB_BUSY_TIMEOUT_MS";


std::string quoted_database(const std::string &path) {
    return "database '" + path + "'";
}

std::string describe(const KernelKey &key) {
    return "op '" + key.op_name + "' shape '" + key.shape + "' dtype '" + key.dtype +
           "' on target '" + key.target + "'";
}

// strerror's text, lower-cased to read as the tail of our messages.
std::string errno_reason(int error) {
    std::string reason = std::strerror(error);
    if (!reason.empty()) {
        reason[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(reason[0])));
    }
    return reason;
}

// Features are stored as float32 little-endian whatever the host, so that a cache file can move
// between machines and be read by other tools.
std::vector<uint8_t> encode_features(const std::vector<float> &features) {
    static_assert(sizeof(float) == 4 && std::numeric_limits<float>::is_iec559);
    std::vector<uint8_t> bytes(features.size() * 4);
    for (size_t i = 0; i < features.size(); i++) {
        uint32_t bits;
        std::memcpy(&bits, &features[i], 4);
        for (int b = 0; b < 4; b++) {
            bytes[4 * i + b] = static_cast<uint8_t>(bits >> (8 * b));
        }
    }
    return bytes;
}

std::vector<float> decode_features(const std::vector<uint8_t> &bytes, const std::string &path,
                                   int64_t measurement_id) {
    if (bytes.size() % 4 != 0) {
        throw DbError(quoted_database(path) + " is corrupt: measurement " +
                      std::to_string(measurement_id) + " has a feature blob of " +
                      std::to_string(bytes.size()) + " bytes, not a multiple of 4");
    }
    std::vector<float> features(bytes.size() / 4);
    for (size_t i = 0; i < features.size(); i++) {
        uint32_t bits = 0;
        for (int b = 0; b < 4; b++) {
            bits |= static_cast<uint32_t>(bytes[4 * i + b]) << (8 * b);
        }
        std::memcpy(&features[i], &bits, 4);
    }
    return features;
}

} // namespace

int busy_timeout_from_environment(const std::string &path) {
    const char *text = std::getenv(kBusyTimeoutVariable);
    if (!text) {
        return kDefaultBusyTimeoutMs;
    }
    char *end = nullptr;
    errno = 0;
    long value = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || errno != 0 || value < 0 || value > INT_MAX) {
        throw DbError(quoted_database(path) + ": " + kBusyTimeoutVariable + " is '" + text +
                      "', not a number of milliseconds");
    }
    return static_cast<int>(value);
}

namespace {

std::string parent_directory(const std::string &path) {
    std::string parent = std::filesystem::path(path).parent_path().string();
    return parent.empty() ? "." : parent;
}

// ReadOnly never creates: the file must exist and be readable.
void check_readable(const std::string &path) {
    struct stat info;
    if (::stat(path.c_str(), &info) != 0) {
        if (errno == ENOENT) {
            throw DbError(quoted_database(path) + " does not exist");
        }
        throw DbError(quoted_database(path) + " cannot be opened: " + errno_reason(errno));
    }
    if (S_ISDIR(info.st_mode)) {
        throw DbError(quoted_database(path) + " is a directory");
    }
    if (::access(path.c_str(), R_OK) != 0) {
        throw DbError(quoted_database(path) + " is not readable: " + errno_reason(errno));
    }
}

// Checks that an existing `path` can be written.
void check_writable(const std::string &path, const struct stat &info) {
    if (S_ISDIR(info.st_mode)) {
        throw DbError(quoted_database(path) + " is a directory");
    }
    // root passes this check even for a 0444 file; SQLite then writes to it, as root may.
    if (::access(path.c_str(), R_OK | W_OK) != 0) {
        throw DbError(quoted_database(path) + " is read-only: " + errno_reason(errno));
    }
}

void remove_database_files(const std::string &path) {
    for (const char *suffix : {"", "-wal", "-shm", "-journal"}) {
        ::unlink((path + suffix).c_str());
    }
}

// Creates an empty file next to `path` under a name no other process uses; returns that name.
std::string create_temporary_file(const std::string &path) {
    static std::atomic<int> counter{0};
    for (;;) {
        std::string temporary =
            path + ".new-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
        int fd = ::open(temporary.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd >= 0) {
            ::close(fd);
            return temporary;
        }
        int error = errno;
        if (error == EEXIST) {
            continue; // left behind by a killed process that had our pid
        }
        std::string directory = parent_directory(path);
        if (error == ENOENT || error == ENOTDIR) {
            throw DbError("cannot create " + quoted_database(path) + ": directory '" + directory +
                          "' does not exist");
        }
        if (error == EACCES || error == EPERM || error == EROFS) {
            throw DbError("cannot create " + quoted_database(path) + ": directory '" + directory +
                          "' is not writable");
        }
        throw DbError("cannot create " + quoted_database(path) + ": " + errno_reason(error));
    }
}

// Switches the file to WAL, which lets readers (the lookup library, other tuners) go on while one
// process writes. The switch needs the file to itself, and SQLite answers SQLITE_BUSY at once
// rather than through the busy handler while another connection reads, so wait here as the
// busy timeout promises.
void use_wal_journal(SqliteConnection &connection) {
    auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(connection.busy_timeout_ms());
    std::string mode;
    for (;;) {
        try {
            SqliteQuery query(connection, "PRAGMA journal_mode = WAL",
                              "switching to the WAL journal mode");
            query.step();
            mode = query.text(0);
            break;
        } catch (const DbLockedError &) {
            if (std::chrono::steady_clock::now() >= deadline) {
                throw;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
    }
    if (mode != "wal") {
        throw DbError(quoted_database(connection.path()) +
                      " cannot use the WAL journal mode (it stays in '" + mode + "' mode)");
    }
    // In WAL mode NORMAL loses no committed data on a process crash, only on power loss, and
    // spares an fsync per transaction.
    connection.exec("PRAGMA synchronous = NORMAL", "setting synchronous mode");
}

// Makes the cache at `path` unless it exists. The file is built complete (schema, WAL mode)
// under a temporary name and then linked into place, so no process ever sees a cache without its
// schema, and a failure leaves nothing at `path`. When several processes race, the first link
// wins and the others open that file.
void create_cache_file(const std::string &path, int busy_timeout_ms) {
    std::string temporary = create_temporary_file(path);
    try {
        {
            SqliteConnection connection(temporary, SQLITE_OPEN_READWRITE, busy_timeout_ms);
            use_wal_journal(connection);
            upgrade_schema(connection);
        }
        if (::link(temporary.c_str(), path.c_str()) != 0 && errno != EEXIST) {
            throw DbError("cannot create " + quoted_database(path) + ": " + errno_reason(errno));
        }
    } catch (...) {
        remove_database_files(temporary);
        throw;
    }
    remove_database_files(temporary);
}

// Reads the MeasurementRecord fields other than the key, in the order of kMeasurementColumns.
constexpr const char *kMeasurementColumns = "id, schedule_json, features, feature_rows, time_ms, "
                                            "gflops, status, error, run_id";

void read_measurement(const SqliteQuery &query, int first_column, const std::string &path,
                      MeasurementRecord &record) {
    int64_t id = query.integer(first_column);
    record.schedule_json = query.text(first_column + 1);
    record.features = decode_features(query.blob(first_column + 2), path, id);
    record.feature_rows = static_cast<int32_t>(query.integer(first_column + 3));
    record.time_ms = query.real(first_column + 4);
    record.gflops = query.real(first_column + 5);
    record.status = query.text(first_column + 6);
    record.error = query.text(first_column + 7);
    record.run_id = query.integer(first_column + 8);
}

void insert_op_and_target(SqliteConnection &connection, const KernelKey &key,
                          const std::string &what) {
    SqliteQuery op(connection,
                   "INSERT INTO ops (name, op_hash) VALUES (?1, ?2) ON CONFLICT DO NOTHING", what);
    op.bind(1, key.op_name).bind(2, key.op_hash).run();
    SqliteQuery target(connection, "INSERT INTO targets (name) VALUES (?1) ON CONFLICT DO NOTHING",
                       what);
    target.bind(1, key.target).run();
}

// The op's source and the target's description where the cache has none yet: a run of an older
// opgen, or a merge, may have left them empty.
void describe_op_and_target(SqliteConnection &connection, const TuningRun &run,
                            const std::string &what) {
    SqliteQuery op(connection,
                   "INSERT INTO ops (name, op_hash, source) VALUES (?1, ?2, ?3) "
                   "ON CONFLICT (name, op_hash) DO UPDATE SET source = excluded.source "
                   "WHERE ops.source = ''",
                   what);
    op.bind(1, run.key.op_name).bind(2, run.key.op_hash).bind(3, run.op_source).run();
    SqliteQuery target(connection,
                       "INSERT INTO targets (name, description, fingerprint) VALUES (?1, ?2, ?3) "
                       "ON CONFLICT (name) DO UPDATE SET description = excluded.description, "
                       "fingerprint = excluded.fingerprint WHERE targets.fingerprint = ''",
                       what);
    target.bind(1, run.key.target)
        .bind(2, run.target_description)
        .bind(3, run.target_fingerprint)
        .run();
}

// The SQLite kernel cache. One connection, guarded by a mutex so that tuner threads may share a
// cache; other processes use their own connections and SQLite's file locks.
class SqliteKernelCache final : public KernelCache {
public:
    SqliteKernelCache(std::unique_ptr<SqliteConnection> connection, OpenMode mode)
        : connection_(std::move(connection)), mode_(mode) {}

    bool put_kernel(const KernelRecord &record) override {
        std::lock_guard<std::mutex> lock(mutex_);
        const std::string what = "storing the kernel for " + describe(record.key);
        require_writable(what);
        if (std::isnan(record.time_ms)) {
            throw DbError(quoted_database(path()) + ": " + what + ": time_ms is nan");
        }
        std::string created_at = record.created_at.empty() ? now_utc_iso8601() : record.created_at;

        SqliteTransaction transaction(*connection_, what);
        // The upsert's WHERE keeps the old winner unless the new one is strictly faster, so
        // concurrent tuners of one key agree on the fastest whatever order they commit in.
        SqliteQuery upsert(*connection_, R"sql(
INSERT INTO kernels (op_name, op_hash, shape, dtype, target, halide_version, tuner_version,
                     schedule_json, schedule_source, time_ms, gflops, default_time_ms, verified,
                     trials, created_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
ON CONFLICT (target, op_name, op_hash, shape, dtype, halide_version, tuner_version) DO UPDATE SET
    schedule_json = excluded.schedule_json,
    schedule_source = excluded.schedule_source,
    time_ms = excluded.time_ms,
    gflops = excluded.gflops,
    default_time_ms = excluded.default_time_ms,
    verified = excluded.verified,
    trials = excluded.trials,
    created_at = excluded.created_at
WHERE excluded.time_ms < kernels.time_ms
)sql",
                           what);
        bind_key(upsert, record.key);
        upsert.bind(8, record.schedule_json)
            .bind(9, record.schedule_source)
            .bind(10, record.time_ms)
            .bind(11, record.gflops)
            .bind(12, record.default_time_ms)
            .bind(13, static_cast<int64_t>(record.verified ? 1 : 0))
            .bind(14, record.trials)
            .bind(15, created_at);
        upsert.run();
        bool stored = connection_->changes() > 0;
        if (stored) {
            insert_op_and_target(*connection_, record.key, what);
        }
        transaction.commit();
        return stored;
    }

    std::optional<KernelRecord> lookup(const KernelKey &key) override {
        std::lock_guard<std::mutex> lock(mutex_);
        SqliteQuery query(*connection_,
                          std::string("SELECT ") + kRecordColumns + " FROM kernels WHERE " +
                              kKeyMatches,
                          "looking up the kernel for " + describe(key));
        bind_key(query, key);
        if (!query.step()) {
            return std::nullopt;
        }
        KernelRecord record;
        record.key = key;
        read_record(query, 0, record);
        return record;
    }

    bool put_code(const KernelKey &key, const KernelCode &code) override {
        std::lock_guard<std::mutex> lock(mutex_);
        const std::string what = "storing the code of the kernel for " + describe(key);
        require_writable(what);
        if (!code_matches_itself(code)) {
            throw DbError(quoted_database(path()) + ": " + what +
                          ": the code does not match its own size or digest");
        }
        std::string created_at = code.created_at.empty() ? now_utc_iso8601() : code.created_at;
        KernelCode to_store = code;
        if (signing_key_) {
            sign_code(key, to_store, *signing_key_);
        }
        SqliteTransaction transaction(*connection_, what);
        // Stored only beside the kernel it was compiled for: a faster winner that replaced it in
        // the meantime has another schedule, and the SELECT then gives no row.
        SqliteQuery insert(*connection_, std::string(R"sql(
INSERT INTO kernel_code (op_name, op_hash, shape, dtype, target, halide_version, tuner_version,
                         schedule_json, format, abi_version, halide_target, cpu_features,
                         code_halide_version, function, signature, size, digest, created_at,
                         signed_by, ed25519_signature, bytes)
SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21
FROM kernels WHERE )sql") + kKeyMatches + R"sql( AND schedule_json = ?8
ON CONFLICT (target, op_name, op_hash, shape, dtype, halide_version, tuner_version) DO UPDATE SET
    schedule_json = excluded.schedule_json, format = excluded.format,
    abi_version = excluded.abi_version, halide_target = excluded.halide_target,
    cpu_features = excluded.cpu_features, code_halide_version = excluded.code_halide_version,
    function = excluded.function, signature = excluded.signature, size = excluded.size,
    digest = excluded.digest, created_at = excluded.created_at, signed_by = excluded.signed_by,
    ed25519_signature = excluded.ed25519_signature, bytes = excluded.bytes
)sql",
                           what);
        bind_key(insert, key);
        bind_code(insert, 8, to_store, created_at);
        insert.run();
        bool stored = connection_->changes() > 0;
        transaction.commit();
        return stored;
    }

    std::optional<KernelCode> code_for(const KernelKey &key) override {
        std::lock_guard<std::mutex> lock(mutex_);
        SqliteQuery query(*connection_,
                          "SELECT " + code_columns("c") +
                              " FROM kernel_code AS c JOIN kernels AS k ON " +
                              code_of_kernel("c", "k") +
                              " WHERE c.op_name = ?1 AND c.op_hash = ?2 AND c.shape = ?3 AND "
                              "c.dtype = ?4 AND c.target = ?5 AND c.halide_version = ?6 AND "
                              "c.tuner_version = ?7",
                          "reading the code of the kernel for " + describe(key));
        bind_key(query, key);
        if (!query.step()) {
            return std::nullopt;
        }
        return read_code(query, 0);
    }

    void put_generic_code(const GenericCodeRecord &record) override {
        std::lock_guard<std::mutex> lock(mutex_);
        const std::string what = "storing the generic code of " + describe(record.key);
        require_writable(what);
        GenericCodeRecord stamped = record;
        if (stamped.code.created_at.empty()) {
            stamped.code.created_at = now_utc_iso8601();
        }
        if (signing_key_) {
            sign_code(stamped.key, stamped.code, *signing_key_);
        }
        SqliteTransaction transaction(*connection_, what);
        write_generic_code(*connection_, stamped, what);
        transaction.commit();
    }

    std::vector<GenericCodeRecord> generic_code_for(const std::string &op_name,
                                                    const std::string &target) override {
        std::lock_guard<std::mutex> lock(mutex_);
        std::vector<GenericCodeRecord> rows;
        for (const char *dtype : stored_dtype_order()) {
            for (GenericCodeRecord &row : read_generic_code(*connection_, target, op_name, dtype)) {
                rows.push_back(std::move(row));
            }
        }
        return rows;
    }

    void put_generic_timings(const std::vector<GenericTimingRecord> &records) override {
        std::lock_guard<std::mutex> lock(mutex_);
        const std::string what = "storing " + std::to_string(records.size()) + " generic kernel timing(s)";
        require_writable(what);
        const std::string now = now_utc_iso8601();
        SqliteTransaction transaction(*connection_, what);
        for (const GenericTimingRecord &record : records) {
            GenericTimingRecord stamped = record;
            if (stamped.created_at.empty()) {
                stamped.created_at = now;
            }
            write_generic_timing(*connection_, stamped,
                                 "storing the timing at " + record.at_shape + " of the generic code of " +
                                     describe(record.key));
        }
        transaction.commit();
    }

    std::vector<GenericTimingRecord> generic_timings_for(const std::string &op_name,
                                                         const std::string &target) override {
        std::lock_guard<std::mutex> lock(mutex_);
        std::vector<GenericTimingRecord> rows;
        for (const char *dtype : stored_dtype_order()) {
            for (GenericTimingRecord &row : read_generic_timings(*connection_, target, op_name, dtype)) {
                rows.push_back(std::move(row));
            }
        }
        return rows;
    }

    std::vector<KernelRecord> kernels_without_code() override {
        std::lock_guard<std::mutex> lock(mutex_);
        SqliteQuery query(*connection_,
                          std::string("SELECT ") + kKeyColumns + ", " + kRecordColumns +
                              " FROM kernels AS k WHERE NOT EXISTS (SELECT 1 FROM kernel_code AS "
                              "c WHERE " + code_of_kernel("c", "k") +
                              ") ORDER BY target, op_name, shape, dtype, op_hash, halide_version, "
                              "tuner_version",
                          "listing the kernels without code");
        return read_kernels(query);
    }

    void set_signing_key(std::optional<SigningKey> key) override {
        std::lock_guard<std::mutex> lock(mutex_);
        signing_key_ = std::move(key);
    }

    void visit_code_rows(
        const std::function<void(const KernelKey &, const KernelCode &)> &visit) override {
        std::lock_guard<std::mutex> lock(mutex_);
        visit_stored_code(*connection_, visit);
    }

    CodeSigningReport sign_code_rows(const SigningKey &key, bool only_unsigned) override {
        std::lock_guard<std::mutex> lock(mutex_);
        const std::string what = "signing the code rows";
        require_writable(what);
        SqliteTransaction transaction(*connection_, what);
        CodeSigningReport report = sign_stored_code(*connection_, key, only_unsigned);
        transaction.commit();
        return report;
    }

    std::optional<std::string> op_source(const std::string &op_name,
                                         const std::string &op_hash) override {
        std::lock_guard<std::mutex> lock(mutex_);
        SqliteQuery query(*connection_, "SELECT source FROM ops WHERE name = ?1 AND op_hash = ?2",
                          "reading the definition of op '" + op_name + "'");
        query.bind(1, op_name).bind(2, op_hash);
        if (!query.step()) {
            return std::nullopt;
        }
        return query.text(0);
    }

    std::vector<KernelRecord> kernels_of_op(const std::string &op_name) override {
        std::lock_guard<std::mutex> lock(mutex_);
        SqliteQuery query(*connection_,
                          std::string("SELECT ") + kKeyColumns + ", " + kRecordColumns +
                              " FROM kernels WHERE op_name = ?1 ORDER BY target, shape, dtype, "
                              "op_hash, halide_version, tuner_version",
                          "listing the kernels of op '" + op_name + "'");
        query.bind(1, op_name);
        return read_kernels(query);
    }

    std::vector<KernelRecord> kernels_at(const std::string &target, const std::string &shape) override {
        std::lock_guard<std::mutex> lock(mutex_);
        SqliteQuery query(*connection_,
                          std::string("SELECT ") + kKeyColumns + ", " + kRecordColumns +
                              " FROM kernels WHERE target = ?1 AND shape = ?2 ORDER BY op_name, dtype, "
                              "op_hash, halide_version, tuner_version",
                          "listing the kernels at shape '" + shape + "' on target '" + target + "'");
        query.bind(1, target).bind(2, shape);
        return read_kernels(query);
    }

    std::vector<KernelRecord> kernels_for(const std::string &op_name,
                                          const std::string &target) override {
        std::lock_guard<std::mutex> lock(mutex_);
        SqliteQuery query(*connection_,
                          std::string("SELECT op_name, op_hash, shape, dtype, target, "
                                      "halide_version, tuner_version, ") +
                              kRecordColumns +
                              " FROM kernels WHERE target = ?1 AND op_name = ?2 "
                              "ORDER BY shape, dtype, op_hash, halide_version, tuner_version",
                          "listing the kernels of op '" + op_name + "' on target '" + target + "'");
        query.bind(1, target).bind(2, op_name);
        return read_kernels(query);
    }

    int64_t begin_run(const TuningRun &run) override {
        std::lock_guard<std::mutex> lock(mutex_);
        const std::string what = "recording the start of a tuning run of " + describe(run.key);
        require_writable(what);
        SqliteTransaction transaction(*connection_, what);
        describe_op_and_target(*connection_, run, what);
        SqliteQuery insert(*connection_, R"sql(
INSERT INTO tuning_runs (op_name, op_hash, shape, dtype, target, halide_version, tuner_version,
                         started_at, status, options_json)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'running', ?9)
)sql",
                           what);
        bind_key(insert, run.key);
        insert.bind(8, run.started_at.empty() ? now_utc_iso8601() : run.started_at)
            .bind(9, run.options_json.empty() ? std::string("{}") : run.options_json)
            .run();
        int64_t id = connection_->last_insert_rowid();
        transaction.commit();
        return id;
    }

    void end_run(int64_t id, const std::string &status, int64_t trials,
                 const std::string &error) override {
        std::lock_guard<std::mutex> lock(mutex_);
        const std::string what = "recording the end of tuning run " + std::to_string(id);
        require_writable(what);
        SqliteQuery update(*connection_,
                           "UPDATE tuning_runs SET finished_at = ?2, status = ?3, trials = ?4, "
                           "error = ?5 WHERE id = ?1",
                           what);
        update.bind(1, id).bind(2, now_utc_iso8601()).bind(3, status).bind(4, trials).bind(5, error);
        update.run();
        if (connection_->changes() == 0) {
            throw DbError(quoted_database(path()) + ": " + what + ": there is no run " +
                          std::to_string(id));
        }
    }

    std::vector<TuningRun> runs_for(const KernelKey &key) override {
        std::lock_guard<std::mutex> lock(mutex_);
        SqliteQuery query(*connection_,
                          std::string("SELECT id, started_at, finished_at, trials, status, error, "
                                      "options_json FROM tuning_runs WHERE ") +
                              kKeyMatches + " ORDER BY id",
                          "reading the tuning runs of " + describe(key));
        bind_key(query, key);
        std::vector<TuningRun> runs;
        while (query.step()) {
            TuningRun run;
            run.key = key;
            run.id = query.integer(0);
            run.started_at = query.text(1);
            run.finished_at = query.text(2);
            run.trials = query.integer(3);
            run.status = query.text(4);
            run.error = query.text(5);
            run.options_json = query.text(6);
            runs.push_back(std::move(run));
        }
        return runs;
    }

    void record_measurements(const std::vector<MeasurementRecord> &records) override {
        std::lock_guard<std::mutex> lock(mutex_);
        if (records.empty()) {
            return;
        }
        const std::string what = "recording " + std::to_string(records.size()) +
                                 " measurement(s) of " + describe(records.front().key);
        require_writable(what);
        std::string created_at = now_utc_iso8601();

        SqliteTransaction transaction(*connection_, what);
        for (const MeasurementRecord &record : records) {
            insert_op_and_target(*connection_, record.key, what);
            SqliteQuery insert(*connection_, R"sql(
INSERT INTO measurements (op_name, op_hash, shape, dtype, target, halide_version, tuner_version,
                          schedule_json, features, feature_rows, time_ms, gflops, status, error,
                          created_at, run_id)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)
)sql",
                               what);
            bind_key(insert, record.key);
            insert.bind(8, record.schedule_json)
                .bind_blob(9, encode_features(record.features))
                .bind(10, static_cast<int64_t>(record.feature_rows))
                .bind(11, record.time_ms)
                .bind(12, record.gflops)
                .bind(13, record.status)
                .bind(14, record.error)
                .bind(15, created_at);
            if (record.run_id != 0) {
                insert.bind(16, record.run_id);
            }
            insert.run();
        }
        transaction.commit();
    }

    std::vector<MeasurementRecord> measurements_for(const KernelKey &key) override {
        std::lock_guard<std::mutex> lock(mutex_);
        SqliteQuery query(*connection_,
                          std::string("SELECT ") + kMeasurementColumns +
                              " FROM measurements WHERE " + kKeyMatches + " ORDER BY id",
                          "reading the measurements of " + describe(key));
        bind_key(query, key);
        std::vector<MeasurementRecord> records;
        while (query.step()) {
            MeasurementRecord record;
            record.key = key;
            read_measurement(query, 0, path(), record);
            records.push_back(std::move(record));
        }
        return records;
    }

    std::vector<MeasurementRecord> measurements_on(const std::string &target) override {
        std::lock_guard<std::mutex> lock(mutex_);
        SqliteQuery query(*connection_,
                          std::string("SELECT op_name, op_hash, shape, dtype, target, "
                                      "halide_version, tuner_version, ") +
                              kMeasurementColumns +
                              " FROM measurements WHERE (target = ?1 OR substr(target, 1, "
                              "length(?1) + 5) = ?1 || ':load') AND status = 'ok' ORDER BY id",
                          "reading the measurements on target '" + target + "'");
        query.bind(1, target);
        std::vector<MeasurementRecord> records;
        while (query.step()) {
            MeasurementRecord record;
            record.key = read_key(query, 0);
            read_measurement(query, 7, path(), record);
            records.push_back(std::move(record));
        }
        return records;
    }

    void put_model(const ModelRecord &record) override {
        std::lock_guard<std::mutex> lock(mutex_);
        const std::string what = "storing model '" + record.name + "' of target '" + record.target + "'";
        require_writable(what);
        SqliteQuery insert(*connection_,
                           "INSERT INTO models (target, name, created_at, train_rows, quality_json, bytes) "
                           "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                           what);
        insert.bind(1, record.target)
            .bind(2, record.name)
            .bind(3, record.created_at.empty() ? now_utc_iso8601() : record.created_at)
            .bind(4, record.train_rows)
            .bind(5, record.quality_json)
            .bind_blob(6, record.bytes);
        insert.run();
    }

    std::optional<ModelRecord> latest_model(const std::string &target, const std::string &name) override {
        std::lock_guard<std::mutex> lock(mutex_);
        SqliteQuery query(*connection_,
                          "SELECT created_at, train_rows, quality_json, bytes FROM models "
                          "WHERE target = ?1 AND name = ?2 ORDER BY id DESC LIMIT 1",
                          "reading model '" + name + "' of target '" + target + "'");
        query.bind(1, target).bind(2, name);
        if (!query.step()) {
            return std::nullopt;
        }
        ModelRecord record;
        record.target = target;
        record.name = name;
        record.created_at = query.text(0);
        record.train_rows = query.integer(1);
        record.quality_json = query.text(2);
        record.bytes = query.blob(3);
        return record;
    }

    void put_variant(const VariantRecord &record) override {
        std::lock_guard<std::mutex> lock(mutex_);
        check_variant_time(path(), record);
        const std::string what = "storing a schedule variant";
        require_writable(what);
        SqliteTransaction transaction(*connection_, what);
        SqliteQuery insert(*connection_,
                           "INSERT OR REPLACE INTO kernel_variants (op_name, op_hash, shape, dtype, target, "
                           "halide_version, tuner_version, level, load, schedule_json, schedule_source, "
                           "time_ms, quiet_time_ms, trials, created_at) "
                           "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
                           what);
        bind_key(insert, record.key);
        insert.bind(8, record.level)
            .bind(9, record.load)
            .bind(10, record.schedule_json)
            .bind(11, record.schedule_source)
            .bind(12, record.time_ms)
            .bind(13, record.quiet_time_ms > 0 ? record.quiet_time_ms : NAN)
            .bind(14, record.trials)
            .bind(15, record.created_at.empty() ? now_utc_iso8601() : record.created_at);
        insert.run();
        transaction.commit();
    }

    std::vector<VariantRecord> variants_for(const KernelKey &key) override {
        std::lock_guard<std::mutex> lock(mutex_);
        SqliteQuery query(*connection_,
                          std::string("SELECT level, load, schedule_json, schedule_source, time_ms, "
                                      "quiet_time_ms, trials, created_at FROM kernel_variants WHERE ") +
                              kKeyMatches + " ORDER BY level",
                          "reading schedule variants");
        bind_key(query, key);
        std::vector<VariantRecord> out;
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

    CacheStats stats() override {
        std::lock_guard<std::mutex> lock(mutex_);
        CacheStats stats;
        {
            // One statement, so the counts come from one snapshot even while others write.
            SqliteQuery query(*connection_,
                              "SELECT (SELECT count(*) FROM kernels), "
                              "(SELECT count(*) FROM measurements), (SELECT count(*) FROM ops), "
                              "(SELECT count(*) FROM targets), (SELECT count(*) FROM tuning_runs), "
                              "(SELECT count(*) FROM kernel_variants), "
                              "(SELECT count(*) FROM kernel_code AS c JOIN kernels AS k ON " +
                                  code_of_kernel("c", "k") + "), (SELECT count(*) FROM generic_code), "
                                  "(SELECT count(*) FROM generic_timings)",
                              "counting the rows");
            query.step();
            stats.kernels = query.integer(0);
            stats.measurements = query.integer(1);
            stats.ops = query.integer(2);
            stats.targets = query.integer(3);
            stats.tuning_runs = query.integer(4);
            stats.variants = query.integer(5);
            stats.kernels_with_code = query.integer(6);
            stats.generic_code = query.integer(7);
            stats.generic_timings = query.integer(8);
        }
        SqliteQuery version(*connection_, "PRAGMA user_version", "reading the schema version");
        version.step();
        stats.schema_version = static_cast<int>(version.integer(0));
        return stats;
    }

    std::string path() const override { return connection_->path(); }

private:
    // Refuse before touching the file, with a message that says why, rather than leaving it to
    // SQLite's "attempt to write a readonly database".
    void require_writable(const std::string &what) const {
        if (mode_ == OpenMode::ReadOnly) {
            throw DbError(quoted_database(path()) + " is opened read-only: " + what +
                          " is not allowed");
        }
    }

    std::mutex mutex_;
    std::optional<SigningKey> signing_key_;
    std::unique_ptr<SqliteConnection> connection_;
    OpenMode mode_;
};

std::unique_ptr<KernelCache> open_read_write(const std::string &path, int busy_timeout_ms) {
    struct stat info;
    if (::stat(path.c_str(), &info) != 0) {
        if (errno != ENOENT) {
            throw DbError(quoted_database(path) + " cannot be opened: " + errno_reason(errno));
        }
        create_cache_file(path, busy_timeout_ms);
    } else {
        check_writable(path, info);
    }
    auto connection =
        std::make_unique<SqliteConnection>(path, SQLITE_OPEN_READWRITE, busy_timeout_ms);
    // SQLite falls back to read-only when it cannot write the file; we were asked to write.
    if (connection->is_read_only()) {
        throw DbError(quoted_database(path) +
                      " is read-only: the file cannot be opened for writing");
    }
    // Check before the first write, so that a foreign or newer file is left byte for byte as it
    // was: switching the journal mode already writes the header.
    int version = check_schema(*connection);
    use_wal_journal(*connection);
    if (version < kernel_cache_schema_version()) {
        upgrade_schema(*connection);
    }
    // A measurement's run must exist: SQLite checks REFERENCES only when asked, per connection.
    connection->exec("PRAGMA foreign_keys = ON", "enabling foreign keys");
    return std::make_unique<SqliteKernelCache>(std::move(connection), OpenMode::ReadWrite);
}

std::unique_ptr<KernelCache> open_read_only(const std::string &path, int busy_timeout_ms) {
    auto connection =
        std::make_unique<SqliteConnection>(path, SQLITE_OPEN_READONLY, busy_timeout_ms);
    int version = check_schema(*connection);
    if (version < kernel_cache_schema_version()) {
        throw DbError(quoted_database(path) + " has schema version " + std::to_string(version) +
                      ", older than version " + std::to_string(kernel_cache_schema_version()) +
                      "; open it read-write once to create or upgrade the schema");
    }
    return std::make_unique<SqliteKernelCache>(std::move(connection), OpenMode::ReadOnly);
}

} // namespace

std::unique_ptr<KernelCache> open_kernel_cache(const std::string &path, OpenMode mode) {
    if (path.empty()) {
        throw DbError("database path is empty");
    }
    int busy_timeout_ms = busy_timeout_from_environment(path);
    if (mode == OpenMode::ReadOnly) {
        check_readable(path);
        return open_read_only(path, busy_timeout_ms);
    }
    return open_read_write(path, busy_timeout_ms);
}

} // namespace opgen::db
