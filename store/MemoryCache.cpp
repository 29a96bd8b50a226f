#include "store/MemoryCache.h"

#include "store/CodeRowSigning.h"

#include "store/VariantStore.h"

#include <cmath>
#include <map>
#include <mutex>
#include <set>
#include <tuple>
#include <vector>

namespace opgen::db {

namespace {

using Fields = std::tuple<std::string, std::string, std::string, std::string, std::string, std::string,
                          std::string>;

// The order the SQLite cache lists winners in: target, op, shape, dtype, op hash, versions.
Fields winner_order(const KernelKey &k) {
    return {k.target, k.op_name, k.shape, k.dtype, k.op_hash, k.halide_version, k.tuner_version};
}

// The order it lists generic rows of one op and target in: dtype, op hash, versions, shape.
Fields generic_order(const KernelKey &k) {
    return {k.target, k.op_name, k.dtype, k.op_hash, k.halide_version, k.tuner_version, k.shape};
}

bool positive_finite(double v) { return v > 0 && std::isfinite(v); }

class MemoryKernelCache final : public KernelCache {
public:
    explicit MemoryKernelCache(std::string name) : name_(std::move(name)) {}

    bool put_kernel(const KernelRecord &record) override {
        std::lock_guard<std::mutex> lock(mutex_);
        if (std::isnan(record.time_ms)) fail("storing the kernel of op '" + record.key.op_name + "': time_ms is nan");
        auto it = kernels_.find(winner_order(record.key));
        // As the SQLite upsert: the old winner stays unless the new one is strictly faster.
        if (it != kernels_.end() && !(record.time_ms < it->second.time_ms)) return false;
        KernelRecord stored = record;
        if (stored.created_at.empty()) stored.created_at = now_utc_iso8601();
        kernels_[winner_order(record.key)] = stored;
        ops_.insert({record.key.op_name, record.key.op_hash});
        targets_.insert(record.key.target);
        return true;
    }

    std::optional<KernelRecord> lookup(const KernelKey &key) override {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = kernels_.find(winner_order(key));
        if (it == kernels_.end()) return std::nullopt;
        return it->second;
    }

    std::vector<KernelRecord> kernels_for(const std::string &op_name, const std::string &target) override {
        return winners_where([&](const KernelKey &k) { return k.op_name == op_name && k.target == target; });
    }
    std::vector<KernelRecord> kernels_at(const std::string &target, const std::string &shape) override {
        return winners_where([&](const KernelKey &k) { return k.target == target && k.shape == shape; });
    }
    std::vector<KernelRecord> kernels_of_op(const std::string &op_name) override {
        return winners_where([&](const KernelKey &k) { return k.op_name == op_name; });
    }

    bool put_code(const KernelKey &key, const KernelCode &code) override {
        std::lock_guard<std::mutex> lock(mutex_);
        check_code(code, false, "storing the code of the kernel of op '" + key.op_name + "'");
        auto kernel = kernels_.find(winner_order(key));
        if (kernel == kernels_.end() || kernel->second.schedule_json != code.schedule_json) return false;
        KernelCode stored = code;
        if (stored.created_at.empty()) stored.created_at = now_utc_iso8601();
        if (signing_key_) sign_code(key, stored, *signing_key_);
        code_[winner_order(key)] = stored;
        return true;
    }

    std::optional<KernelCode> code_for(const KernelKey &key) override {
        std::lock_guard<std::mutex> lock(mutex_);
        const KernelCode *code = current_code(key);
        if (!code) return std::nullopt;
        return *code;
    }

    std::vector<KernelRecord> kernels_without_code() override {
        std::lock_guard<std::mutex> lock(mutex_);
        std::vector<KernelRecord> out;
        for (const auto &[order, record] : kernels_) {
            if (!current_code(record.key)) out.push_back(record);
        }
        return out;
    }

    void put_generic_code(const GenericCodeRecord &record) override {
        std::lock_guard<std::mutex> lock(mutex_);
        check_code(record.code, true, "storing the generic code of op '" + record.key.op_name + "'");
        GenericCodeRecord stored = record;
        if (stored.code.created_at.empty()) stored.code.created_at = now_utc_iso8601();
        if (signing_key_) sign_code(stored.key, stored.code, *signing_key_);
        generic_[generic_order(record.key)] = stored;
    }

    void set_signing_key(std::optional<SigningKey> key) override {
        std::lock_guard<std::mutex> lock(mutex_);
        signing_key_ = std::move(key);
    }

    void visit_code_rows(
        const std::function<void(const KernelKey &, const KernelCode &)> &visit) override {
        std::lock_guard<std::mutex> lock(mutex_);
        for (const auto &[order, code] : code_) visit(kernels_.at(order).key, code);
        for (const auto &[order, row] : generic_) visit(row.key, row.code);
    }

