// tune: one op at one shape, tuned into the kernel cache.
#include "core/OpLibrary.h"
#include "cli/Cli.h"
#include "tuner/Progress.h"
#include "tuner/Tuner.h"
#include "tuner/Variants.h"

#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>

namespace opgen::cli {

TuneFlags::TuneFlags(CLI::App *cmd) {
    cmd->add_option("--trials", trials, "candidates to measure")->check(CLI::Range(1, 100000));
    cmd->add_option("--seed", seed, "seed of every random choice");
    cmd->add_flag("--quiet", quiet, "no progress output");
    cmd->add_option("--jobs", jobs, "measurement workers compiling in parallel (default: the core count)")
        ->check(CLI::Range(1, 256));
    cmd->add_option("--time-budget", time_budget_s, "stop measuring after this many seconds (default: no limit)")
        ->check(CLI::Range(0.0, 1e7));
    cmd->add_option("--patience", patience, "stop after this many rounds without a 1% better candidate (0: never)")
        ->check(CLI::Range(0, 100000));
    cmd->add_option("--timeout", timeout_s, "seconds a candidate may take to compile or to time (default 60)")
        ->check(CLI::Range(0.1, 1e6));
    cmd->add_option("--min-time", min_time_ms, "milliseconds of calls timed per candidate (default 60)")
        ->check(CLI::Range(0.0, 1e6));
    cmd->add_flag("--no-default-model", no_default_model,
                  "rank the first rounds by the roofline estimate, not by the target's default cost model "
                  "(costmodel/models/<target>.model); the online model is trained either way");
    // Test-only: make chosen trials crash or hang inside their worker ("crash:2,hang:5").
    cmd->add_option("--test-fault", test_fault, "")->group("");
}

namespace {

// "crash:2,hang:5" -> {2: crash, 5: hang}
std::map<int, std::string> parse_faults(const std::string &spec) {
    std::map<int, std::string> out;
    std::stringstream in(spec);
    std::string item;
    while (std::getline(in, item, ',')) {
        if (item.empty()) continue;
        size_t colon = item.find(':');
        user_check(colon != std::string::npos) << "--test-fault: '" << item << "' is not KIND:TRIAL";
        std::string kind = item.substr(0, colon);
        user_check(kind == "crash" || kind == "hang" || kind == "crash-timing")
            << "--test-fault: unknown kind '" << kind << "' (crash, hang, crash-timing)";
        int n = 0;
        try {
            n = std::stoi(item.substr(colon + 1));
        } catch (const std::exception &) {
            n = 0;
        }
        user_check(n > 0) << "--test-fault: trial '" << item.substr(colon + 1) << "' must be a positive number";
        out[n] = kind;
    }
    return out;
}

}  // namespace

nlohmann::json variants_json(const std::vector<db::VariantRecord> &variants) {
    nlohmann::json out = nlohmann::json::array();
    for (const db::VariantRecord &v : variants) {
        out.push_back({{"level", v.level},
                       {"load", v.load},
                       {"time_ms", v.time_ms},
                       {"quiet_time_ms", v.quiet_time_ms},
                       {"schedule", nlohmann::json::parse(v.schedule_json)},
                       {"schedule_source", v.schedule_source},
                       {"created_at", v.created_at}});
    }
    return out;
}

tuner::TuneOptions tune_options(const TuneFlags &f, const Common &c, const Target &t) {
    tuner::TuneOptions o;
    o.trials = f.trials;
    o.threads = threads_of(c, t);
    o.seed = f.seed;
    o.jobs = f.jobs;
    o.time_budget_s = f.time_budget_s;
    o.patience = f.patience;
    o.timeout_s = f.timeout_s;
    o.min_time_ms = f.min_time_ms;
    o.default_model = !f.no_default_model;
    o.faults = parse_faults(f.test_fault);
    auto printer = std::make_shared<tuner::ProgressPrinter>(tuner::progress_mode(f.quiet, stderr), stderr);
    if (!f.quiet) o.log = [printer](const std::string &line) { printer->message(line); };
    // On a terminal the live line replaces the per-trial lines.
    o.trial_lines = tuner::progress_mode(f.quiet, stderr) == tuner::ProgressMode::Lines;
    o.progress = [printer](const tuner::TuneProgress &p) { printer->update(p); };
    return o;
}

namespace {

struct TuneArgs {
    Common common;
    std::unique_ptr<TuneFlags> flags;
    std::string op, shape;
    bool json_out = false;
    bool force = false;
    std::string variants;  // contention levels, e.g. "0.5,1"; empty: no variants
    tuner::VariantOptions variant_tuning;  // --variant-* (the levels come from `variants`)
    std::vector<std::string> cold;  // inputs timed cold (tuner/ColdInputs.h)
};

// What the run did, for --json: the search, why it stopped, memory, and every trial in order.
nlohmann::json run_json(const tuner::TuneResult &r) {
    nlohmann::json j;
    j["search"] = r.search;
    j["stop_reason"] = r.stop_reason;
    j["legal_size"] = r.legal_size;
    j["measured"] = r.measured;
    j["reused"] = r.reused;
    j["failed"] = r.failed;
    j["worker_restarts"] = r.worker_restarts;
    j["retimed"] = r.retimed;
    j["final_held"] = r.final_held;
    j["final_other_load"] = r.final_other_load;
    j["prior_model"] = r.prior_model;
    j["reference_ms"] = r.reference_ms;
    j["elapsed_s"] = r.elapsed_s;
    j["peak_rss_kb"] = r.peak_rss_kb;
    j["worker_peak_rss_kb"] = r.worker_peak_rss_kb;
    j["trials"] = nlohmann::json::array();
    for (const auto &t : r.trials) {
        nlohmann::json tj;
        tj["point"] = t.point.summary();
        tj["status"] = t.result.status;
        tj["gflops"] = t.result.gflops;
        tj["time_ms"] = t.result.timing.median_ms;
        tj["spread"] = t.result.timing.spread;
        tj["reused"] = t.reused;
        tj["retimed"] = t.retimed;
        if (!t.result.ok()) tj["error"] = t.result.error.substr(0, 300);
        j["trials"].push_back(tj);
    }
    return j;
}

// The variants of one run: as JSON (the quiet winner's record with "variants"), or a table.
void print_variants(const tuner::VariantRun &run, bool json_out) {
    if (json_out) {
        nlohmann::json j = record_json(run.quiet, "tuned");
        j["run"] = run_json(run.tune);
        j["variants"] = variants_json(run.variants);
        j["finalists"] = run.finalists;
        j["finalist_medians_ms"] = run.medians;
        j["quiet_finalists"] = run.quiet_finalists;
        nlohmann::json searched = nlohmann::json::array();
        for (const auto &level : run.searched) {
            nlohmann::json items = nlohmann::json::array();
            for (const tuner::SearchedCandidate &c : level) {
                items.push_back({{"point", c.point.summary()}, {"status", c.status}, {"time_ms", c.time_ms},
                                 {"ratio_to_quiet_winner", c.ratio}, {"dram_mb", c.dram_mb}});
            }
            searched.push_back(items);
        }
        j["searched"] = searched;
        std::cout << j.dump(2) << "\n";
        return;
    }
    print_table({run.quiet});
    std::printf("%-8s %-36s %10s %10s  %s\n", "level", "load", "time_ms", "quiet_ms", "schedule");
    for (const db::VariantRecord &v : run.variants) {
        std::printf("%-8.2f %-36s %10.4f %10.4f  %s\n", v.level, v.load.c_str(), v.time_ms, v.quiet_time_ms,
                    SchedulePoint::from_json(nlohmann::json::parse(v.schedule_json)).summary().c_str());
    }
}

void add_tune(CLI::App &app) {
    auto a = std::make_shared<TuneArgs>();
    auto *cmd = app.add_subcommand("tune", "tune one op at one shape and store the winner in the cache");
    cmd->add_option("--op", a->op, "op name (a file ops/<name>.op)")->required();
    cmd->add_option("--shape", a->shape, "shape, e.g. M=512,N=512,K=512")->required();
    a->flags = std::make_unique<TuneFlags>(cmd);
    cmd->add_flag("--json", a->json_out, "print the result (and the run's trials) as JSON");
    cmd->add_flag("--force", a->force, "tune again even when the cache has this key");
    cmd->add_option("--variants", a->variants,
                    "also tune variants under memory-bandwidth contention at these levels (load threads x "
                    "intensity, e.g. 0.5,1); the quiet winner is variant 0");
    add_variant_tuning_options(cmd, a->variant_tuning);
    cmd->add_option("--cold", a->cold,
                    "inputs flushed from the caches before every timed call, as a model's weights come from "
                    "memory (e.g. --cold weight,bias); the winner is cached under the target key with :cold")
        ->delimiter(',');
    add_common_options(cmd, a->common, true);
    add_signing_key_option(cmd, a->common.signing_key);
    cmd->callback([a] {
        OpLibrary lib = OpLibrary::standard(a->common.ops_dirs);
        Target t = load_target(a->common.target);
        set_threads(threads_of(a->common, t));
        // Fail on a bad op, shape or flag before the database is touched.
        ComputeDef def = lib.load(a->op);
        BoundShape shape = bind_shape(def, a->shape);
        tuner::TuneOptions o = tune_options(*a->flags, a->common, t);
        for (const std::string &name : a->cold) {
            bool input = false;
            for (const TensorDecl *in : def.inputs()) input |= in->name == name;
            user_check(input) << "--cold " << name << ": op '" << def.name << "' has no input '" << name << "'";
        }
        o.cold_inputs = a->cold;
        user_check(o.cold_inputs.empty() || a->variants.empty()) << "--cold and --variants cannot be combined";
        if (!a->variants.empty()) {
            tuner::VariantOptions vo = a->variant_tuning;
            vo.levels = tuner::parse_contention_levels(a->variants, "--variants");
            vo.default_model = o.default_model;
            auto cache = db::open_kernel_cache(a->common.db_path, db::OpenMode::ReadWrite);
            cache->set_signing_key(signing_key_of(a->common.signing_key));
            tuner::VariantRun run = tuner::tune_variants(def, shape, t, o, vo, *cache, a->common.db_path);
            print_variants(run, a->json_out);
            return;
        }
        auto cache = db::open_kernel_cache(a->common.db_path, db::OpenMode::ReadWrite);
        cache->set_signing_key(signing_key_of(a->common.signing_key));
        bool cached = false;
        tuner::TuneResult run;
        db::KernelRecord r = tuner::tune_into_cache(def, shape, t, o, *cache, a->force, &cached, &run);
        if (a->json_out) {
            nlohmann::json j = record_json(r, cached ? "cached" : "tuned");
            if (!cached) j["run"] = run_json(run);
            std::cout << j.dump(2) << "\n";
        } else {
            if (cached) std::cout << "already in the cache (use --force to tune again)\n";
            print_table({r});
        }
    });
}

}  // namespace

void add_tune_commands(CLI::App &app) { add_tune(app); }

}  // namespace opgen::cli
