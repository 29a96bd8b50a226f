// tune: one op at one shape, tuned into the kernel cache.
#include "opgen/OpLibrary.h"
#include "opgen/cli/Cli.h"
#include "tuner/Tuner.h"

#include <iostream>
#include <memory>

namespace opgen::cli {

TuneFlags::TuneFlags(CLI::App *cmd) {
    cmd->add_option("--trials", trials, "candidates to measure")->check(CLI::Range(1, 100000));
    cmd->add_option("--seed", seed, "seed of every random choice");
    cmd->add_flag("--quiet", quiet, "no progress lines");
}

tuner::TuneOptions tune_options(const TuneFlags &f, const Common &c, const Target &t) {
    tuner::TuneOptions o;
    o.trials = f.trials;
    o.threads = threads_of(c, t);
    o.seed = f.seed;
    if (!f.quiet) o.log = [](const std::string &line) { std::cerr << line << "\n"; };
    return o;
}

namespace {

struct TuneArgs {
    Common common;
    std::unique_ptr<TuneFlags> flags;
    std::string op, shape;
    bool json_out = false;
    bool force = false;
};

void add_tune(CLI::App &app) {
    auto a = std::make_shared<TuneArgs>();
    auto *cmd = app.add_subcommand("tune", "tune one op at one shape and store the winner in the cache");
    cmd->add_option("--op", a->op, "op name (a file ops/<name>.op)")->required();
    cmd->add_option("--shape", a->shape, "shape, e.g. M=512,N=512,K=512")->required();
    a->flags = std::make_unique<TuneFlags>(cmd);
    cmd->add_flag("--json", a->json_out, "print the result as JSON");
    cmd->add_flag("--force", a->force, "tune again even when the cache has this key");
    add_common_options(cmd, a->common, true);
    cmd->callback([a] {
        OpLibrary lib = OpLibrary::standard(a->common.ops_dirs);
        Target t = load_target(a->common.target);
        set_threads(threads_of(a->common, t));
        // Fail on a bad op or shape before the database is touched.
        ComputeDef def = lib.load(a->op);
        BoundShape shape = bind_shape(def, a->shape);
        auto cache = db::open_kernel_cache(a->common.db_path, db::OpenMode::ReadWrite);
        bool cached = false;
        tuner::TuneOptions o = tune_options(*a->flags, a->common, t);
        db::KernelRecord r = tuner::tune_into_cache(def, shape, t, o, *cache, a->force, &cached);
        if (a->json_out) {
            std::cout << record_json(r, cached ? "cached" : "tuned").dump(2) << "\n";
        } else {
            if (cached) std::cout << "already in the cache (use --force to tune again)\n";
            print_table({r});
        }
    });
}

}  // namespace

void add_tune_commands(CLI::App &app) { add_tune(app); }

}  // namespace opgen::cli
