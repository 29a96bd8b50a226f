// The kernel cache: a SQLite file that holds every tuned winner, keyed by
// (op definition hash, canonical shape, dtype, target, Halide version, tuner version), and every
// measured candidate as training data for the cost model.
//
// db knows nothing of Halide or of the tuner: schedules arrive as opaque JSON text and features as
// plain float vectors. Every lookup filters by target, so two machines never see each other's
// winners. Errors of the environment (a corrupt, read-only, locked or newer-schema file) raise
// DbError with the path and what is wrong; nothing is written after such an error.
#ifndef OPGEN_STORE_KERNEL_CACHE_H
#define OPGEN_STORE_KERNEL_CACHE_H

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "store/CodeSignature.h"
#include "store/KernelCode.h"

namespace opgen::db {

// A problem with the database file or its contents; the message names the path.
class DbError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The identity of one tuning task. `shape` is canonical: "K=512,M=512,N=512" (names sorted).
struct KernelKey {
    std::string op_name;
    std::string op_hash;  // stable hash of the op's definition text (hex)
    std::string shape;
    std::string dtype = "f32";
    std::string target;  // target name, e.g. "host-x86-64-avx512"
    std::string halide_version;
    std::string tuner_version;
};

// The winner of one tuning task.
struct KernelRecord {
    KernelKey key;
    std::string schedule_json;    // the point of the legal space, as JSON text
    std::string schedule_source;  // printed Halide C++ schedule source
    double time_ms = 0;           // median time of one call
    double gflops = 0;
    double default_time_ms = 0;   // the untuned default schedule, measured in the same run
    bool verified = false;        // output checked against the reference
    int64_t trials = 0;           // candidates measured to find it
    std::string created_at;       // ISO-8601 UTC; filled by put_kernel when empty
};

// One measured candidate. status is "ok", or the failure: "compile_error", "runtime_error",
// "wrong_result", "timeout", "crash".
struct MeasurementRecord {
    KernelKey key;
    std::string schedule_json;
    std::vector<float> features;  // flattened group rows, row-major
    int32_t feature_rows = 0;     // number of group rows in `features`
    double time_ms = 0;
    double gflops = 0;
    std::string status = "ok";
    std::string error;
    int64_t run_id = 0;  // the tuning run that measured it (begin_run); 0 for none
};

// One tuning run of one key (the `tuning_runs` table): begun by begin_run before the first
// measurement, ended by end_run. A run still "running" after its process is gone was killed.
struct TuningRun {
    int64_t id = 0;  // assigned by begin_run
    KernelKey key;
    std::string op_source;           // the op's definition text, kept in `ops` (set by begin_run)
    std::string target_description;  // kept in `targets` with the fingerprint (set by begin_run)
    std::string target_fingerprint;
    std::string options_json = "{}";  // the tuner's options, as a JSON object
    // "running", then "done" or "failed"; "migrated" for the measurements of one key recorded
    // before runs were (schema version 3 gave them one run each).
    std::string status = "running";
    int64_t trials = 0;  // candidates of the run (measured or reused); set by end_run
    std::string error;   // why a failed run failed
    std::string started_at;   // ISO-8601 UTC, set by begin_run
    std::string finished_at;  // ISO-8601 UTC, set by end_run; empty while running
};

// A trained cost model of one target (the `models` table): its serialized bytes, how many
// measured candidates trained it and its evaluation figures as JSON text.
struct ModelRecord {
    std::string target;
    std::string name;  // the model's kind, e.g. "xgboost"
    int64_t train_rows = 0;
    std::string quality_json = "{}";
    std::vector<uint8_t> bytes;
    std::string created_at;  // ISO-8601 UTC; filled by put_model when empty
};

struct CacheStats {
    int64_t kernels = 0;
    int64_t measurements = 0;
    int64_t ops = 0;
    int64_t targets = 0;
    int64_t tuning_runs = 0;
    int64_t variants = 0;  // rows of kernel_variants (VariantStore.h)
    int64_t kernels_with_code = 0;  // kernels with code compiled from their current schedule
    int64_t generic_code = 0;       // rows of generic_code
    int64_t generic_timings = 0;    // rows of generic_timings
    int schema_version = 0;
};

// A shape-generic kernel's code (KernelCode::generic, GenericSignature.h). `key.shape` is the
// tuned shape whose schedule it was compiled from; `checked_shapes` the shapes ("M=1,N=1;M=7,N=9")
// it was checked at against the reference before it was stored.
struct GenericCodeRecord {
    KernelKey key;
    KernelCode code;
    std::string checked_shapes;
};

// A generic kernel timed at a tuned shape of its op (schema version 6): the generic code of
// `digest` (GenericCodeRecord of `key`: key.shape is the shape it was compiled from) run at the
// tuned shape `at_shape` (canonical) in turns with that shape's tuned kernel; `ratio` is the median
// of the per-turn generic/tuned time ratios, `time_ms` and `tuned_ms` the two medians.
struct GenericTimingRecord {
    KernelKey key;
    std::string digest;
    std::string at_shape;
    double time_ms = 0;
    double tuned_ms = 0;
    double ratio = 0;
    std::string created_at;  // filled when stored
};

// What sign_code_rows did.
struct CodeSigningReport {
    int64_t signed_rows = 0;     // rows that now carry the key's signature
    int64_t kept = 0;            // signed rows left as they were (only_unsigned)
    int64_t not_matching = 0;    // rows whose code does not match its own digest, left unsigned
};

// One schedule variant of a key (VariantRowStore): the winner measured under one contention level.
struct VariantRecord {
    KernelKey key;
    double level = 0;             // contention level it was tuned under; 0 is the quiet machine
    std::string load;             // how the load was made, e.g. "1 thread x 100% streaming 64 MiB"
    std::string schedule_json;
    std::string schedule_source;
    double time_ms = 0;           // median time under its own level
    double quiet_time_ms = 0;     // median time on the quiet machine, measured in the same run
    int64_t trials = 0;
    std::string created_at;       // ISO-8601 UTC; filled by put_variant when empty
};

enum class OpenMode { ReadOnly, ReadWrite };

// The cache's interfaces, one per kind of record (docs/design.md §2.8). A module that needs one
// kind takes that interface; KernelCache is all of them over one file. open_kernel_cache makes the
// SQLite implementation, open_memory_cache (store/MemoryCache.h) an in-memory one for tests of
// other modules. Every implementation keeps the same contract, which tests/store checks on both.

// Winners: one row per key, the fastest measured.
class WinnerStore {
public:
    virtual ~WinnerStore() = default;

