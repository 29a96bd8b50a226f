#include "store/Schema.h"

#include <iterator>
#include <string>
#include <vector>

#include "store/KernelCache.h"
#include "store/Sqlite.h"

namespace opgen::db {

namespace {

// kSchemaSteps[v] upgrades a file from version v to v + 1. Append a step for each new version;
// never edit one that has shipped, since files written by it exist.
const char *const kSchemaSteps[] = {
    // Version 1. Every table that holds a key leads with `target` so that the key indexes also
    // serve the per-target queries: no lookup ever crosses targets.
    R"sql(
CREATE TABLE ops (
    name TEXT NOT NULL,
    op_hash TEXT NOT NULL,
    UNIQUE (name, op_hash)
);

CREATE TABLE targets (
    name TEXT NOT NULL UNIQUE
);

CREATE TABLE kernels (
    op_name TEXT NOT NULL,
    op_hash TEXT NOT NULL,
    shape TEXT NOT NULL,
    dtype TEXT NOT NULL,
    target TEXT NOT NULL,
    halide_version TEXT NOT NULL,
    tuner_version TEXT NOT NULL,
    schedule_json TEXT NOT NULL,
    schedule_source TEXT NOT NULL,
    time_ms REAL NOT NULL,
    gflops REAL,
    default_time_ms REAL,
    verified INTEGER NOT NULL,
    trials INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (target, op_name, op_hash, shape, dtype, halide_version, tuner_version)
);

-- Times and throughputs are NULL where a failed candidate has none (NaN in the API).
CREATE TABLE measurements (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    op_name TEXT NOT NULL,
    op_hash TEXT NOT NULL,
    shape TEXT NOT NULL,
    dtype TEXT NOT NULL,
    target TEXT NOT NULL,
    halide_version TEXT NOT NULL,
    tuner_version TEXT NOT NULL,
    schedule_json TEXT NOT NULL,
    features BLOB NOT NULL,
    feature_rows INTEGER NOT NULL,
    time_ms REAL,
    gflops REAL,
    status TEXT NOT NULL,
    error TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE INDEX measurements_by_key ON measurements
    (target, op_name, op_hash, shape, dtype, halide_version, tuner_version);

-- Trained cost models, for later use; `bytes` is the serialized model.
CREATE TABLE models (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    target TEXT NOT NULL,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    train_rows INTEGER NOT NULL,
    quality_json TEXT NOT NULL,
    bytes BLOB NOT NULL
);

CREATE INDEX models_by_target ON models (target, name);
)sql",
    // Version 2. The lookup library asks by (target, op, dtype, shape) without the op hash or the
    // versions, and walks one op's shapes on one target for the nearest tuned one; the primary key
    // (target, op_name, op_hash, shape, ...) serves neither once several hashes exist. The op's
    // definition text is kept so that a cache file explains its own keys.
    R"sql(
CREATE INDEX kernels_by_shape ON kernels (target, op_name, dtype, shape, time_ms);
ALTER TABLE ops ADD COLUMN source TEXT NOT NULL DEFAULT '';
)sql",
    // Version 3. A tuning run is a row of its own (when, how long, with which options, how it
    // ended) and every measurement names the run that took it, so that a cache file says how its
    // data were made. Measurements from before are given one run per key, spanning them. Targets
    // describe their hardware. The schedule variants (VariantStore.h), until now a table made on
    // first use outside the versions, join the schema: IF NOT EXISTS, since version-2 files that
    // hold variants already have it, in the same form. The lookup's index gains the columns that
    // break ties between equally fast rows, so that an exact lookup reads its answer straight off
    // the index instead of sorting the rows of its shape.
    R"sql(
DROP INDEX kernels_by_shape;
CREATE INDEX kernels_by_shape ON kernels
    (target, op_name, dtype, shape, time_ms, op_hash, halide_version, tuner_version);

CREATE TABLE tuning_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    op_name TEXT NOT NULL,
    op_hash TEXT NOT NULL,
    shape TEXT NOT NULL,
    dtype TEXT NOT NULL,
    target TEXT NOT NULL,
    halide_version TEXT NOT NULL,
    tuner_version TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT NOT NULL DEFAULT '',
    trials INTEGER NOT NULL DEFAULT 0,
    status TEXT NOT NULL,
    error TEXT NOT NULL DEFAULT '',
    options_json TEXT NOT NULL DEFAULT '{}'
);

CREATE INDEX tuning_runs_by_key ON tuning_runs
    (target, op_name, op_hash, shape, dtype, halide_version, tuner_version);

ALTER TABLE measurements ADD COLUMN run_id INTEGER REFERENCES tuning_runs (id);
CREATE INDEX measurements_by_run ON measurements (run_id);

INSERT INTO tuning_runs (op_name, op_hash, shape, dtype, target, halide_version, tuner_version,
                         started_at, finished_at, trials, status)
    SELECT op_name, op_hash, shape, dtype, target, halide_version, tuner_version, min(created_at),
           max(created_at), count(*), 'migrated'
    FROM measurements
    GROUP BY target, op_name, op_hash, shape, dtype, halide_version, tuner_version
    ORDER BY min(id);
UPDATE measurements SET run_id = (
    SELECT r.id FROM tuning_runs AS r
    WHERE r.target = measurements.target AND r.op_name = measurements.op_name
      AND r.op_hash = measurements.op_hash AND r.shape = measurements.shape
      AND r.dtype = measurements.dtype AND r.halide_version = measurements.halide_version
      AND r.tuner_version = measurements.tuner_version);

ALTER TABLE targets ADD COLUMN description TEXT NOT NULL DEFAULT '';
ALTER TABLE targets ADD COLUMN fingerprint TEXT NOT NULL DEFAULT '';

CREATE TABLE IF NOT EXISTS kernel_variants (
    op_name TEXT NOT NULL,
    op_hash TEXT NOT NULL,
    shape TEXT NOT NULL,
    dtype TEXT NOT NULL,
    target TEXT NOT NULL,
    halide_version TEXT NOT NULL,
    tuner_version TEXT NOT NULL,
    level REAL NOT NULL,
    load TEXT NOT NULL,
    schedule_json TEXT NOT NULL,
    schedule_source TEXT NOT NULL,
    time_ms REAL NOT NULL,
    quiet_time_ms REAL,
    trials INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (target, op_name, op_hash, shape, dtype, halide_version, tuner_version, level)
);
)sql",
    // Version 4. A winner's compiled code (KernelCode.h) sits beside it, so a runtime can call the
    // kernel without a compiler. A table of its own rather than columns of `kernels`: a blob of
    // tens of kilobytes in the kernel row would push the row's schedule text onto overflow pages
    // that every lookup then reads. The code names the schedule it was compiled from; code whose
    // schedule is no longer the winner's (a faster one replaced it) is stale and never served.
    R"sql(