    CodeSigningReport sign_code_rows(const SigningKey &key, bool only_unsigned) override {
        std::lock_guard<std::mutex> lock(mutex_);
        CodeSigningReport report;
        for (auto &[order, code] : code_) sign_row(kernels_.at(order).key, code, key, only_unsigned, report);
        for (auto &[order, row] : generic_) sign_row(row.key, row.code, key, only_unsigned, report);
        return report;
    }

    std::vector<GenericCodeRecord> generic_code_for(const std::string &op_name,
                                                    const std::string &target) override {
        std::lock_guard<std::mutex> lock(mutex_);
        std::vector<GenericCodeRecord> out;
        for (const auto &[order, row] : generic_) {
            if (row.key.op_name == op_name && row.key.target == target) out.push_back(row);
        }
        return out;
    }

    void put_generic_timings(const std::vector<GenericTimingRecord> &records) override {
        std::lock_guard<std::mutex> lock(mutex_);
        for (const GenericTimingRecord &t : records) {  // all or none: check every one first
            auto code = generic_.find(generic_order(t.key));
            if (code == generic_.end() || code->second.code.digest != t.digest) {
                fail("storing a generic kernel timing: no generic code of op '" + t.key.op_name +
                     "' with digest " + t.digest);
            }
            if (!positive_finite(t.time_ms) || !positive_finite(t.tuned_ms) || !positive_finite(t.ratio)) {
                fail("storing a generic kernel timing: its times and ratio must be positive");
            }
        }
        const std::string now = now_utc_iso8601();
        for (const GenericTimingRecord &t : records) {
            GenericTimingRecord stored = t;
            if (stored.created_at.empty()) stored.created_at = now;
            timings_[{generic_order(t.key), t.at_shape}] = stored;
        }
    }

    std::vector<GenericTimingRecord> generic_timings_for(const std::string &op_name,
                                                         const std::string &target) override {
        std::lock_guard<std::mutex> lock(mutex_);
        std::vector<GenericTimingRecord> out;
        for (const auto &[order, row] : timings_) {
            if (row.key.op_name == op_name && row.key.target == target) out.push_back(row);
        }
        return out;
    }

    int64_t begin_run(const TuningRun &run) override {
        std::lock_guard<std::mutex> lock(mutex_);
        TuningRun stored = run;
        stored.id = int64_t(runs_.size()) + 1;
        stored.status = "running";
        if (stored.started_at.empty()) stored.started_at = now_utc_iso8601();
        if (stored.options_json.empty()) stored.options_json = "{}";
        std::string &source = sources_[{run.key.op_name, run.key.op_hash}];
        if (source.empty()) source = run.op_source;
        ops_.insert({run.key.op_name, run.key.op_hash});
        targets_.insert(run.key.target);
        stored.op_source.clear();
        stored.target_description.clear();
        stored.target_fingerprint.clear();
        runs_.push_back(stored);
        return stored.id;
    }

    void end_run(int64_t id, const std::string &status, int64_t trials, const std::string &error) override {
        std::lock_guard<std::mutex> lock(mutex_);
        if (id < 1 || id > int64_t(runs_.size())) {
            fail("recording the end of tuning run " + std::to_string(id) + ": there is no run " +
                 std::to_string(id));
        }
        TuningRun &run = runs_[size_t(id - 1)];
        run.status = status;
        run.trials = trials;
        run.error = error;
        run.finished_at = now_utc_iso8601();
    }

    std::vector<TuningRun> runs_for(const KernelKey &key) override {
        std::lock_guard<std::mutex> lock(mutex_);
        std::vector<TuningRun> out;
        for (const TuningRun &run : runs_) {
            if (winner_order(run.key) == winner_order(key)) out.push_back(run);
        }
        return out;
    }

    void record_measurements(const std::vector<MeasurementRecord> &records) override {
        std::lock_guard<std::mutex> lock(mutex_);
        for (const MeasurementRecord &m : records) {  // all or none
            if (m.run_id < 0 || m.run_id > int64_t(runs_.size())) {
                fail("recording measurements: there is no run " + std::to_string(m.run_id));
            }
        }
        for (const MeasurementRecord &m : records) {
            measurements_.push_back(m);
            ops_.insert({m.key.op_name, m.key.op_hash});
            targets_.insert(m.key.target);
        }
    }

    std::vector<MeasurementRecord> measurements_for(const KernelKey &key) override {
        std::lock_guard<std::mutex> lock(mutex_);
        std::vector<MeasurementRecord> out;
        for (const MeasurementRecord &m : measurements_) {
            if (winner_order(m.key) == winner_order(key)) out.push_back(m);
        }
        return out;
    }

