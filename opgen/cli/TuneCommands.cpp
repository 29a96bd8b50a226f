// tune, query and batch: the commands that fill and read the kernel cache.
#include "opgen/OpLibrary.h"
#include "opgen/cli/Cli.h"
#include "tuner/Tuner.h"

#include <fstream>
#include <iostream>
#include <memory>

namespace opgen::cli {

namespace {

using nlohmann::json;

struct TuneArgs {
    Common common;
    std::string op, shape;
    int trials = 24;
    uint64_t seed = 1;
    bool quiet = false;
    bool json_out = false;
    bool force = false;
};

// Tunes one (op, shape) into the cache unless it is there (or --force); returns the stored record
// and sets *cached when the cache already had it.
db::KernelRecord tune_one(const TuneArgs &a, const OpLibrary &lib, db::KernelCache &cache,
                          const std::string &op, const std::string &shape_text, bool *cached) {
    ComputeDef def = lib.load(op);
    BoundShape shape = bind_shape(def, shape_text);
    Target target = load_target(a.common.target);
    user_check(target.measurable) << "target '" << target.name
                                  << "' cannot be measured on this machine; use 'opgen space' to inspect its legal space";
    int threads = threads_of(a.common, target);
    db::KernelKey key = tuner::kernel_key(def, shape, target, threads);
    *cached = false;
    if (!a.force) {
        if (auto hit = cache.lookup(key)) {
            *cached = true;
            return *hit;
        }
    }
    tuner::TuneOptions o;
    o.trials = a.trials;
    o.threads = threads;
    o.seed = a.seed;
    if (!a.quiet) o.log = [](const std::string &line) { std::cerr << line << "\n"; };
    tuner::TuneResult r = tuner::tune(def, shape, target, o, &cache, &key);
    user_check(r.found) << "op '" << def.name << "' at " << shape.canonical
                        << ": no candidate produced a correct result";
    db::KernelRecord rec = tuner::winner_record(key, r);
    cache.put_kernel(rec);
    return cache.lookup(key).value_or(rec);
}

void add_tune(CLI::App &app) {
    auto a = std::make_shared<TuneArgs>();
    auto *cmd = app.add_subcommand("tune", "tune one op at one shape and store the winner in the cache");
    cmd->add_option("--op", a->op, "op name (a file ops/<name>.op)")->required();
    cmd->add_option("--shape", a->shape, "shape, e.g. M=512,N=512,K=512")->required();
    cmd->add_option("--trials", a->trials, "candidates to measure")->check(CLI::Range(1, 100000));
    cmd->add_option("--seed", a->seed, "seed of every random choice");
    cmd->add_flag("--quiet", a->quiet, "print only the result");
    cmd->add_flag("--json", a->json_out, "print the result as JSON");
    cmd->add_flag("--force", a->force, "tune again even when the cache has this key");
    add_common_options(cmd, a->common, true);
    cmd->callback([a] {
        OpLibrary lib = OpLibrary::standard(a->common.ops_dirs);
        Target t = load_target(a->common.target);
        set_threads(threads_of(a->common, t));
        // Fail on a bad op or shape before the database is touched.
        ComputeDef def = lib.load(a->op);
        bind_shape(def, a->shape);
        auto cache = db::open_kernel_cache(a->common.db_path, db::OpenMode::ReadWrite);
        bool cached = false;
        db::KernelRecord r = tune_one(*a, lib, *cache, a->op, a->shape, &cached);
        if (a->json_out) {
            std::cout << record_json(r, cached ? "cached" : "tuned").dump(2) << "\n";
        } else {
            if (cached) std::cout << "already in the cache (use --force to tune again)\n";
            print_table({r});
        }
    });
}

void add_query(CLI::App &app) {
    struct Args {
        Common common;
        std::string op, shape;
    };
    auto a = std::make_shared<Args>();
    auto *cmd = app.add_subcommand("query", "print the cached kernel for an op and shape as JSON");
    cmd->add_option("--op", a->op, "op name")->required();
    cmd->add_option("--shape", a->shape, "shape, e.g. M=512,N=512,K=512")->required();
    add_common_options(cmd, a->common, true);
    cmd->callback([a] {
        OpLibrary lib = OpLibrary::standard(a->common.ops_dirs);
        ComputeDef def = lib.load(a->op);
        BoundShape shape = bind_shape(def, a->shape);
        Target t = load_target(a->common.target);
        auto cache = db::open_kernel_cache(a->common.db_path, db::OpenMode::ReadOnly);
        db::KernelKey key = tuner::kernel_key(def, shape, t, threads_of(a->common, t));
        auto hit = cache->lookup(key);
        user_check(hit.has_value()) << "no kernel for op '" << def.name << "' at " << shape.canonical
                                    << " on target " << key.target << " in " << a->common.db_path;
        std::cout << record_json(*hit, "exact").dump(2) << "\n";
    });
}

void add_batch(CLI::App &app) {
    auto a = std::make_shared<TuneArgs>();
    auto manifest = std::make_shared<std::string>();
    auto *cmd = app.add_subcommand("batch", "tune every entry of a manifest (incremental: cached keys are skipped)");
    cmd->add_option("manifest", *manifest, "JSON manifest: {\"entries\": [{\"op\": ..., \"shapes\": [...]}]}")
        ->required();
    cmd->add_option("--trials", a->trials, "candidates to measure per entry")->check(CLI::Range(1, 100000));
    cmd->add_option("--seed", a->seed, "seed of every random choice");
    cmd->add_flag("--quiet", a->quiet, "no progress lines");
    add_common_options(cmd, a->common, true);
    cmd->callback([a, manifest] {
        const std::string &path = *manifest;
        OpLibrary lib = OpLibrary::standard(a->common.ops_dirs);
        std::ifstream in(path);
        user_check(in.good()) << "cannot read manifest '" << path << "'";
        json m;
        try {
            m = json::parse(in);
        } catch (const json::exception &e) {
            user_check(false) << "manifest '" << path << "': " << e.what();
        }
        user_check(m.is_object() && m.contains("entries") && m["entries"].is_array())
            << "manifest '" << path << "': expected an object with an array \"entries\"";
        std::vector<std::pair<std::string, std::string>> work;
        for (size_t i = 0; i < m["entries"].size(); i++) {
            const json &e = m["entries"][i];
            std::string where = "manifest '" + path + "' entry " + std::to_string(i);
            user_check(e.is_object() && e.contains("op") && e["op"].is_string())
                << where << ": field \"op\" must be a string";
            user_check(e.contains("shapes") && e["shapes"].is_array() && !e["shapes"].empty())
                << where << ": field \"shapes\" must be a non-empty array of shape strings";
            ComputeDef def = lib.load(e["op"].get<std::string>());
            for (const auto &s : e["shapes"]) {
                user_check(s.is_string()) << where << ": every shape must be a string like \"M=512,N=512,K=512\"";
                bind_shape(def, s.get<std::string>());  // validate every entry before tuning any
                work.emplace_back(def.name, s.get<std::string>());
            }
        }
        Target t = load_target(a->common.target);
        set_threads(threads_of(a->common, t));
        auto cache = db::open_kernel_cache(a->common.db_path, db::OpenMode::ReadWrite);
        std::vector<db::KernelRecord> rows;
        for (size_t i = 0; i < work.size(); i++) {
            if (!a->quiet)
                std::cerr << "[" << i + 1 << "/" << work.size() << "] " << work[i].first << " " << work[i].second << "\n";
            bool cached = false;
            rows.push_back(tune_one(*a, lib, *cache, work[i].first, work[i].second, &cached));
            if (cached && !a->quiet) std::cerr << "  cached, skipped\n";
        }
        print_table(rows);
    });
}

}  // namespace

void add_tune_commands(CLI::App &app) {
    add_tune(app);
    add_query(app);
    add_batch(app);
}

}  // namespace opgen::cli