    // Stores a winner unless the key already has one at least as fast; returns true when stored.
    virtual bool put_kernel(const KernelRecord &record) = 0;
    // The winner for exactly this key, if any.
    virtual std::optional<KernelRecord> lookup(const KernelKey &key) = 0;
    // All winners of one op on one target (any shape); used for nearest-shape answers.
    virtual std::vector<KernelRecord> kernels_for(const std::string &op_name,
                                                  const std::string &target) = 0;
    // All winners of every op at one shape on one target, in key order (a tuning task starts from
    // the loop choices of related ops tuned at its shape: tuner/CarriedPoints.h).
    virtual std::vector<KernelRecord> kernels_at(const std::string &target, const std::string &shape) = 0;
    // All winners of one op on every target, in key order (generic code is compiled from them).
    virtual std::vector<KernelRecord> kernels_of_op(const std::string &op_name) = 0;
};

// The compiled code of winners and the shape-generic code of ops, with the generic code's timings.
class KernelCodeStore {
public:
    virtual ~KernelCodeStore() = default;

    // Stores compiled code for the kernel of `key`, replacing any code it had, when the kernel's
    // schedule is still `code.schedule_json`; returns false (nothing stored) when the key has no
    // kernel or a faster one replaced it meanwhile. Raises DbError, storing nothing, when the code
    // does not match its own size or digest.
    virtual bool put_code(const KernelKey &key, const KernelCode &code) = 0;
    // The stored code of the kernel of `key`, when it was compiled from the kernel's current
    // schedule; as stored, unchecked (CodeLoader.h checks it before it runs).
    virtual std::optional<KernelCode> code_for(const KernelKey &key) = 0;
    // Stores generic code, replacing what the key had. Raises DbError, storing nothing, when the
    // code is not generic or does not match its own size or digest.
    virtual void put_generic_code(const GenericCodeRecord &record) = 0;
    // The generic code of an op on a target (every op hash and version), in key order.
    virtual std::vector<GenericCodeRecord> generic_code_for(const std::string &op_name,
                                                            const std::string &target) = 0;
    // Stores timings of generic code in one transaction, each replacing the timing of its key and
    // at_shape. Raises DbError, storing nothing, when a timing names no stored generic code of its
    // key and digest, or its times or ratio are not positive and finite.
    virtual void put_generic_timings(const std::vector<GenericTimingRecord> &records) = 0;
    // The timings of an op's generic code on a target (every op hash and version), in key order
    // then at_shape.
    virtual std::vector<GenericTimingRecord> generic_timings_for(const std::string &op_name,
                                                                 const std::string &target) = 0;
    // Every kernel without code compiled from its current schedule, in key order.
    virtual std::vector<KernelRecord> kernels_without_code() = 0;

