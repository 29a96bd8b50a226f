// emit: a kernel's artifacts (generator source, static library + header, C source, .stmt) from
// the cache's winner, a given schedule point, or Halide's default schedule; with --generic, the
// shape-generic kernel of the schedule beside the exact one, for inspection.
#include "codegen/Emit.h"
#include "core/OpLibrary.h"
#include "cli/Cli.h"
#include "tuner/Tuner.h"

#include <iostream>
#include <memory>
#include <optional>

namespace opgen::cli {

void add_emit_command(CLI::App &app) {
    struct Args {
        Common common;
        std::string op, shape, out, name, point;
        bool default_schedule = false;
        bool generic = false;
    };
    auto a = std::make_shared<Args>();
    auto *cmd = app.add_subcommand("emit", "write a kernel: generator source, static library + header, C source, .stmt");
    cmd->add_option("--op", a->op, "op name")->required();
    cmd->add_option("--shape", a->shape, "shape")->required();
    cmd->add_option("--out", a->out, "output folder (created when missing)")->required();
    cmd->add_option("--name", a->name, "kernel function name (default: <op>_kernel)");
    auto *point_opt = cmd->add_option("--point", a->point, "a schedule point as a JSON file (default: the cache's winner)");
    cmd->add_flag("--default-schedule", a->default_schedule, "Halide's default schedule instead of the cache's winner")
        ->excludes(point_opt);
    cmd->add_flag("--generic", a->generic,
                  "instead: the shape-generic kernel of the schedule (.stmt, .s) beside the exact one's .s")
        ->excludes("--default-schedule");
    add_common_options(cmd, a->common, true);
    cmd->callback([a] {
        OpLibrary lib = OpLibrary::standard(a->common.ops_dirs);
        ComputeDef def = lib.load(a->op);
        BoundShape shape = bind_shape(def, a->shape);
        Target t = load_target(a->common.target);
        std::optional<SchedulePoint> point;
        if (!a->point.empty()) {
            point = SchedulePoint::read_file(a->point);
        } else if (!a->default_schedule) {
            auto cache = db::open_kernel_cache(a->common.db_path, db::OpenMode::ReadOnly);
            db::KernelKey key = opgen::kernel_key(def, shape, t, threads_of(a->common, t));
            auto hit = cache->lookup(key);
            user_check(hit.has_value()) << "no kernel for op '" << def.name << "' at " << shape.canonical << " on target "
                                        << key.target << " in " << a->common.db_path
                                        << " (tune it first, or pass --point or --default-schedule)";
            point = SchedulePoint::from_json(nlohmann::json::parse(hit->schedule_json));
        }
        std::string name = a->name.empty() ? def.name + "_kernel" : a->name;
        std::vector<std::string> written = a->generic ? emit_generic_inspection(def, shape, *point, t, a->out, name)
                                                      : emit_kernel(def, shape, point, t, a->out, name);
        for (const auto &f : written) std::cout << f << "\n";
    });
}

}  // namespace opgen::cli