    std::vector<MeasurementRecord> measurements_on(const std::string &target) override {
        std::lock_guard<std::mutex> lock(mutex_);
        std::vector<MeasurementRecord> out;
        const std::string loaded = target + ":load";
        for (const MeasurementRecord &m : measurements_) {
            bool on = m.key.target == target || m.key.target.compare(0, loaded.size(), loaded) == 0;
            if (on && m.status == "ok") out.push_back(m);
        }
        return out;
    }

    std::optional<std::string> op_source(const std::string &op_name, const std::string &op_hash) override {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = sources_.find({op_name, op_hash});
        if (it == sources_.end()) return std::nullopt;
        return it->second;
    }

    void put_model(const ModelRecord &record) override {
        std::lock_guard<std::mutex> lock(mutex_);
        ModelRecord stored = record;
        if (stored.created_at.empty()) stored.created_at = now_utc_iso8601();
        models_.push_back(stored);
    }

    std::optional<ModelRecord> latest_model(const std::string &target, const std::string &name) override {
        std::lock_guard<std::mutex> lock(mutex_);
        for (auto it = models_.rbegin(); it != models_.rend(); ++it) {
            if (it->target == target && it->name == name) return *it;
        }
        return std::nullopt;
    }

    void put_variant(const VariantRecord &record) override {
        std::lock_guard<std::mutex> lock(mutex_);
        check_variant_time(name_, record);
        VariantRecord stored = record;
        if (stored.created_at.empty()) stored.created_at = now_utc_iso8601();
        variants_[{winner_order(record.key), record.level}] = stored;
    }

    std::vector<VariantRecord> variants_for(const KernelKey &key) override {
        std::lock_guard<std::mutex> lock(mutex_);
        std::vector<VariantRecord> out;
        for (const auto &[order, v] : variants_) {
            if (order.first == winner_order(key)) out.push_back(v);
        }
        return out;
    }

    CacheStats stats() override {
        std::lock_guard<std::mutex> lock(mutex_);
        CacheStats s;
        s.kernels = int64_t(kernels_.size());
        s.measurements = int64_t(measurements_.size());
        s.ops = int64_t(ops_.size());
        s.targets = int64_t(targets_.size());
        s.tuning_runs = int64_t(runs_.size());
        s.variants = int64_t(variants_.size());
        for (const auto &[order, record] : kernels_) s.kernels_with_code += current_code(record.key) ? 1 : 0;
        s.generic_code = int64_t(generic_.size());
        s.generic_timings = int64_t(timings_.size());
        s.schema_version = kernel_cache_schema_version();
        return s;
    }

    std::string path() const override { return name_; }

private:
    [[noreturn]] void fail(const std::string &what) const {
        throw DbError("database '" + name_ + "': " + what);
    }

    // Refuses code that does not match its own size or digest (or, for generic code, is not generic).
    void check_code(const KernelCode &code, bool generic, const std::string &what) const {
        if ((generic && !code.generic) || !code_matches_itself(code)) {
            fail(what + ": the code " + std::string(generic ? "is not generic or " : "") +
                 "does not match its own size or digest");
        }
    }

    // The key's code when it was compiled from the key's current winner.
    const KernelCode *current_code(const KernelKey &key) const {
        auto kernel = kernels_.find(winner_order(key));
        auto code = code_.find(winner_order(key));
        if (kernel == kernels_.end() || code == code_.end()) return nullptr;
        return code->second.schedule_json == kernel->second.schedule_json ? &code->second : nullptr;
    }

    template <typename Keep>
    std::vector<KernelRecord> winners_where(Keep keep) {
        std::lock_guard<std::mutex> lock(mutex_);
        std::vector<KernelRecord> out;
        for (const auto &[order, record] : kernels_) {
            if (keep(record.key)) out.push_back(record);
        }
        return out;
    }

    const std::string name_;
    std::mutex mutex_;
    std::optional<SigningKey> signing_key_;
    std::map<Fields, KernelRecord> kernels_;
    std::map<Fields, KernelCode> code_;
    std::map<Fields, GenericCodeRecord> generic_;
    std::map<std::pair<Fields, std::string>, GenericTimingRecord> timings_;
    std::vector<TuningRun> runs_;
    std::vector<MeasurementRecord> measurements_;
    std::map<std::pair<std::string, std::string>, std::string> sources_;
    std::vector<ModelRecord> models_;
    std::map<std::pair<Fields, double>, VariantRecord> variants_;
    std::set<std::pair<std::string, std::string>> ops_;
    std::set<std::string> targets_;
};

}  // namespace

std::unique_ptr<KernelCache> open_memory_cache(const std::string &name) {
    return std::make_unique<MemoryKernelCache>(name);
}

}  // namespace opgen::db
