// batch: tune every task of a manifest into the kernel cache (core/Manifest.h, tuner/Batch.h).
#include "core/OpLibrary.h"
#include "cli/Cli.h"
#include "tuner/Batch.h"
#include "core/Manifest.h"
#include "tuner/Progress.h"

#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

namespace opgen::cli {

namespace {

using nlohmann::json;

struct BatchArgs {
    Common common;
    std::unique_ptr<TuneFlags> flags;
    std::string manifest;
    std::string shard = "0/1";
    std::string report;
    size_t remeasure = 0;
    double threshold = 0.25;
    bool verbose = false;
    bool dry_run = false;
};

// On a terminal one line rewritten in place; otherwise (a log file, a Slurm job) a plain line
// per task.
std::function<void(const tuner::BatchProgress &)> progress_printer(bool quiet) {
    tuner::ProgressMode mode = tuner::progress_mode(quiet, stderr);
    if (mode == tuner::ProgressMode::Quiet) return {};
    bool tty = mode == tuner::ProgressMode::Live;
    return [tty](const tuner::BatchProgress &p) {
        const std::string line = tuner::format_batch_progress(p);
        if (tty)
            std::cerr << "\r\033[K" << line << (p.current ? "" : "\n") << std::flush;
        else
            std::cerr << line << "\n";
    };
}

void print_summary(const std::vector<tuner::TaskOutcome> &out) {
    std::printf("%-5s %-16s %-34s %-7s %10s %9s %8s %6s %8s\n", "entry", "op", "shape", "status", "time_ms",
                "GFLOP/s", "speedup", "trials", "wall_s");
    double wall = 0;
    for (const auto &o : out) {
        const auto &r = o.record;
        bool ok = o.status != tuner::TaskStatus::Failed;
        std::printf("%-5zu %-16s %-34s %-7s %10s %9s %7sx %6lld %8s\n", o.task.entry, o.task.op.c_str(),
                    o.task.shape.c_str(), tuner::task_status_name(o.status), ok ? fixed(r.time_ms, 3).c_str() : "-",
                    ok ? fixed(r.gflops, 1).c_str() : "-",
                    ok && r.time_ms > 0 ? fixed(r.default_time_ms / r.time_ms, 1).c_str() : "-",
                    static_cast<long long>(ok ? r.trials : 0), fixed(o.wall_s, 1).c_str());
        if (!o.stale.empty()) std::printf("      (stale key re-tuned: %s)\n", o.stale.c_str());
        wall += o.wall_s;
    }
    std::printf("total: %zu tasks, %s\n", out.size(), tuner::format_duration(wall).c_str());
}

std::string now_utc() {
    std::time_t t = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return buf;
}

json task_json(const opgen::BatchTask &t) {
    return {{"entry", t.entry}, {"op", t.op}, {"shape", t.shape}, {"dtype", t.dtype}, {"target", t.target},
            {"trials", t.trials}, {"seed", t.seed}};
}

// Written to a temporary file and renamed, so a reader never sees half a report.
void write_report(const std::string &path, const json &j) { write_file_whole(path, j.dump(1) + "\n", "report"); }

// The one thread count every task of the batch runs with (their targets' or --threads); 0 for no
// tasks. Raises UserError when the targets disagree.
int batch_threads(const BatchArgs &a, const std::vector<opgen::BatchTask> &tasks) {
    int threads = 0;
    for (const auto &t : tasks) {
        int n = threads_of(a.common, load_target(t.target));
        user_check(threads == 0 || threads == n)
            << "manifest '" << a.manifest << "': its targets use different thread counts (" << threads << " and " << n
            << "); pass --threads or run them as separate batches";
        threads = n;
    }
    return threads;
}

void print_dry_run(const std::vector<opgen::BatchTask> &tasks, const opgen::Manifest &m, const opgen::Shard &shard) {
    for (const auto &t : tasks)
        std::printf("%zu %s %s %s %s trials=%d seed=%llu\n", t.entry, t.op.c_str(), t.shape.c_str(), t.dtype.c_str(),
                    t.target.c_str(), t.trials, static_cast<unsigned long long>(t.seed));
    std::printf("shard %d/%d: %zu of %zu tasks (%zu entries, %zu repeats dropped)\n", shard.index, shard.count,
                tasks.size(), m.tasks.size(), m.entries, m.duplicates);
}

// The tuning flags as `tune` reads them (workers, budgets, timeouts); the batch prints its own
// progress, the tuner's lines only with --verbose.
tuner::BatchOptions batch_options(const BatchArgs &a, const std::vector<opgen::BatchTask> &tasks, int threads) {
    tuner::BatchOptions o;
    o.tune = tune_options(*a.flags, a.common, load_target(tasks.empty() ? a.common.target : tasks[0].target));
    o.tune.threads = threads;
    o.tune.progress = {};
    o.tune.trial_lines = a.verbose;
    if (a.verbose) o.tune.log = [](const std::string &line) { std::cerr << "  " << line << "\n"; };
    else o.tune.log = {};
    o.progress = progress_printer(a.flags->quiet);
    return o;
}

void print_remeasured(const std::vector<tuner::Remeasure> &again, double threshold) {
    std::printf("\nre-measured %zu cached winners (regression: time relative to the default schedule up by more than %s%% since tuned)\n",
                again.size(), fixed(threshold * 100, 0).c_str());
    for (const auto &r : again)
        std::printf("  %-16s %-34s cached %s ms (default %s)  now %s ms (default %s)  %s\n", r.task.op.c_str(),
                    r.task.shape.c_str(), fixed(r.cached_ms, 3).c_str(), fixed(r.cached_default_ms, 3).c_str(),
                    fixed(r.now_ms, 3).c_str(), fixed(r.now_default_ms, 3).c_str(),
                    !r.regressed ? "ok" : r.status == "ok" ? "REGRESSED" : ("REGRESSED (" + r.status + ")").c_str());
}

json report_json(const BatchArgs &a, const opgen::Shard &shard, const std::string &started, int threads,
                 const std::vector<tuner::TaskOutcome> &out, const std::vector<tuner::Remeasure> &again) {
    json j;
    j["manifest"] = a.manifest;
    j["shard"] = std::to_string(shard.index) + "/" + std::to_string(shard.count);
    j["db"] = a.common.db_path;
    j["started_at"] = started;
    j["finished_at"] = now_utc();
    j["threads"] = threads;
    j["halide_version"] = opgen::halide_version();
    j["tuner_version"] = opgen::tuner_version();
    j["tasks"] = json::array();
    for (const auto &o : out) {
        json t = task_json(o.task);
        t["status"] = tuner::task_status_name(o.status);
        t["wall_s"] = o.wall_s;
        if (!o.error.empty()) t["error"] = o.error;
        if (!o.stale.empty()) t["stale"] = o.stale;
        if (o.status != tuner::TaskStatus::Failed) t["kernel"] = record_json(o.record, tuner::task_status_name(o.status));
        j["tasks"].push_back(t);
    }
    j["remeasured"] = json::array();
    for (const auto &r : again) {
        json t = task_json(r.task);
        t.update({{"cached_ms", r.cached_ms}, {"cached_default_ms", r.cached_default_ms}, {"now_ms", r.now_ms},
                  {"now_default_ms", r.now_default_ms}, {"gflops_now", r.gflops_now}, {"status", r.status},
                  {"regressed", r.regressed}, {"threshold", a.threshold}});
        j["remeasured"].push_back(t);
    }
    return j;
}

// Lists the failed tasks on stderr and raises UserError when there are any.
void fail_on_failed_tasks(const BatchArgs &a, const std::vector<tuner::TaskOutcome> &out) {
    size_t failed = 0;
    for (const auto &o : out)
        if (o.status == tuner::TaskStatus::Failed) failed++;
    if (failed == 0) return;
    std::cerr << "failed tasks:\n";
    for (const auto &o : out)
        if (o.status == tuner::TaskStatus::Failed)
            std::cerr << "  entry " << o.task.entry << " " << o.task.op << " " << o.task.shape << ": " << o.error << "\n";
    user_check(false) << "batch '" << a.manifest << "': " << failed << " of " << out.size()
                      << " tasks failed (listed above)";
}

void run(const BatchArgs &a) {
    OpLibrary lib = OpLibrary::standard(a.common.ops_dirs);
    opgen::Shard shard = opgen::parse_shard(a.shard);
    opgen::ManifestDefaults d;
    d.target = a.common.target;
    d.trials = a.flags->trials;
    d.seed = a.flags->seed;
    // Everything is validated before the database is touched.
    opgen::Manifest m = opgen::load_manifest(a.manifest, lib, d);
    std::vector<opgen::BatchTask> tasks = opgen::shard_tasks(m.tasks, shard);
    int threads = batch_threads(a, tasks);
    if (a.dry_run) return print_dry_run(tasks, m, shard);
    if (threads == 0) threads = 1;
    set_threads(threads);
    tuner::BatchOptions o = batch_options(a, tasks, threads);
    auto cache = db::open_kernel_cache(a.common.db_path, db::OpenMode::ReadWrite);
    cache->set_signing_key(signing_key_of(a.common.signing_key));
    // One set of measurement workers for every task of the batch (docs/design.md §7.3).
    int jobs = o.tune.jobs > 0 ? o.tune.jobs : int(std::max(1u, std::thread::hardware_concurrency()));
    tuner::WorkerPool pool(jobs);
    o.tune.pool = &pool;
    std::string started = now_utc();
    std::vector<tuner::TaskOutcome> out = tuner::run_batch(tasks, lib, *cache, o);
    print_summary(out);

    std::vector<tuner::Remeasure> again;
    if (a.remeasure > 0) {
        tuner::PoolOptions po;
        po.min_time_ms = o.tune.min_time_ms;
        po.timeout_s = o.tune.timeout_s;
        again = tuner::remeasure_sample(tasks, lib, *cache, pool, po, threads, a.remeasure, a.flags->seed, a.threshold);
        print_remeasured(again, a.threshold);
    }
    if (!a.report.empty()) write_report(a.report, report_json(a, shard, started, threads, out, again));
    fail_on_failed_tasks(a, out);
}

void add_batch(CLI::App &app) {
    auto a = std::make_shared<BatchArgs>();
    auto *cmd = app.add_subcommand(
        "batch", "tune every task of a manifest (incremental and resumable: cached keys are skipped)");
    cmd->add_option("manifest", a->manifest, "JSON manifest (docs/batch.md)")->required();
    cmd->add_option("--shard", a->shard, "run shard i of N (0-based, e.g. 2/8): task j goes to shard j mod N");
    cmd->add_option("--report", a->report, "write every task's outcome as JSON to this file");
    cmd->add_option("--remeasure", a->remeasure, "afterwards, measure again this many cached winners (seeded sample)");
    cmd->add_option("--regression-threshold", a->threshold, "relative slowdown flagged as a regression (default 0.25)")
        ->check(CLI::Range(0.0, 100.0));
    cmd->add_flag("--verbose", a->verbose, "the tuner's own progress lines too");
    cmd->add_flag("--dry-run", a->dry_run, "list this shard's tasks and stop");
    a->flags = std::make_unique<TuneFlags>(cmd);
    add_common_options(cmd, a->common, true);
    add_signing_key_option(cmd, a->common.signing_key);
    cmd->callback([a] { run(*a); });
}

}  // namespace

void add_batch_commands(CLI::App &app) { add_batch(app); }

}  // namespace opgen::cli
