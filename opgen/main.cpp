// The opgen command: parses arguments and connects the libraries (opgen_core, tuner, costmodel,
// db). It holds no logic of its own beyond turning results into text; every user error ends as one
// `error: ...` line and a non-zero exit.
#include "costmodel/CostModel.h"
#include "db/KernelCache.h"
#include "opgen/Emit.h"
#include "opgen/OpLibrary.h"
#include "opgen/StageGraph.h"
#include "tuner/Tuner.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace {

using namespace opgen;
using nlohmann::json;

struct Common {
    std::vector<std::string> ops_dirs;
    std::string target = "host";
    std::string db_path = "opgen.db";
    int threads = 0;
};

int threads_of(const Common &c, const Target &t) { return c.threads > 0 ? c.threads : t.cores; }

// The Halide runtime reads its thread count once, at its first parallel loop.
void set_threads(int threads) { setenv("HL_NUM_THREADS", std::to_string(threads).c_str(), 1); }

json record_json(const db::KernelRecord &r, const std::string &answer) {
    json j;
    j["answer"] = answer;
    j["op"] = r.key.op_name;
    j["shape"] = r.key.shape;
    j["dtype"] = r.key.dtype;
    j["target"] = r.key.target;
    j["op_hash"] = r.key.op_hash;
    j["halide_version"] = r.key.halide_version;
    j["tuner_version"] = r.key.tuner_version;
    j["schedule"] = json::parse(r.schedule_json);
    j["schedule_source"] = r.schedule_source;
    j["time_ms"] = r.time_ms;
    j["gflops"] = r.gflops;
    j["default_time_ms"] = r.default_time_ms;
    j["speedup_over_default"] = r.time_ms > 0 ? r.default_time_ms / r.time_ms : 0.0;
    j["verified"] = r.verified;
    j["trials"] = r.trials;
    j["created_at"] = r.created_at;
    return j;
}

std::string fmt(double v, int precision = 2) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(precision) << v;
    return s.str();
}

struct TuneArgs {
    std::string op, shape;
    int trials = 24;
    uint64_t seed = 1;
    bool quiet = false;
    bool json_out = false;
    bool force = false;
};

// Tunes one (op, shape) into the cache; returns the stored record. Shared by tune and batch.
db::KernelRecord tune_one(const Common &c, const OpLibrary &lib, db::KernelCache &cache, const TuneArgs &a,
                          bool *skipped) {
    ComputeDef def = lib.load(a.op);
    BoundShape shape = bind_shape(def, a.shape);
    Target target = load_target(c.target);
    user_check(target.measurable) << "target '" << target.name << "' cannot be measured on this machine; use 'opgen space' to inspect its legal space";
    int threads = threads_of(c, target);
    db::KernelKey key = tuner::kernel_key(def, shape, target, threads);
    if (skipped) *skipped = false;
    if (!a.force) {
        if (auto hit = cache.lookup(key)) {
            if (skipped) *skipped = true;
            return *hit;
        }
    }
    tuner::TuneOptions o;
    o.trials = a.trials;
    o.threads = threads;
    o.seed = a.seed;
    if (!a.quiet) o.log = [](const std::string &line) { std::cerr << line << "\n"; };
    tuner::TuneResult r = tuner::tune(def, shape, target, o, &cache, &key);
    user_check(r.found) << "op '" << def.name << "' at " << shape.canonical << ": no candidate produced a correct result";
    db::KernelRecord rec;
    rec.key = key;
    rec.schedule_json = r.best.to_json().dump();
    rec.schedule_source = r.schedule_source;
    rec.time_ms = r.best_result.timing.median_ms;
    rec.gflops = r.best_result.gflops;
    rec.default_time_ms = r.default_result.ok() ? r.default_result.timing.median_ms : 0;
    rec.verified = true;
    rec.trials = int64_t(r.trials.size());
    cache.put_kernel(rec);
    return cache.lookup(key).value_or(rec);
}

void print_table(const std::vector<db::KernelRecord> &rows) {
    std::printf("%-16s %-28s %10s %9s %11s %9s %7s\n", "op", "shape", "time_ms", "GFLOP/s", "default_ms", "speedup", "trials");
    for (const auto &r : rows) {
        std::printf("%-16s %-28s %10s %9s %11s %8sx %7lld\n", r.key.op_name.c_str(), r.key.shape.c_str(),
                    fmt(r.time_ms, 3).c_str(), fmt(r.gflops, 1).c_str(), fmt(r.default_time_ms, 2).c_str(),
                    fmt(r.time_ms > 0 ? r.default_time_ms / r.time_ms : 0, 1).c_str(), static_cast<long long>(r.trials));
    }
}