    // Signs the code this store stores from now on (put_code, put_generic_code) with `key`, as
    // the row of its key (CodeSignature.h); nullopt, the default, stores code unsigned.
    virtual void set_signing_key(std::optional<SigningKey> key) = 0;
    // Every code row, exact (kernel_code) then generic, in key order, with its bytes: `visit`
    // gets the row's key and code.
    virtual void visit_code_rows(
        const std::function<void(const KernelKey &, const KernelCode &)> &visit) = 0;
    // Signs every code row with `key`, or with `only_unsigned` only the rows without a signature,
    // in one transaction. Rows whose code does not match its own size and digest are left
    // unsigned: a signature vouches for code, and that code is not what was stored.
    virtual CodeSigningReport sign_code_rows(const SigningKey &key, bool only_unsigned) = 0;
};

// Tuning runs and every measured candidate: resuming a killed run, and the cost model's training
// data.
class MeasurementStore {
public:
    virtual ~MeasurementStore() = default;

    // Records the start of a tuning run and returns its id, for MeasurementRecord::run_id and
    // end_run. Also records the op's source text and the target's description and fingerprint
    // where the cache has none yet for them. One transaction.
    virtual int64_t begin_run(const TuningRun &run) = 0;
    // Records the end of run `id`: `status` ("done" or "failed"), its trials and, for a failed
    // run, why. Raises DbError when there is no such run.
    virtual void end_run(int64_t id, const std::string &status, int64_t trials,
                         const std::string &error = "") = 0;
    // Every run of a key, oldest first (op_source and the target's fields are left empty).
    virtual std::vector<TuningRun> runs_for(const KernelKey &key) = 0;
    // Appends measurements in one transaction: all or none. A run_id must name a run of this file.
    virtual void record_measurements(const std::vector<MeasurementRecord> &records) = 0;
    // Every measurement of a key (for resuming and for training data).
    virtual std::vector<MeasurementRecord> measurements_for(const KernelKey &key) = 0;
    // Every measurement of every key on one target with status "ok" (training data), those taken
    // under a contention load included: their target is `target` + ":load<level>"
    // (opgen::loaded_key).
    virtual std::vector<MeasurementRecord> measurements_on(const std::string &target) = 0;
    // The op's definition text recorded by begin_run for this hash, if any.
    virtual std::optional<std::string> op_source(const std::string &op_name,
                                                 const std::string &op_hash) = 0;
};

// Trained cost models of a target.
class TrainedModelStore {
public:
    virtual ~TrainedModelStore() = default;

    // Appends a trained model; the newest of a (target, name) is the one latest_model returns.
    virtual void put_model(const ModelRecord &record) = 0;
    virtual std::optional<ModelRecord> latest_model(const std::string &target, const std::string &name) = 0;
};

// Winners measured under memory-bandwidth contention, one per key and level (docs/design.md §7.6).
class VariantRowStore {
public:
    virtual ~VariantRowStore() = default;

    // Stores `record`, replacing the key's variant at the same level. Raises DbError for a time
    // that is not positive and finite.
    virtual void put_variant(const VariantRecord &record) = 0;
    // The variants of `key` by increasing level; empty when the key has none.
    virtual std::vector<VariantRecord> variants_for(const KernelKey &key) = 0;
};

// Every kind of record of one cache file.
class KernelCache : public WinnerStore,
                    public KernelCodeStore,
                    public MeasurementStore,
                    public TrainedModelStore,
                    public VariantRowStore {
public:
    virtual CacheStats stats() = 0;
    // The file's path; ":memory:" style names for an in-memory cache.
    virtual std::string path() const = 0;
};

// Opens (ReadWrite creates when missing) the SQLite cache at `path`, creating or migrating the
// schema. Raises DbError for a file that is not a SQLite database, a newer schema version, a
// read-only file opened ReadWrite, an unwritable directory, or a database locked past the busy
// timeout.
std::unique_ptr<KernelCache> open_kernel_cache(const std::string &path,
                                               OpenMode mode = OpenMode::ReadWrite);

// The current UTC time as the records' created_at carry it: ISO-8601, "2026-11-28T06:07:40Z".
std::string now_utc_iso8601();

// The schema version this build writes (PRAGMA user_version).
int kernel_cache_schema_version();

}  // namespace opgen::db

#endif