CREATE TABLE kernel_code (
    op_name TEXT NOT NULL,
    op_hash TEXT NOT NULL,
    shape TEXT NOT NULL,
    dtype TEXT NOT NULL,
    target TEXT NOT NULL,
    halide_version TEXT NOT NULL,
    tuner_version TEXT NOT NULL,
    schedule_json TEXT NOT NULL,
    format TEXT NOT NULL,
    abi_version INTEGER NOT NULL,
    halide_target TEXT NOT NULL,
    cpu_features TEXT NOT NULL,
    code_halide_version TEXT NOT NULL,
    function TEXT NOT NULL,
    signature TEXT NOT NULL,
    size INTEGER NOT NULL,
    digest TEXT NOT NULL,
    created_at TEXT NOT NULL,
    bytes BLOB NOT NULL,
    PRIMARY KEY (target, op_name, op_hash, shape, dtype, halide_version, tuner_version)
);
)sql",
    // Version 5. Shape-generic kernels (GenericSignature.h): code compiled with symbolic sizes from
    // the schedule of one tuned shape (`shape`), which serves every shape of its op with the same
    // fixed values. A table of its own: it belongs to no kernel row (the code stays valid, and was
    // checked, whatever later replaces that shape's winner), and many may exist per tuned shape's
    // op. `checked_shapes` lists the shapes it was verified at against the reference when built.
    R"sql(
CREATE TABLE generic_code (
    op_name TEXT NOT NULL,
    op_hash TEXT NOT NULL,
    shape TEXT NOT NULL,
    dtype TEXT NOT NULL,
    target TEXT NOT NULL,
    halide_version TEXT NOT NULL,
    tuner_version TEXT NOT NULL,
    schedule_json TEXT NOT NULL,
    format TEXT NOT NULL,
    abi_version INTEGER NOT NULL,
    halide_target TEXT NOT NULL,
    cpu_features TEXT NOT NULL,
    code_halide_version TEXT NOT NULL,
    function TEXT NOT NULL,
    signature TEXT NOT NULL,
    size INTEGER NOT NULL,
    digest TEXT NOT NULL,
    created_at TEXT NOT NULL,
    bytes BLOB NOT NULL,
    symbols TEXT NOT NULL,
    fixed TEXT NOT NULL,
    defaults TEXT NOT NULL,
    checked_shapes TEXT NOT NULL,
    PRIMARY KEY (target, op_name, dtype, op_hash, halide_version, tuner_version, shape)
);
)sql",
    // Version 6. Generic kernels timed where the truth is known: each generic kernel (the code of
    // `digest`, compiled from `shape`'s schedule) run at another tuned shape of its op
    // (`at_shape`) in turns with that shape's tuned kernel, `ratio` the median of the per-turn
    // time ratios. The lookup ranks the generic kernels serving a never-tuned shape by these
    // ratios at the tuned shapes nearest to it: measured evidence, read in microseconds, where
    // the cost model scores a generic kernel far outside what it was trained on.
    R"sql(
