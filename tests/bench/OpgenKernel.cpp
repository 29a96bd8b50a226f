#include "tests/bench/OpgenKernel.h"

#include "core/Kernel.h"
#include "core/Schedule.h"
#include "tuner/Tuner.h"

#include <chrono>
#include <iostream>
#include <sstream>

namespace opgen::bench {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

class OpgenWinner : public Contender {
public:
    OpgenWinner(const Problem &p, const SchedulePoint &point)
        : out_(p.make_output()),
          op_(std::make_unique<LoweredOp>(lower_for_point(*p.def, p.shape, &point))) {
        apply_schedule(*op_, point, p.target);
        kernel_ = std::make_unique<JitKernel>(*op_, p.target);
        kernel_->bind(p.inputs, out_);
    }
    void run() override { kernel_->run(); }
    HostTensor &output() override { return out_; }

private:
    HostTensor out_;
    std::unique_ptr<LoweredOp> op_;
    std::unique_ptr<JitKernel> kernel_;
};

// Tunes the key into the cache, as `opgen tune` does; returns the stored record or nothing.
std::optional<db::KernelRecord> tune_into(const Problem &p, int threads, db::KernelCache &cache,
                                          const db::KernelKey &key, const OpgenOptions &o,
                                          std::string &why) {
    tuner::TuneOptions to;
    to.trials = o.trials;
    to.threads = threads;
    to.seed = o.seed;
    if (o.verbose)
        to.log = [](const std::string &line) { std::cerr << "    " << line << "\n"; };
    tuner::TuneResult r = tuner::tune(*p.def, p.shape, p.target, to, &cache, &key);
    if (!r.found) {
        why = "no candidate of " + std::to_string(r.trials.size()) + " produced a correct result";
        return std::nullopt;
    }
    db::KernelRecord rec = tuner::winner_record(key, r);
    cache.put_kernel(rec);
    return cache.lookup(key).value_or(rec);
}

} // namespace

db::KernelKey opgen_key(const Problem &p, int threads) {
    return opgen::kernel_key(*p.def, p.shape, p.target, threads);
}

Entrant make_opgen(const Problem &p, int threads, db::KernelCache *cache, const OpgenOptions &o) {
    const std::string name = "opgen";
    db::KernelKey key = opgen_key(p, threads);
    if (!cache)
        return Entrant::failed(name, "opgen", "not_in_cache", "no kernel cache file");
    std::optional<db::KernelRecord> rec;
    double tune_s = 0;
    try {
        rec = cache->lookup(key);
        if ((!rec || o.retune) && o.tune_missing) {
            std::cerr << "  tuning " << p.def->name << " " << p.shape.canonical << " for "
                      << threads << " thread(s), " << o.trials << " trials\n";
            auto t0 = Clock::now();
            std::string why;
            rec = tune_into(p, threads, *cache, key, o, why);
            tune_s = since(t0);
            if (!rec) {
                Entrant e = Entrant::failed(name, "opgen", "tune_failed", why);
                e.tune_s = tune_s;
                return e;
            }
        }
    } catch (const db::DbError &e) {
        return Entrant::failed(name, "opgen", "not_in_cache",
                               std::string("kernel cache: ") + e.what());
    }
    if (!rec) {
        return Entrant::failed(name, "opgen", "not_in_cache",
                               "no winner for " + key.op_name + " " + key.shape + " on " +
                                   key.target + " in " + cache->path() + " (tuning disabled)");
    }
    Entrant e;
    e.name = name;
    e.family = "opgen";
    e.tune_s = tune_s;
    auto t0 = Clock::now();
    try {
        SchedulePoint point = SchedulePoint::from_json(nlohmann::json::parse(rec->schedule_json));
        e.contender = std::make_unique<OpgenWinner>(p, point);
        std::ostringstream d;
        d << point.summary() << "; " << (tune_s > 0 ? "tuned in this run" : "from the cache")
          << ", " << rec->trials << " trials, " << rec->gflops << " GFLOP/s when tuned";
        e.detail = d.str();
    } catch (const Halide::Error &x) {
        e.status = "compile_error";
        e.detail = x.what();
    } catch (const UserError &x) {
        e.status = "compile_error";
        e.detail = x.what();
    } catch (const nlohmann::json::exception &x) {
        e.status = "compile_error";
        e.detail = std::string("cached schedule: ") + x.what();
    }
    e.setup_s = since(t0);
    return e;
}

Entrant make_opgen_point(const Problem &p, const SchedulePoint &point, const std::string &name) {
    Entrant e;
    e.name = name;
    e.family = "opgen";
    auto t0 = Clock::now();
    try {
        e.contender = std::make_unique<OpgenWinner>(p, point);
        e.detail = point.summary() + "; given point";
    } catch (const Halide::Error &x) {
        e.status = "compile_error";
        e.detail = x.what();
    } catch (const UserError &x) {
        e.status = "compile_error";
        e.detail = x.what();
    }
    e.setup_s = since(t0);
    return e;
}

} // namespace opgen::bench
