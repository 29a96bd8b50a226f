#include "tests/bench/Autoschedulers.h"

#include "tests/bench/SearchProbe.h"

#include "core/Kernel.h"
#include "core/Lower.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <set>

namespace opgen::bench {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Each plugin registers its autoscheduler once per process.
void load_once(const std::string &name) {
    static std::set<std::string> loaded;
    if (loaded.count(name))
        return;
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    Halide::load_plugin(autoscheduler_plugin_dir() + "/libautoschedule_" + lower + ".so");
    loaded.insert(name);
}

Halide::Region region_of(const std::vector<int64_t> &dims_outer_first) {
    Halide::Region r;
    for (auto it = dims_outer_first.rbegin(); it != dims_outer_first.rend(); ++it)
        r.emplace_back(0, int(*it));
    return r;
}

class AutoscheduledKernel : public Contender {
public:
    AutoscheduledKernel(const Problem &p, std::unique_ptr<LoweredOp> op)
        : out_(p.make_output()), op_(std::move(op)), kernel_(*op_, p.target) {
        kernel_.bind(p.inputs, out_);
    }
    void run() override { kernel_.run(); }
    HostTensor &output() override { return out_; }

private:
    HostTensor out_;
    std::unique_ptr<LoweredOp> op_;
    JitKernel kernel_;
};

int64_t last_level_cache(const Target &t) {
    int64_t llc = 0;
    for (const auto &b : t.buffers) {
        if (b.name != "REG" && b.capacity > llc)
            llc = b.capacity;
    }
    return llc > 0 ? llc : int64_t(16) << 20;
}

Entrant autoschedule(const Problem &p, int threads, const std::string &name,
                     const AutoscheduleOptions &o) {
    Entrant e;
    e.name = name;
    e.family = "Halide autoscheduler";
    auto t0 = Clock::now();
    try {
        auto op = std::make_unique<LoweredOp>(lower_to_halide(*p.def, p.shape));
        Halide::AutoSchedulerResults r = search_schedule(*op, *p.def, p.shape, p.target, threads, name, o.balance);
        double schedule_s = since(t0);
        // JitKernel compiles the same Funcs, which now carry the autoscheduler's schedule.
        auto t1 = Clock::now();
        e.contender = std::make_unique<AutoscheduledKernel>(p, std::move(op));
        e.setup_s = schedule_s + since(t1);
        size_t lines = size_t(std::count(r.schedule_source.begin(), r.schedule_source.end(), '\n'));
        e.detail = "scheduled in " + std::to_string(schedule_s).substr(0, 5) + " s (threads " +
                   std::to_string(threads) + "), " + std::to_string(lines) +
                   " lines of schedule";
    } catch (const Halide::Error &x) {
        e.status = "compile_error";
        e.detail = x.what();
        e.setup_s = since(t0);
        e.contender.reset();
    } catch (const UserError &x) {
        e.status = "compile_error";
        e.detail = x.what();
        e.setup_s = since(t0);
        e.contender.reset();
    }
    return e;
}

} // namespace

Halide::AutoSchedulerResults search_schedule(LoweredOp &op, const ComputeDef &def,
                                             const BoundShape &shape, const Target &target,
                                             int threads, const std::string &name, float balance) {
    load_once(name);
    for (size_t i = 0; i < op.params.size(); i++)
        op.params[i].set_estimates(region_of(shape.dims.at(op.param_names[i])));
    op.output.set_estimates(region_of(shape.dims.at(def.output().name)));
    Halide::Pipeline pipeline(op.output);
    Halide::MachineParams mp(threads, uint64_t(last_level_cache(target)), balance);
    return pipeline.auto_schedule(name, halide_target_of(target), mp);
}

std::string autoscheduler_plugin_dir() {
    if (const char *env = std::getenv("OPGEN_HALIDE_PLUGIN_DIR"))
        return env;
    return OPGEN_HALIDE_PLUGIN_DIR;
}

std::vector<Entrant> make_autoscheduled(const Problem &p, int threads,
                                        const AutoscheduleOptions &o) {
    std::vector<Entrant> out;
    for (const auto &name : o.names) {
        if (name == "Adams2019") {
            if (o.adams_max_gflop > 0 && p.flops > o.adams_max_gflop * 1e9) {
                out.push_back(Entrant::failed(name, "Halide autoscheduler", "skipped",
                                              "above --adams-max-gflop " +
                                                  std::to_string(o.adams_max_gflop)));
                continue;
            }
            if (o.adams_beam > 0) {
                setenv("HL_BEAM_SIZE", std::to_string(o.adams_beam).c_str(), 1);
            } else {
                unsetenv("HL_BEAM_SIZE");
            }
            std::string refusal = probe_search(p, threads, name, o);
            if (!refusal.empty()) {
                out.push_back(Entrant::failed(name, "Halide autoscheduler", "out_of_bounds",
                                              refusal));
                continue;
            }
        }
        out.push_back(autoschedule(p, threads, name, o));
    }
    return out;
}

} // namespace opgen::bench