CREATE TABLE generic_timings (
    op_name TEXT NOT NULL,
    op_hash TEXT NOT NULL,
    shape TEXT NOT NULL,
    dtype TEXT NOT NULL,
    target TEXT NOT NULL,
    halide_version TEXT NOT NULL,
    tuner_version TEXT NOT NULL,
    digest TEXT NOT NULL,
    at_shape TEXT NOT NULL,
    time_ms REAL NOT NULL,
    tuned_ms REAL NOT NULL,
    ratio REAL NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (target, op_name, dtype, op_hash, halide_version, tuner_version, shape, at_shape)
);
)sql",
    // Version 7. Signed code (store/CodeSignature.h, docs/design.md §2.9): a code row's digest
    // guards against corruption only, since it sits beside the bytes; the signer's public key and
    // an Ed25519 signature over the row's key and digest say who vouches for the code. Empty in
    // rows stored unsigned, which a trusting application refuses.
    R"sql(
ALTER TABLE kernel_code ADD COLUMN signed_by TEXT NOT NULL DEFAULT '';
ALTER TABLE kernel_code ADD COLUMN ed25519_signature TEXT NOT NULL DEFAULT '';
ALTER TABLE generic_code ADD COLUMN signed_by TEXT NOT NULL DEFAULT '';
ALTER TABLE generic_code ADD COLUMN ed25519_signature TEXT NOT NULL DEFAULT '';
)sql",
};

constexpr int kCurrentVersion = static_cast<int>(std::size(kSchemaSteps));

// The tables the current version must have; a file missing one was not written by us.
const char *const kTables[] = {"ops",         "targets",         "kernels",    "measurements",
                               "models",      "tuning_runs",     "kernel_variants",
                               "kernel_code", "generic_code",    "generic_timings"};

struct SchemaSnapshot {
    int version = 0;
    std::vector<std::string> tables; // sorted by name; SQLite's own tables left out
};

// One statement, so the version and the tables come from one snapshot: read separately, a
// process creating the schema in between would make a new file look like a foreign one.
SchemaSnapshot read_schema(SqliteConnection &connection) {
    SqliteQuery query(connection,
                      "SELECT version.user_version, tables.name "
                      "FROM pragma_user_version AS version LEFT JOIN "
                      "(SELECT name FROM sqlite_master WHERE type = 'table' "
                      "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\') AS tables "
                      "ORDER BY tables.name",
                      "reading the schema");
    SchemaSnapshot snapshot;
    // The LEFT JOIN gives one row even without tables; its name is then NULL.
    while (query.step()) {
        snapshot.version = static_cast<int>(query.integer(0));
        if (!query.is_null(1)) {
            snapshot.tables.push_back(query.text(1));
        }
    }
    return snapshot;
}

bool contains(const std::vector<std::string> &names, const std::string &name) {
    for (const std::string &n : names) {
        if (n == name) {
            return true;
        }
    }
    return false;
}

} // namespace

int kernel_cache_schema_version() {
    return kCurrentVersion;
}

int check_schema(SqliteConnection &connection) {
    const std::string database = "database '" + connection.path() + "'";
    // The first read of the file: a file that is not a database fails here, before any write.
    SchemaSnapshot snapshot = read_schema(connection);
    int version = snapshot.version;
    const std::vector<std::string> &tables = snapshot.tables;
    if (version > kCurrentVersion) {
        throw DbError(database + " has schema version " + std::to_string(version) +
                      ", newer than version " + std::to_string(kCurrentVersion) +
                      " that this build of opgen reads; use a newer opgen");
    }
    if (version < 0) {
        throw DbError(database + " is not an opgen kernel cache: schema version " +
                      std::to_string(version) + " is negative");
    }
    if (version == 0 && !tables.empty()) {
        throw DbError(database + " is not an opgen kernel cache: it has no schema version but " +
                      "holds " + std::to_string(tables.size()) + " other table(s), e.g. '" +
                      tables.front() + "'");
    }
    if (version == kCurrentVersion) {
        for (const char *table : kTables) {
            if (!contains(tables, table)) {
                throw DbError(database + " is not an opgen kernel cache: schema version " +
                              std::to_string(version) + " but table '" + table + "' is missing");
            }
        }
    }
    return version;
}

void upgrade_schema(SqliteConnection &connection) {
    const std::string what = "upgrading the schema to version " + std::to_string(kCurrentVersion);
    SqliteTransaction transaction(connection, what);
    int version = check_schema(connection);
    if (version == kCurrentVersion) {
        return; // another process got there first; the destructor ends the empty transaction
    }
    for (int v = version; v < kCurrentVersion; v++) {
        connection.exec(kSchemaSteps[v], what);
    }
    // PRAGMA takes no bound parameters; the value is our own integer.
    connection.exec("PRAGMA user_version = " + std::to_string(kCurrentVersion), what);
    transaction.commit();
}

} // namespace opgen::db