void print_space(const ComputeDef &def, const BoundShape &shape, const Target &target, int threads) {
    tuner::TilingSpace s = tuner::make_tiling_space(def, shape, target, threads);
    std::cout << "op " << def.name << " at " << shape.canonical << " on " << target.name << "\n\nstage graph:\n";
    for (size_t i = 0; i < s.graph.stages.size(); i++) {
        const Stage &st = s.graph.stages[i];
        std::cout << "  " << std::left << std::setw(14) << st.name << " " << std::setw(9) << stage_kind_name(st.kind)
                  << " " << std::setw(5) << st.buffer << " " << std::setw(12) << (st.primitive.empty() ? "-" : st.primitive)
                  << " loops(";
        for (size_t v = 0; v < st.loop_vars.size(); v++) std::cout << (v ? "," : "") << st.loop_vars[v];
        std::cout << ")" << (st.producer >= 0 ? "  <- " + s.graph.stages[size_t(st.producer)].name : "") << "\n";
    }
    std::cout << "\ngroups (tensor@buffer: stages, lead first; tiling axes):\n";
    for (const auto &g : s.groups) {
        std::cout << "  " << g.tensor << "@" << g.buffer << ": ";
        for (size_t i = 0; i < g.stages.size(); i++) std::cout << (i ? ", " : "") << s.graph.stages[size_t(g.stages[i])].name;
        std::cout << "; axes(";
        for (size_t v = 0; v < g.axes.size(); v++) std::cout << (v ? "," : "") << g.axes[v];
        std::cout << ")\n";
    }
    std::cout << "\noptions:\n";
    for (const auto &a : s.axes) {
        std::cout << "  axis " << a.var << " (extent " << a.extent << "): reg {";
        for (size_t i = 0; i < a.regs.size(); i++) std::cout << (i ? "," : "") << a.regs[i];
        std::cout << "} tile {";
        for (size_t i = 0; i < a.tiles.size(); i++) std::cout << (i ? "," : "") << a.tiles[i];
        std::cout << "}\n";
    }
    for (const auto &r : s.reduce) {
        std::cout << "  reduce " << r.var << " (extent " << r.extent << "): block {";
        for (size_t i = 0; i < r.blocks.size(); i++) std::cout << (i ? "," : "") << r.blocks[i];
        std::cout << "}\n";
    }
    std::cout << "  outer orders " << s.orders.size() << ", parallel choices " << s.parallel_choices.size()
              << ", packing choices " << s.pack_choices.size() << ", vector width " << s.vector_width << "\n";
    std::cout << "\nbuffers:";
    for (const auto &b : target.buffers) std::cout << " " << b.name << "=" << (b.capacity ? std::to_string(b.capacity) : "unbounded");
    std::cout << "\nlegal space: " << s.legal.size() << " of " << s.total_points << " points\n";
}

}  // namespace

