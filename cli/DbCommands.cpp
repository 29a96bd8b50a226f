// db: whole-file operations on kernel caches: stats, merge (shards of a batch, caches of several
// machines), export as JSON. The work is in store/CacheFiles.h; this file only parses arguments.
#include "store/CacheFiles.h"
#include "store/KernelCache.h"
#include "core/OpLibrary.h"
#include "cli/Cli.h"
#include "codegen/CodeStore.h"
#include "tuner/GenericTiming.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

namespace opgen::cli {

namespace {

void add_stats(CLI::App *db_cmd) {
    struct Args {
        std::string db_path = "opgen.db";
        bool json = false;
    };
    auto a = std::make_shared<Args>();
    auto *cmd = db_cmd->add_subcommand("stats", "count kernels, measurements and tuning runs per target and op");
    cmd->add_option("--db", a->db_path, "kernel cache file (default: opgen.db)");
    cmd->add_flag("--json", a->json, "print JSON");
    cmd->callback([a] {
        db::CacheStats stats = db::open_kernel_cache(a->db_path, db::OpenMode::ReadOnly)->stats();
        std::vector<db::KernelCount> counts = db::count_kernels(a->db_path);
        if (a->json) {
            nlohmann::json j = {{"db", a->db_path},
                                {"schema_version", stats.schema_version},
                                {"kernels", stats.kernels},
                                {"measurements", stats.measurements},
                                {"tuning_runs", stats.tuning_runs},
                                {"variants", stats.variants},
                                {"kernels_with_code", stats.kernels_with_code},
                                {"generic_code", stats.generic_code},
                                {"ops", stats.ops},
                                {"targets", stats.targets}};
            j["by_target_and_op"] = nlohmann::json::array();
            for (const auto &c : counts) {
                j["by_target_and_op"].push_back({{"target", c.target},
                                                 {"op", c.op_name},
                                                 {"kernels", c.kernels},
                                                 {"measurements", c.measurements},
                                                 {"tuning_runs", c.tuning_runs}});
            }
            std::cout << j.dump(2) << "\n";
            return;
        }
        std::printf("%s: schema version %d, %lld kernels (%lld with code, %lld generic kernels), %lld measurements, "
                    "%lld tuning runs, %lld variants, %lld ops, %lld targets\n",
                    a->db_path.c_str(), stats.schema_version, static_cast<long long>(stats.kernels),
                    static_cast<long long>(stats.kernels_with_code), static_cast<long long>(stats.generic_code),
                    static_cast<long long>(stats.measurements), static_cast<long long>(stats.tuning_runs),
                    static_cast<long long>(stats.variants), static_cast<long long>(stats.ops),
                    static_cast<long long>(stats.targets));
        std::printf("%-32s %-20s %9s %13s %12s\n", "target", "op", "kernels", "measurements", "tuning runs");
        for (const auto &c : counts) {
            std::printf("%-32s %-20s %9lld %13lld %12lld\n", c.target.c_str(), c.op_name.c_str(),
                        static_cast<long long>(c.kernels), static_cast<long long>(c.measurements),
                        static_cast<long long>(c.tuning_runs));
        }
    });
}

void add_merge(CLI::App *db_cmd) {
    struct Args {
        std::vector<std::string> inputs;
        std::string output, key;
    };
    auto a = std::make_shared<Args>();
    auto *cmd = db_cmd->add_subcommand(
        "merge", "merge caches into a new one: the best kernel per key, every measurement kept, signatures kept");
    cmd->add_option("inputs", a->inputs, "input cache files")->required();
    cmd->add_option("-o,--output", a->output, "the new cache file (must not exist)")->required();
    add_signing_key_option(cmd, a->key);
    cmd->callback([a] {
        std::optional<db::SigningKey> key = signing_key_of(a->key);  // a bad key fails before any write
        db::MergeReport r = db::merge_kernel_caches(a->inputs, a->output);
        if (key) {
            // Signed rows keep their signer; code that came in unsigned is vouched for by this key.
            db::CodeSigningReport s = db::open_kernel_cache(a->output, db::OpenMode::ReadWrite)->sign_code_rows(*key, true);
            std::printf("%s: signed %lld unsigned code row(s), kept %lld signed ones\n", a->output.c_str(),
                        static_cast<long long>(s.signed_rows), static_cast<long long>(s.kept));
        }
        std::printf("%s: %lld kernels (best of %lld from %zu inputs; %lld with code), %lld measurements, "
                    "%lld tuning runs, %lld variants, %lld models\n",
                    a->output.c_str(), static_cast<long long>(r.kernels), static_cast<long long>(r.kernels_read),
                    a->inputs.size(), static_cast<long long>(r.code), static_cast<long long>(r.measurements),
                    static_cast<long long>(r.tuning_runs), static_cast<long long>(r.variants),
                    static_cast<long long>(r.models));
    });
}

void add_export(CLI::App *db_cmd) {
    struct Args {
        std::string db_path = "opgen.db";
        std::string format = "json";
        std::string output;
        bool measurements = false;
    };
    auto a = std::make_shared<Args>();
    auto *cmd = db_cmd->add_subcommand("export", "write a cache's kernels (and measurements) as JSON");
    cmd->add_option("--db", a->db_path, "kernel cache file (default: opgen.db)");
    cmd->add_option("--format", a->format, "output format (json)")->check(CLI::IsMember({"json"}));
    cmd->add_option("-o,--output", a->output, "output file (default: standard output)");
    cmd->add_flag("--measurements", a->measurements, "include every measurement");
    cmd->callback([a] {
        if (a->output.empty()) {
            db::export_kernel_cache(a->db_path, a->measurements, std::cout);
            return;
        }
        // Written beside the target and renamed into place: no half-written export on failure.
        std::string temporary = a->output + ".partial";
        try {
            std::ofstream out(temporary, std::ios::trunc);
            user_check(out.good()) << "cannot write '" << a->output << "'";
            db::export_kernel_cache(a->db_path, a->measurements, out);
            out.close();
            user_check(out.good()) << "cannot write '" << a->output << "'";
            user_check(std::rename(temporary.c_str(), a->output.c_str()) == 0)
                << "cannot write '" << a->output << "'";
        } catch (...) {
            std::remove(temporary.c_str());
            throw;
        }
    });
}

void add_compile(CLI::App *db_cmd) {
    auto c = std::make_shared<Common>();
    auto *cmd = db_cmd->add_subcommand(
        "compile", "compile the code of every kernel of a target that has none (for opgen_cache to run)");
    cmd->add_option("--ops-dir", c->ops_dirs, "extra folder of .op files (also OPGEN_OPS_PATH)");
    cmd->add_option("--target", c->target, "target name or JSON file (default: host)");
    cmd->add_option("--db", c->db_path, "kernel cache file (default: opgen.db)");
    auto generic = std::make_shared<bool>(false);
    auto ops = std::make_shared<std::vector<std::string>>();
    cmd->add_flag("--generic", *generic,
                  "compile shape-generic kernels from each tuned kernel's schedule, checked against the reference, "
                  "and time each at the op's tuned shapes (at HL_NUM_THREADS threads)");
    cmd->add_option("--op", *ops, "with --generic: only these ops (default: every op)");
    auto key_path = std::make_shared<std::string>();
    add_signing_key_option(cmd, *key_path);
    cmd->callback([c, generic, ops, key_path] {
        user_check(std::ifstream(c->db_path).good()) << "no cache file '" << c->db_path << "'";
        Target t = load_target(c->target);
        std::optional<db::SigningKey> key = signing_key_of(*key_path);
        auto cache = db::open_kernel_cache(c->db_path, db::OpenMode::ReadWrite);
        cache->set_signing_key(key);
        // The timer runs the code this command signs, besides what the environment trusts.
        std::vector<std::string> trusted;
        if (key) trusted.push_back(db::public_key_text(key->public_key));
        if (*generic) {
            opgen::CodeFillReport r = opgen::fill_generic_code(
                *cache, OpLibrary::standard(c->ops_dirs), t, *ops,
                [](const std::string &line) { std::printf("%s\n", line.c_str()); });
            std::printf("%s: compiled the generic code of %d kernel(s) on target '%s', %d failed\n",
                        c->db_path.c_str(), r.compiled, t.name.c_str(), r.failed);
            user_check(r.failed == 0) << r.failed << " generic kernel(s) could not be built; the first: " << r.errors.front();
            // Timed where the truth is known, so that the lookup ranks them by measurement.
            opgen::CodeFillReport timed = tuner::time_generic_code(
                *cache, OpLibrary::standard(c->ops_dirs), t, *ops, trusted, 30,
                [](const std::string &line) { std::printf("%s\n", line.c_str()); });
            std::printf("%s: stored %d timing(s) of generic kernels at tuned shapes, %d failed\n",
                        c->db_path.c_str(), timed.compiled, timed.failed);
            user_check(timed.failed == 0) << timed.failed << " generic kernel timing(s) failed; the first: "
                                          << timed.errors.front();
            return;
        }
        opgen::CodeFillReport r = opgen::fill_missing_code(
            *cache, OpLibrary::standard(c->ops_dirs), t, [](const std::string &line) { std::printf("%s\n", line.c_str()); });
        std::printf("%s: compiled the code of %d kernel(s) on target '%s', %d failed; %d kernel(s) of other "
                    "targets left without code\n",
                    c->db_path.c_str(), r.compiled, t.name.c_str(), r.failed, r.other_targets);
        user_check(r.failed == 0) << r.failed << " kernel(s) could not be compiled; the first: " << r.errors.front();
    });
}

}  // namespace

// Opening a cache read-write migrates it to this build's schema; read-only commands refuse an
// older file rather than change it, and this is the command that does it on purpose.
void add_upgrade(CLI::App *db_cmd) {
    auto path = std::make_shared<std::string>();
    auto *cmd = db_cmd->add_subcommand("upgrade", "migrate a cache file to this build's schema version");
    cmd->add_option("--db", *path, "kernel cache file")->required();
    cmd->callback([path] {
        user_check(std::ifstream(*path).good()) << "no cache file '" << *path << "'";
        db::CacheStats stats = db::open_kernel_cache(*path, db::OpenMode::ReadWrite)->stats();
        std::cout << *path << ": schema version " << stats.schema_version << "\n";
    });
}

void add_db_commands(CLI::App &app) {
    auto *cmd = app.add_subcommand("db", "kernel cache files: stats, merge, export, upgrade, compile");
    cmd->require_subcommand(1);
    add_upgrade(cmd);
    add_stats(cmd);
    add_merge(cmd);
    add_export(cmd);
    add_compile(cmd);
    add_signing_commands(cmd);
}

}  // namespace opgen::cli
