// ops, space and target: commands that inspect, measure nothing and write nothing.
#include "core/AmxTile.h"
#include "core/OpLibrary.h"
#include "core/StageGraph.h"
#include "cli/Cli.h"
#include "core/TilingSpace.h"

#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

namespace opgen::cli {

namespace {

template <typename T>
std::string joined(const std::vector<T> &v) {
    std::ostringstream s;
    for (size_t i = 0; i < v.size(); i++) s << (i ? "," : "") << v[i];
    return s.str();
}

void print_space(const ComputeDef &def, const BoundShape &shape, const Target &target, int threads,
                 const std::optional<SchedulePoint> &point) {
    opgen::TilingSpace s = opgen::make_tiling_space(def, shape, target, threads);
    std::cout << "op " << def.name << " at " << shape.canonical << " on " << target.name << "\n\nstage graph:\n";
    for (const Stage &st : s.graph.stages) {
        std::cout << "  " << std::left << std::setw(14) << st.name << " " << std::setw(9) << stage_kind_name(st.kind)
                  << " " << std::setw(5) << st.buffer << " " << std::setw(12)
                  << (st.primitive.empty() ? "-" : st.primitive) << " loops(" << joined(st.loop_vars) << ")"
                  << (st.producer >= 0 ? "  <- " + s.graph.stages[size_t(st.producer)].name : "") << "\n";
    }
    // A group's options: those of its tiling axes (the lead's loops).
    auto axis_text = [&](const std::string &var) -> std::string {
        for (const auto &a : s.axes) {
            if (a.var == var) return a.var + " reg{" + joined(a.regs) + "} tile{" + joined(a.tiles) + "}";
        }
        for (const auto &r : s.reduce) {
            if (r.var == var) return r.var + " block{" + joined(r.blocks) + "}";
        }
        return var + " whole";
    };
    std::cout << "\ngroups (tensor@buffer: stages, lead first; tiling axes and their options):\n";
    for (const auto &g : s.groups) {
        std::cout << "  " << g.tensor << "@" << g.buffer << (g.subgroup ? "#" + std::to_string(g.subgroup) : "")
                  << ": ";
        for (size_t i = 0; i < g.stages.size(); i++)
            std::cout << (i ? ", " : "") << s.graph.stages[size_t(g.stages[i])].name;
        if (g.subgroup) std::cout << "  (subgroup: split because the whole group cannot fit " << g.buffer << ")";
        const BufferLevel *b = target.find_buffer(g.buffer);
        if (!b || b->capacity == 0) {
            std::cout << "  (main memory: not tiled)\n";
            continue;
        }
        std::cout << "\n";
        for (const auto &v : g.axes) std::cout << "      " << axis_text(v) << "\n";
    }
    const opgen::KnobChoices &k = s.knobs;
    std::string widths;  // "16, 8, 16 on f": a width on an outer axis names it
    for (size_t v = 0; v < s.vector_widths.size(); v++) {
        widths += (v ? ", " : "") + std::to_string(s.vector_widths[v]);
        if (s.vector_axes[v] != 0) widths += " on " + s.axes[size_t(s.vector_axes[v])].var;
    }
    std::cout << "\nknobs: vector widths {" << widths << "}, " << k.outer_orders.size()
              << " cache-tile loop orders, " << k.tile_orders.size() << " register-tile loop orders, "
              << (k.cores > 1 ? "parallel: the outermost tile loops fused until they reach " + std::to_string(k.cores) +
                                    " cores (and one more), "
                              : std::string("serial, "))
              << k.pack_prefetch.size() << " packing/prefetch choices, unroll {on,off}\n";
    if (k.amx_tiles.size() > 1) {
        std::cout << "AMX tiles: {off,on} on the tilings of a " << opgen::kAmxTileRows << " x " << opgen::kAmxTileColumns
                  << " register tile with the reduction whole (core/AmxTile.h)\n";
    }
    if (k.stage_plans.size() > 1) {
        std::cout << "stage plans: " << k.stage_plans.size() << " (placements of the other statements, exp exact or fast)\n";
    }
    std::cout << "\nbuffers:";
    for (const auto &b : target.buffers)
        std::cout << " " << b.name << "=" << (b.capacity ? std::to_string(b.capacity) : "unbounded")
                  << (b.double_buffered ? "(x2)" : "");
    std::cout << "\nlegal space: " << s.legal.size() << " points (" << s.legal.tilings().size()
              << " legal tilings of " << s.total_tilings << ") of " << s.total_points << "\n";
    if (point) {
        auto fp = footprints(def, shape, target, s.groups, *point);
        std::cout << "\npoint " << point->summary() << ": " << (s.contains(*point) ? "in the legal space" : "NOT in the legal space")
                  << "\n";
        for (const auto &b : target.buffers) {
            if (b.capacity == 0) continue;
            int64_t sum = 0;
            std::string parts;
            for (const auto &f : fp) {
                if (f.buffer != b.name) continue;
                sum += f.bytes;
                parts += (parts.empty() ? "" : " + ") + f.tensor + " " + std::to_string(f.bytes);
            }
            std::cout << "  " << b.name << ": " << (parts.empty() ? "0" : parts) << " = " << sum << " of " << b.capacity
                      << " bytes (" << fixed(100.0 * double(sum) / double(b.capacity), 1) << "%)\n";
        }
    }
}

void add_ops(CLI::App &app) {
    struct Args {
        Common common;
        std::string op, shape;
    };
    auto a = std::make_shared<Args>();
    auto *ops = app.add_subcommand("ops", "list and show operators");
    ops->require_subcommand(1);
    auto *list = ops->add_subcommand("list", "list every op found");
    auto *show = ops->add_subcommand("show", "show an op's parameters, tensors and statements");
    show->add_option("op", a->op, "op name")->required();
    show->add_option("--shape", a->shape, "also give FLOPs and bytes at this shape");
    add_common_options(list, a->common, false);
    add_common_options(show, a->common, false);
    list->callback([a] {
        OpLibrary lib = OpLibrary::standard(a->common.ops_dirs);
        for (const auto &n : lib.list()) {
            ComputeDef def = lib.load(n);
            std::cout << std::left << std::setw(20) << n << " " << def.doc.substr(0, def.doc.find('\n')) << "\n";
        }
    });
    show->callback([a] {
        OpLibrary lib = OpLibrary::standard(a->common.ops_dirs);
        ComputeDef def = lib.load(a->op);
        std::cout << "op " << def.name << "  (" << def.filename << ", hash " << definition_hash(def.source) << ")\n";
        if (!def.doc.empty()) std::cout << def.doc << "\n";
        std::cout << "\n" << def.source.substr(def.source.find("op " + def.name));
        if (!a->shape.empty()) {
            BoundShape s = bind_shape(def, a->shape);
            std::cout << "\nat " << s.canonical << ": " << flop_count(def, s) << " FLOPs, " << min_bytes_moved(def, s)
                      << " bytes moved at least\n";
        }
    });
}

void add_space(CLI::App &app) {
    struct Args {
        Common common;
        std::string op, shape, point;
    };
    auto a = std::make_shared<Args>();
    auto *cmd = app.add_subcommand("space", "print the stage graph, groups, options and legal-space size");
    cmd->add_option("--op", a->op, "op name")->required();
    cmd->add_option("--shape", a->shape, "shape")->required();
    cmd->add_option("--point", a->point, "a schedule point (JSON file): print its footprints per buffer and whether it is legal");
    add_common_options(cmd, a->common, false);
    cmd->callback([a] {
        OpLibrary lib = OpLibrary::standard(a->common.ops_dirs);
        ComputeDef def = lib.load(a->op);
        BoundShape shape = bind_shape(def, a->shape);
        Target t = load_target(a->common.target);
        std::optional<SchedulePoint> point;
        if (!a->point.empty()) point = SchedulePoint::read_file(a->point);
        print_space(def, shape, t, threads_of(a->common, t), point);
    });
}

void add_target(CLI::App &app) {
    auto name = std::make_shared<std::string>("host");
    auto *cmd = app.add_subcommand("target", "targets");
    cmd->require_subcommand(1);
    auto *show = cmd->add_subcommand("show", "print a target (default: the detected host)");
    show->add_option("name", *name, "target name or JSON file");
    auto *list = cmd->add_subcommand("list", "list the bundled targets");
    show->callback([name] { std::cout << load_target(*name).to_json().dump(2) << "\n"; });
    list->callback([] {
        std::cout << "host\n";
        for (const auto &n : bundled_target_names()) std::cout << n << "\n";
    });
}

}  // namespace

void add_info_commands(CLI::App &app) {
    add_ops(app);
    add_space(app);
    add_target(app);
}

}  // namespace opgen::cli
