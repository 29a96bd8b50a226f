// query: the cached kernel of an op at a shape, as JSON.
#include "opgen/OpLibrary.h"
#include "opgen/cli/Cli.h"
#include "tuner/Tuner.h"

#include <iostream>
#include <memory>

namespace opgen::cli {

namespace {

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

}  // namespace

void add_query_commands(CLI::App &app) { add_query(app); }

}  // namespace opgen::cli
