// batch: tune every entry of a manifest into the kernel cache.
#include "opgen/OpLibrary.h"
#include "opgen/cli/Cli.h"
#include "tuner/Tuner.h"

#include <fstream>
#include <iostream>
#include <memory>

namespace opgen::cli {

namespace {

using nlohmann::json;

void add_batch(CLI::App &app) {
    struct Args {
        Common common;
        std::unique_ptr<TuneFlags> flags;
    };
    auto a = std::make_shared<Args>();
    auto manifest = std::make_shared<std::string>();
    auto *cmd = app.add_subcommand("batch", "tune every entry of a manifest (incremental: cached keys are skipped)");
    cmd->add_option("manifest", *manifest, "JSON manifest: {\"entries\": [{\"op\": ..., \"shapes\": [...]}]}")
        ->required();
    a->flags = std::make_unique<TuneFlags>(cmd);
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
        tuner::TuneOptions o = tune_options(*a->flags, a->common, t);
        auto cache = db::open_kernel_cache(a->common.db_path, db::OpenMode::ReadWrite);
        std::vector<db::KernelRecord> rows;
        for (size_t i = 0; i < work.size(); i++) {
            if (!a->flags->quiet)
                std::cerr << "[" << i + 1 << "/" << work.size() << "] " << work[i].first << " " << work[i].second << "\n";
            bool cached = false;
            ComputeDef def = lib.load(work[i].first);
            rows.push_back(tuner::tune_into_cache(def, bind_shape(def, work[i].second), t, o, *cache, false, &cached));
            if (cached && !a->flags->quiet) std::cerr << "  cached, skipped\n";
        }
        print_table(rows);
    });
}

}  // namespace

void add_batch_commands(CLI::App &app) { add_batch(app); }

}  // namespace opgen::cli
