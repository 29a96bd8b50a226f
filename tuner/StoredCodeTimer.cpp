#include "tuner/StoredCodeTimer.h"

#include "runtime/CodeLoader.h"
#include "runtime/CodeTrust.h"
#include "store/KeyFiles.h"
#include "store/KernelCache.h"
#include "tuner/LoadedKernelTensors.h"
#include "tuner/PairedSteps.h"
#include "tuner/StoredTimingJob.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

namespace opgen::tuner {

namespace {

using Kernel = std::shared_ptr<const db::LoadedKernel>;

// The inputs every kernel of a pair is called on.
constexpr uint32_t kInputSeed = 7;

using Tensors = LoadedKernelTensors;

// One call, in milliseconds; std::runtime_error when it fails.
double timed_call(const db::LoadedKernel &k, Tensors &t, const std::string &what) {
    auto t0 = std::chrono::steady_clock::now();
    std::string why;
    if (int rc = k.call(t.pointers.data(), t.pointers.size(), &why); rc != 0) {
        throw std::runtime_error("a call of " + what + " failed (" + std::to_string(rc) + (why.empty() ? "" : ": " + why) + ")");
    }
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// The pair's arguments have the same dims, in order: the same inputs feed both.
bool same_arguments(const db::LoadedKernel &a, const db::LoadedKernel &b) {
    if (a.arguments().size() != b.arguments().size()) return false;
    for (size_t i = 0; i < a.arguments().size(); i++) {
        if (a.arguments()[i].dims != b.arguments()[i].dims) return false;
    }
    return true;
}

// Times `generic` against `tuned` as the header says; the outputs checked first.
StoredTimingResult time_pair(const StoredTimingPair &pair, const db::LoadedKernel &generic,
                             const db::LoadedKernel &tuned, const StoredTimingJob &job) {
    StoredTimingResult r;
    r.pair = pair;
    if (!same_arguments(generic, tuned)) {
        r.error = "the generic kernel's arguments at " + pair.at_shape + " differ from the tuned kernel's";
        return r;
    }
    Tensors g(generic, kInputSeed), t(tuned, kInputSeed);
    timed_call(tuned, t, "the tuned kernel");  // also a warm-up: page faults, thread pool start
    timed_call(generic, g, "the generic kernel");
    double d = worst_output_difference(g, t);
    if (!(d < 1e-3)) {
        r.error = "its output at " + pair.at_shape + " differs from the tuned kernel's by " + std::to_string(d);
        return r;
    }
    PairedSteps steps = alternate_calls([&] { return timed_call(generic, g, "the generic kernel"); },
                                        [&] { return timed_call(tuned, t, "the tuned kernel"); }, job.min_ms,
                                        job.min_runs, 1000);
    r.time_ms = median(std::move(steps.candidate_ms));
    r.tuned_ms = median(std::move(steps.reference_ms));
    r.ratio = steps.ratio;
    return r;
}

// The job's key family with `shape`.
db::KernelKey key_at(const StoredTimingJob &job, const std::string &shape) {
    db::KernelKey key = job.family;
    key.shape = shape;
    return key;
}

// The cache's code, loaded once per digest (generic) or tuned shape; a failure is kept as the
// reason every pair that needs it reports.
class StoredKernels {
public:
    StoredKernels(db::KernelCache &cache, const StoredTimingJob &job)
        : cache_(cache), job_(job), trust_(trust_of(job)) {
        for (db::GenericCodeRecord &row : cache.generic_code_for(job.family.op_name, job.family.target)) {
            if (key_family(row.key) == key_family(job.family)) rows_.push_back(std::move(row));
        }
    }

    // The tuned kernel at `shape`; nullptr with `why`.
    Kernel tuned(const std::string &shape, std::string &why) {
        auto [it, fresh] = tuned_.try_emplace(shape);
        if (fresh) it->second = load([&] {
            std::optional<db::KernelCode> code = cache_.code_for(key_at(job_, shape));
            if (!code) throw std::runtime_error("no stored code (run 'opgen db compile' on the cache)");
            return load_trusted(key_at(job_, shape), *code);
        });
        why = it->second.second.empty() ? "" : "the tuned kernel at " + shape + ": " + it->second.second;
        return it->second.first;
    }

    // The generic kernel of `pair` bound to its at_shape; nullptr with `why`.
    Kernel generic(const StoredTimingPair &pair, std::string &why) {
        auto row = std::find_if(rows_.begin(), rows_.end(), [&](const db::GenericCodeRecord &r) {
            return r.key.shape == pair.generic_shape && r.code.digest == pair.digest;
        });
        if (row == rows_.end()) {
            why = "no generic code from " + pair.generic_shape + " with digest " + pair.digest + " in the cache";
            return nullptr;
        }
        auto [it, fresh] = generic_.try_emplace(pair.digest);
        if (fresh) it->second = load([&] { return load_trusted(row->key, row->code); });
        if (!it->second.first) {
            why = "the generic kernel from " + pair.generic_shape + ": " + it->second.second;
            return nullptr;
        }
        Kernel bound = db::bind_generic_kernel(it->second.first, row->code, pair.at_shape, &why);
        if (!bound) why = "the generic kernel from " + pair.generic_shape + " at " + pair.at_shape + ": " + why;
        return bound;
    }

private:
    // The environment's trust and the job's keys (the key the command signed with).
    static db::TrustPolicy trust_of(const StoredTimingJob &job) {
        db::TrustPolicy trust = db::trust_from_environment();
        for (const db::PublicKey &key : db::read_trusted_keys(job.trusted_keys)) trust.keys.push_back(key);
        return trust;
    }

    // The code of the row `key`, loaded when the trust lets it run and it passes CodeLoader's checks.
    Kernel load_trusted(const db::KernelKey &key, const db::KernelCode &code) const {
        if (std::string refusal = db::trust_refusal(key, code, trust_); !refusal.empty()) {
            throw std::runtime_error("its code: " + refusal);
        }
        return db::load_kernel_code(code, "its code");
    }

    template <class F>
    static std::pair<Kernel, std::string> load(F f) {
        try {
            return {f(), ""};
        } catch (const std::exception &e) {
            return {nullptr, e.what()};
        }
    }

    db::KernelCache &cache_;
    const StoredTimingJob &job_;
    const db::TrustPolicy trust_;
    std::vector<db::GenericCodeRecord> rows_;
    std::map<std::string, std::pair<Kernel, std::string>> tuned_;    // by shape
    std::map<std::string, std::pair<Kernel, std::string>> generic_;  // unbound, by digest
};

StoredTimingResult run_pair(const StoredTimingPair &pair, StoredKernels &kernels, const StoredTimingJob &job) {
    StoredTimingResult r;
    r.pair = pair;
    Kernel tuned = kernels.tuned(pair.at_shape, r.error);
    Kernel generic = tuned ? kernels.generic(pair, r.error) : nullptr;
    if (!tuned || !generic) return r;
    try {
        return time_pair(pair, *generic, *tuned, job);
    } catch (const std::runtime_error &e) {
        r.error = e.what();
        return r;
    }
}

}  // namespace

int run_stored_timing(const std::string &job_file) {
    try {
        std::ifstream in(job_file);
        if (!in) throw std::runtime_error("cannot read the job file '" + job_file + "'");
        StoredTimingJob job = stored_timing_job(nlohmann::json::parse(in));
        auto cache = db::open_kernel_cache(job.db, db::OpenMode::ReadOnly);
        StoredKernels kernels(*cache, job);
        std::ofstream out(job.results, std::ios::trunc);
        if (!out) throw std::runtime_error("cannot write the results file '" + job.results + "'");
        for (const StoredTimingPair &pair : job.pairs) {
            out << to_json(run_pair(pair, kernels, job)).dump() << '\n';
            out.flush();
        }
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}

}  // namespace opgen::tuner