int main(int argc, char **argv) {
    CLI::App app{"opgen: generates and tunes tensor-operator kernels and serves them from a shape-keyed cache"};
    app.require_subcommand(1);
    Common c;
    auto add_common = [&](CLI::App *cmd, bool with_db) {
        cmd->add_option("--ops-dir", c.ops_dirs, "extra folder of .op files (also OPGEN_OPS_PATH)");
        cmd->add_option("--target", c.target, "target name or JSON file (default: host)");
        cmd->add_option("--threads", c.threads, "cores a kernel may use (default: all)")->check(CLI::Range(1, 1024));
        if (with_db) cmd->add_option("--db", c.db_path, "kernel cache file (default: opgen.db)");
    };

    TuneArgs ta;
    auto *tune = app.add_subcommand("tune", "tune one op at one shape and store the winner in the cache");
    tune->add_option("--op", ta.op, "op name (a file ops/<name>.op)")->required();
    tune->add_option("--shape", ta.shape, "shape, e.g. M=512,N=512,K=512")->required();
    tune->add_option("--trials", ta.trials, "candidates to measure")->check(CLI::Range(1, 100000));
    tune->add_option("--seed", ta.seed, "seed of every random choice");
    tune->add_flag("--quiet", ta.quiet, "print only the result");
    tune->add_flag("--json", ta.json_out, "print the result as JSON");
    tune->add_flag("--force", ta.force, "tune again even when the cache has this key");
    add_common(tune, true);

    std::string q_op, q_shape;
    auto *query = app.add_subcommand("query", "print the cached kernel for an op and shape as JSON");
    query->add_option("--op", q_op, "op name")->required();
    query->add_option("--shape", q_shape, "shape, e.g. M=512,N=512,K=512")->required();
    add_common(query, true);

    std::string manifest;
    auto *batch = app.add_subcommand("batch", "tune every entry of a manifest (incremental: cached keys are skipped)");
    batch->add_option("manifest", manifest, "JSON manifest: {\"entries\": [{\"op\": ..., \"shapes\": [...]}]}")->required();
    batch->add_option("--trials", ta.trials, "candidates to measure per entry")->check(CLI::Range(1, 100000));
    batch->add_option("--seed", ta.seed, "seed of every random choice");
    batch->add_flag("--quiet", ta.quiet, "no progress lines");
    add_common(batch, true);

    auto *ops = app.add_subcommand("ops", "list and show operators");
    ops->require_subcommand(1);
    auto *ops_list = ops->add_subcommand("list", "list every op found");
    std::string show_op, show_shape;
    auto *ops_show = ops->add_subcommand("show", "show an op's parameters, tensors and statements");
    ops_show->add_option("op", show_op, "op name")->required();
    ops_show->add_option("--shape", show_shape, "also give FLOPs and bytes at this shape");
    add_common(ops_list, false);
    add_common(ops_show, false);

    std::string s_op, s_shape;
    auto *space = app.add_subcommand("space", "print the stage graph, groups, options and legal-space size");
    space->add_option("--op", s_op, "op name")->required();
    space->add_option("--shape", s_shape, "shape")->required();
    add_common(space, false);

    std::string e_op, e_shape, e_out, e_name, e_point;
    bool e_default = false;
    auto *emit = app.add_subcommand("emit", "write a kernel: generator source, static library + header, C source, .stmt");
    emit->add_option("--op", e_op, "op name")->required();
    emit->add_option("--shape", e_shape, "shape")->required();
    emit->add_option("--out", e_out, "output folder (created when missing)")->required();
    emit->add_option("--name", e_name, "kernel function name (default: <op>_kernel)");
    auto *e_point_opt = emit->add_option("--point", e_point, "a schedule point as a JSON file (default: the cache's winner)");
    emit->add_flag("--default-schedule", e_default, "Halide's default schedule instead of the cache's winner")->excludes(e_point_opt);
    add_common(emit, true);

    std::string t_name = "host";
    auto *target_cmd = app.add_subcommand("target", "targets");
    target_cmd->require_subcommand(1);
    auto *target_show = target_cmd->add_subcommand("show", "print a target (default: the detected host)");
    target_show->add_option("name", t_name, "target name or JSON file");
    auto *target_list = target_cmd->add_subcommand("list", "list the bundled targets");

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp &e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp &e) {
        return app.exit(e);
    } catch (const CLI::ParseError &e) {
        std::cerr << "error: " << e.what() << "\n";
        return 2;
    }

    try {
        OpLibrary lib = OpLibrary::standard(c.ops_dirs);
        if (*tune) {
            Target t = load_target(c.target);
            set_threads(threads_of(c, t));
            // Fail on a bad op or shape before the database is touched.
            ComputeDef def = lib.load(ta.op);
            bind_shape(def, ta.shape);
            auto cache = db::open_kernel_cache(c.db_path, db::OpenMode::ReadWrite);
            bool skipped = false;
            db::KernelRecord r = tune_one(c, lib, *cache, ta, &skipped);
            if (ta.json_out) {
                std::cout << record_json(r, skipped ? "cached" : "tuned").dump(2) << "\n";
            } else {
                if (skipped) std::cout << "already in the cache (use --force to tune again)\n";
                print_table({r});
            }
            return 0;
        }
        if (*query) {
            ComputeDef def = lib.load(q_op);
            BoundShape shape = bind_shape(def, q_shape);
            Target t = load_target(c.target);
            auto cache = db::open_kernel_cache(c.db_path, db::OpenMode::ReadOnly);
            db::KernelKey key = tuner::kernel_key(def, shape, t, threads_of(c, t));
            auto hit = cache->lookup(key);
            user_check(hit.has_value()) << "no kernel for op '" << def.name << "' at " << shape.canonical << " on target "
                                        << key.target << " in " << c.db_path;
            std::cout << record_json(*hit, "exact").dump(2) << "\n";
            return 0;
        }
        if (*batch) {
            std::ifstream in(manifest);
            user_check(in.good()) << "cannot read manifest '" << manifest << "'";
            json m;
            try {
                m = json::parse(in);
            } catch (const json::exception &e) {
                user_check(false) << "manifest '" << manifest << "': " << e.what();
            }
            user_check(m.is_object() && m.contains("entries") && m["entries"].is_array())
                << "manifest '" << manifest << "': expected an object with an array \"entries\"";
            std::vector<std::pair<std::string, std::string>> work;
            for (size_t i = 0; i < m["entries"].size(); i++) {
                const json &e = m["entries"][i];
                std::string where = "manifest '" + manifest + "' entry " + std::to_string(i);
                user_check(e.is_object() && e.contains("op") && e["op"].is_string()) << where << ": field \"op\" must be a string";
                user_check(e.contains("shapes") && e["shapes"].is_array() && !e["shapes"].empty())
                    << where << ": field \"shapes\" must be a non-empty array of shape strings";
                ComputeDef def = lib.load(e["op"].get<std::string>());
                for (const auto &s : e["shapes"]) {
                    user_check(s.is_string()) << where << ": every shape must be a string like \"M=512,N=512,K=512\"";
                    bind_shape(def, s.get<std::string>());  // validate every entry before tuning any
                    work.emplace_back(def.name, s.get<std::string>());
                }
            }
            Target t = load_target(c.target);
            set_threads(threads_of(c, t));
            auto cache = db::open_kernel_cache(c.db_path, db::OpenMode::ReadWrite);
            std::vector<db::KernelRecord> rows;
            for (size_t i = 0; i < work.size(); i++) {
                if (!ta.quiet) std::cerr << "[" << i + 1 << "/" << work.size() << "] " << work[i].first << " " << work[i].second << "\n";
                TuneArgs a = ta;
                a.op = work[i].first;
                a.shape = work[i].second;
                bool skipped = false;
                rows.push_back(tune_one(c, lib, *cache, a, &skipped));
                if (skipped && !ta.quiet) std::cerr << "  cached, skipped\n";
            }
            print_table(rows);
            return 0;
        }
        if (*emit) {
            ComputeDef def = lib.load(e_op);
            BoundShape shape = bind_shape(def, e_shape);
            Target t = load_target(c.target);
            std::optional<SchedulePoint> point;
            if (!e_point.empty()) {
                std::ifstream in(e_point);
                user_check(in.good()) << "cannot read schedule point '" << e_point << "'";
                try {
                    point = SchedulePoint::from_json(json::parse(in));
                } catch (const json::exception &e) {
                    user_check(false) << "schedule point '" << e_point << "': " << e.what();
                }
            } else if (!e_default) {
                auto cache = db::open_kernel_cache(c.db_path, db::OpenMode::ReadOnly);
                db::KernelKey key = tuner::kernel_key(def, shape, t, threads_of(c, t));
                auto hit = cache->lookup(key);
                user_check(hit.has_value()) << "no kernel for op '" << def.name << "' at " << shape.canonical << " on target "
                                            << key.target << " in " << c.db_path << " (tune it first, or pass --point or --default-schedule)";
                point = SchedulePoint::from_json(json::parse(hit->schedule_json));
            }
            for (const auto &f : emit_kernel(def, shape, point, t, e_out, e_name.empty() ? def.name + "_kernel" : e_name)) {
                std::cout << f << "\n";
            }
            return 0;
        }
        if (*ops_list) {
            for (const auto &n : lib.list()) {
                ComputeDef def = lib.load(n);
                std::string first = def.doc.substr(0, def.doc.find('\n'));
                std::cout << std::left << std::setw(20) << n << " " << first << "\n";
            }
            return 0;
        }
        if (*ops_show) {
            ComputeDef def = lib.load(show_op);
            std::cout << "op " << def.name << "  (" << def.filename << ", hash " << definition_hash(def.source) << ")\n";
            if (!def.doc.empty()) std::cout << def.doc << "\n";
            std::cout << "\n" << def.source.substr(def.source.find("op " + def.name));
            if (!show_shape.empty()) {
                BoundShape s = bind_shape(def, show_shape);
                std::cout << "\nat " << s.canonical << ": " << flop_count(def, s) << " FLOPs, " << min_bytes_moved(def, s)
                          << " bytes moved at least\n";
            }
            return 0;
        }
        if (*space) {
            ComputeDef def = lib.load(s_op);
            BoundShape shape = bind_shape(def, s_shape);
            Target t = load_target(c.target);
            print_space(def, shape, t, threads_of(c, t));
            return 0;
        }
        if (*target_show) {
            std::cout << load_target(t_name).to_json().dump(2) << "\n";
            return 0;
        }
        if (*target_list) {
            std::cout << "host\n";
            for (const auto &n : bundled_target_names()) std::cout << n << "\n";
            return 0;
        }
    } catch (const UserError &e) {
        std::cerr << "error: " << e.what() << "\n";
        return 1;
    } catch (const db::DbError &e) {
        std::cerr << "error: " << e.what() << "\n";
        return 1;
    } catch (const costmodel::ModelError &e) {
        std::cerr << "error: " << e.what() << "\n";
        return 1;
    } catch (const std::exception &e) {
        std::cerr << "error: internal: " << e.what() << "\n";
        return 3;
    }
    return 0;
}
