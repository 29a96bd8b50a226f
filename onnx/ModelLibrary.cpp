#include "onnx/ModelLibrary.h"

#include "store/KernelCache.h"
#include "codegen/CompiledCode.h"
#include "base/Error.h"
#include "core/OpLibrary.h"
#include "core/Schedule.h"
#include "core/Target.h"
#include "onnx/ModelProgram.h"
#include "onnx/ModelRunner.h"
#include "onnx/ModelWeights.h"
#include "tuner/Batch.h"
#include "tuner/ColdInputs.h"
#include "tuner/TrialBudget.h"
#include "codegen/GenericCode.h"
#include "codegen/ObjectCompile.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <unistd.h>

namespace opgen::onnx_import {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// One kernel to compile: an op at a shape, which several subgraphs may share.
struct Distinct {
    const CompiledModel *m = nullptr;  // the model (a specialization's, for dynamic dims)
    size_t kernel = 0;       // the first kernel of this op and shape in it
    std::string function;    // its pipeline's name in the library
    std::string point_json;  // the schedule
    std::string origin;      // "cached", "tuned" or "heuristic"
    double time_ms = 0;      // the cache's time for it; 0 for a heuristic point
    std::string timing;      // how that time was taken: "cold" (weights flushed), "hot"; empty: none
    bool generic = false;    // the op's shape-generic kernel from this shape's schedule (dynamic dims)
    std::string generic_source;  // its op text (DynamicDims.h generic_op_text)
};

// The distinct (op, shape) pairs of `m` in kernel order, added to `out` (`index` maps "op shape" to
// its place there); returns each kernel's function.
std::vector<std::string> add_distinct_kernels(const CompiledModel &m, const std::string &name, std::vector<Distinct> &out,
                                              std::map<std::string, size_t> &index) {
    std::vector<std::string> functions;
    for (size_t k = 0; k < m.partition.kernels.size(); k++) {
        std::string key = m.partition.kernels[k].op + " " + m.canonical[k];
        auto [it, fresh] = index.emplace(key, out.size());
        if (fresh) out.push_back({&m, k, name + "_k" + std::to_string(out.size()), "", "", 0, "", false, ""});
        functions.push_back(out[it->second].function);
    }
    return functions;
}

void say(const DeployOptions &o, const std::string &line) {
    if (o.log) o.log(line);
}

// The op inputs of kernel `k` that are the model's weights: the inputs timed cold.
std::vector<std::string> weight_inputs(const CompiledModel &m, size_t k) {
    std::vector<std::string> out;
    for (const auto &[op_tensor, graph_tensor] : m.partition.kernels[k].args)
        if (m.graph.tensor(graph_tensor).kind == TensorKind::Weight) out.push_back(op_tensor);
    return out;
}

// The keys to look a kernel up under, best first: its cold key when it is timed cold (tuning fills
// that one), then its hot key when nothing will be tuned.
std::vector<std::pair<db::KernelKey, std::string>> lookup_keys(const Distinct &d, const Target &target,
                                                               const DeployOptions &o) {
    const CompiledModel &m = *d.m;
    db::KernelKey hot = opgen::kernel_key(m.defs[d.kernel], m.bounds[d.kernel], target, o.threads);
    if (!o.cold_weights || weight_inputs(m, d.kernel).empty()) return {{hot, "hot"}};
    if (o.tune) return {{tuner::cold_key(hot), "cold"}};
    return {{tuner::cold_key(hot), "cold"}, {hot, "hot"}};
}

// How many kernels of its model run `d`'s op at its shape.
size_t uses_of(const Distinct &d) {
    const CompiledModel &m = *d.m;
    size_t n = 0;
    for (size_t k = 0; k < m.partition.kernels.size(); k++)
        n += m.partition.kernels[k].op == m.partition.kernels[d.kernel].op && m.canonical[k] == m.canonical[d.kernel];
    return n;
}

// Gives each missing task its trials by its estimated share of the model's time
// (tuner/TrialBudget.h); `missing[i]` is `kernels[which[i]]`'s task. Says how the budget went.
void budget_trials(std::vector<opgen::BatchTask> &missing, const std::vector<Distinct> &kernels,
                   const std::vector<size_t> &which, const Target &target, const DeployOptions &o) {
    std::vector<double> weights;
    for (size_t i : which) {
        const Distinct &d = kernels[i];
        weights.push_back(double(uses_of(d)) *
                          tuner::estimated_call_seconds(d.m->defs[d.kernel], d.m->bounds[d.kernel], target, o.threads));
    }
    const std::vector<int> trials = tuner::trials_by_share(weights, o.trials);
    int total = 0, full = 0;
    for (size_t i = 0; i < missing.size(); i++) {
        missing[i].trials = trials[i];
        total += trials[i];
        full += trials[i] == o.trials;
    }
    say(o, "tune: trials by share of the model's estimated time: " + std::to_string(full) + " kernel(s) at " +
               std::to_string(o.trials) + ", " + std::to_string(missing.size() - full) + " at fewer; " +
               std::to_string(total) + " trials in all (--even-trials: " + std::to_string(o.trials * int(missing.size())) +
               ")");
}

// The cache's winners; with `o.tune`, the missing ones are tuned into it first (one batch run,
// generated ops read from `ops_dir`; a model's weights timed cold unless o.cold_weights is off;
// trials by share unless o.even_trials), with a progress line and its ETA before each task.
void cached_points(std::vector<Distinct> &kernels, const DeployOptions &o, const std::string &ops_dir) {
    bool have_cache = fs::exists(o.db_path);
    if (!have_cache && !o.tune) return;
    auto cache = db::open_kernel_cache(o.db_path, o.tune ? db::OpenMode::ReadWrite : db::OpenMode::ReadOnly);
    cache->set_signing_key(o.signing_key);
    Target target = load_target(o.target);
    std::vector<opgen::BatchTask> missing;
    std::vector<size_t> which;
    for (size_t i = 0; i < kernels.size(); i++) {
        const Distinct &d = kernels[i];
        if (cache->lookup(lookup_keys(d, target, o).front().first)) continue;
        const ComputeDef &def = d.m->defs[d.kernel];
        opgen::BatchTask t{0, def.name, d.m->canonical[d.kernel], dtype_name(def.output().dtype), o.target, o.trials, o.seed, {}};
        if (o.cold_weights) t.cold_inputs = weight_inputs(*d.m, d.kernel);
        missing.push_back(t);
        which.push_back(i);
    }
    if (o.tune && !missing.empty()) {
        say(o, "tune: " + std::to_string(missing.size()) + " kernel(s) missing from " + o.db_path + ", " +
                   std::to_string(o.trials) + " trials each" + (o.even_trials ? "" : " at most") +
                   (o.cold_weights ? ", weights timed cold" : ""));
        if (!o.even_trials) budget_trials(missing, kernels, which, target, o);
        std::vector<std::string> dirs = o.ops_dirs;
        dirs.push_back(ops_dir);
        tuner::BatchOptions batch;
        batch.tune = o.tune_options;
        batch.tune.threads = o.threads;
        batch.progress = [&o](const tuner::BatchProgress &p) {
            if (p.current) say(o, "tune: " + tuner::format_batch_progress(p));
        };
        std::vector<tuner::TaskOutcome> out = tuner::run_batch(missing, OpLibrary::standard(dirs), *cache, batch);
        for (const tuner::TaskOutcome &t : out)
            user_check(t.status != tuner::TaskStatus::Failed)
                << "kernel " << t.task.op << " at " << t.task.shape << " could not be tuned: " << t.error;
    }
    for (Distinct &d : kernels) {
        for (const auto &[key, timing] : lookup_keys(d, target, o)) {
            auto hit = cache->lookup(key);
            if (!hit) continue;
            bool tuned = false;
            if (o.tune)
                for (const opgen::BatchTask &t : missing)
                    tuned |= t.op == d.m->defs[d.kernel].name && t.shape == d.m->canonical[d.kernel];
            d.point_json = hit->schedule_json;
            d.origin = tuned ? "tuned" : "cached";
            d.time_ms = hit->time_ms;
            d.timing = timing;
            break;
        }
    }
}

// Every kernel's schedule: the cache's (tuning what is missing) or Halide's heuristic point.
void choose_points(std::vector<Distinct> &kernels, const DeployOptions &o, const std::string &ops_dir) {
    cached_points(kernels, o, ops_dir);
    Target target = load_target(o.target);
    for (Distinct &d : kernels) {
        if (!d.origin.empty()) continue;
        d.point_json = heuristic_point(d.m->defs[d.kernel], d.m->bounds[d.kernel], target).to_json().dump();
        d.origin = "heuristic";
    }
}

std::vector<opgen::ObjectJob> object_jobs(const std::vector<Distinct> &kernels, const DeployOptions &o,
                                          const ScratchFolder &scratch) {
    std::vector<opgen::ObjectJob> jobs;
    opgen::ObjectJob runtime;
    runtime.function = "halide_runtime";
    runtime.path = scratch.file("halide_runtime.o");
    runtime.runtime = true;
    jobs.push_back(runtime);
    for (const Distinct &d : kernels) {
        const ComputeDef &def = d.m->defs[d.kernel];
        jobs.push_back({d.generic ? d.generic_source : def.source, def.filename, d.m->canonical[d.kernel], o.target,
                        d.point_json, d.function, scratch.file(d.function + ".o"), false, d.generic});
    }
    return jobs;
}

std::string read_bytes(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    user_check(in.good() || in.eof()) << "cannot read '" << path << "'";
    return s.str();
}

void write_bytes(const std::string &path, const std::string &bytes) {
    std::ofstream out(path, std::ios::binary);
    out << bytes;
    user_check(out.good()) << "cannot write '" << path << "'";
}

// Objects compiled before, kept in the folder named by $OPGEN_OBJECT_CACHE (unset or empty: no
// cache): a model compiled again, or many models sharing kernels (the conformance suite), compile
// each distinct kernel and Halide's runtime once. An object is filed under a hash of everything its
// worker reads, so a changed op, shape, schedule, target or name is a different file; a worker
// built by another opgen may differ, so the folder is the caller's to clear when opgen changes.
std::string object_cache_dir() {
    const char *dir = std::getenv("OPGEN_OBJECT_CACHE");
    return dir ? dir : "";
}

// The file under `dir` of the object made from `fields`: FNV-1a 64 of them, each ended by a
// separator no text byte is.
std::string cache_file_of(const std::string &dir, const std::vector<std::string> &fields) {
    uint64_t h = 1469598103934665603ull;
    for (const std::string &field : fields) {
        for (unsigned char c : field) h = (h ^ c) * 1099511628211ull;
        h = (h ^ 0xff) * 1099511628211ull;
    }
    char name[32];
    std::snprintf(name, sizeof name, "%016llx.o", static_cast<unsigned long long>(h));
    return (fs::path(dir) / name).string();
}

std::string object_cache_file(const std::string &dir, const opgen::ObjectJob &j) {
    return cache_file_of(dir, {j.op_source, j.shape, j.target, j.point_json, j.function,
                               j.runtime ? "runtime" : "kernel", j.generic ? "generic" : ""});
}

// Copies the cached objects into place; returns the jobs still to compile.
std::vector<opgen::ObjectJob> jobs_not_cached(const std::vector<opgen::ObjectJob> &jobs, const std::string &dir) {
    if (dir.empty()) return jobs;
    std::vector<opgen::ObjectJob> missing;
    for (const opgen::ObjectJob &j : jobs) {
        std::error_code ec;
        fs::copy_file(object_cache_file(dir, j), j.path, fs::copy_options::overwrite_existing, ec);
        if (ec) missing.push_back(j);
    }
    return missing;
}

// Files a freshly compiled object, renamed into place whole so that a concurrent compile never
// reads half an object. A cache that cannot be written is left as it is.
void cache_object(const std::string &object, const std::string &file) {
    std::error_code ec;
    fs::create_directories(fs::path(file).parent_path(), ec);
    const std::string partial = file + "." + std::to_string(::getpid());
    if (fs::copy_file(object, partial, fs::copy_options::overwrite_existing, ec)) fs::rename(partial, file, ec);
    if (ec) fs::remove(partial, ec);
}

void cache_objects(const std::vector<opgen::ObjectJob> &jobs, const std::string &dir) {
    if (dir.empty()) return;
    for (const opgen::ObjectJob &j : jobs) cache_object(j.path, object_cache_file(dir, j));
}

// The runner's object at `object`: its source depends on the model's name alone
// (onnx/ModelRunner.h), so a cache compiles it once per name and compiler.
void compile_runner(const std::string &source, const ScratchFolder &scratch, const std::string &object) {
    const std::string dir = object_cache_dir();
    const std::string cached = dir.empty() ? "" : cache_file_of(dir, {source, c_compiler(), "runner -O2"});
    std::error_code ec;
    if (!cached.empty() && fs::copy_file(cached, object, fs::copy_options::overwrite_existing, ec)) return;
    write_bytes(scratch.file("runner.c"), source);
    run_build_tool({c_compiler(), "-c", "-O2", "-o", object, scratch.file("runner.c")}, scratch.file("runner.log"));
    if (!cached.empty()) cache_object(object, cached);
}

// Whether a kernel's schedule runs on AMX tiles (SchedulePoint::amx_tile, core/AmxTile.h).
bool uses_amx(const std::vector<Distinct> &kernels) {
    return std::any_of(kernels.begin(), kernels.end(), [](const Distinct &d) {
        return SchedulePoint::from_json(nlohmann::json::parse(d.point_json)).amx_tile;
    });
}

// The program compiled beside the kernels, everything archived into lib<name>.a, and the runner
// linked with it; returns the files for DIR.
std::map<std::string, std::string> link_library(const std::string &name, const ModelProgram &program,
                                                const std::vector<opgen::ObjectJob> &jobs,
                                                const ScratchFolder &scratch) {
    write_bytes(scratch.file(name + ".h"), program.header);
    write_bytes(scratch.file(name + ".c"), program.source);
    run_build_tool({c_compiler(), "-c", "-O2", "-fPIC", "-I", scratch.file(""), "-I", OPGEN_HALIDE_RUNTIME_INCLUDE,
                    "-o", scratch.file(name + ".o"), scratch.file(name + ".c")},
                   scratch.file("cc.log"));
    std::vector<std::string> ar = {"ar", "rcs", scratch.file("lib" + name + ".a"), scratch.file(name + ".o")};
    for (const opgen::ObjectJob &j : jobs) ar.push_back(j.path);
    run_build_tool(ar, scratch.file("ar.log"));
    compile_runner(runner_source(name), scratch, scratch.file("runner.o"));
    run_build_tool({c_compiler(), "-o", scratch.file(name + "-runner"), scratch.file("runner.o"),
                    scratch.file("lib" + name + ".a"), "-lpthread", "-ldl", "-lm"},
                   scratch.file("link.log"));
    return {{name + ".h", program.header},
            {"src/" + name + ".c", program.source},
            {"src/runner.c", runner_source(name)},
            {"lib" + name + ".a", read_bytes(scratch.file("lib" + name + ".a"))},
            {name + "-runner", read_bytes(scratch.file(name + "-runner"))}};
}

json deploy_report(const std::string &name, const CompiledModel &m, const BufferPlan &plan,
                   const std::vector<Distinct> &kernels, const opgen::ObjectCompileReport &compile,
                   const DeployOptions &o) {
    json ks = json::array();
    std::map<std::string, int> origins;
    for (const Distinct &d : kernels) {
        origins[d.origin]++;
        ks.push_back({{"function", d.function}, {"op", d.m->partition.kernels[d.kernel].op},
                      {"shape", d.m->canonical[d.kernel]}, {"origin", d.origin}, {"time_ms", d.time_ms}, {"timing", d.timing}});
    }
    return {{"name", name},
            {"library", "lib" + name + ".a"},
            {"header", name + ".h"},
            {"weights", name + ".weights"},
            {"runner", name + "-runner"},
            {"target", o.target},
            {"threads", o.threads},
            {"cold_weights", o.cold_weights},
            {"kernels", m.partition.kernels.size()},
            {"distinct_kernels", ks},
            {"origins", origins},
            {"memory", {{"arena_bytes", plan.arena_bytes},
                        {"intermediate_bytes", plan.intermediate_bytes},
                        {"weight_bytes", plan.weight_bytes},
                        {"io_bytes", plan.io_bytes},
                        {"plan_bytes", plan.arena_bytes + plan.weight_bytes + plan.io_bytes},
                        {"all_tensor_bytes", plan.intermediate_bytes + plan.weight_bytes + plan.io_bytes}}},
            {"compile", {{"workers", compile.workers}, {"wall_s", compile.wall_s}, {"worker_s", compile.job_s}}}};
}

// The generic kernels of the kernels of `d` whose shapes vary, one per op and fixed values, each
// from the schedule of the largest values (the top's distinct kernel); returns the generic
// variant's function per kernel (the top's own where the shape does not vary).
std::vector<std::string> add_generic_kernels(const DynamicModel &d, const std::string &name,
                                             const std::vector<std::string> &top_functions, std::vector<Distinct> &kernels) {
    std::map<std::string, std::string> by_key;
    std::map<std::string, size_t> top_of;
    for (size_t i = 0; i < kernels.size(); i++) top_of[kernels[i].function] = i;
    std::vector<std::string> functions;
    size_t first_generic = kernels.size();
    for (size_t k = 0; k < d.top.partition.kernels.size(); k++) {
        if (!d.varies[k]) {
            functions.push_back(top_functions[k]);
            continue;
        }
        std::string source = generic_op_text(d, k);
        std::string key = source + "\n" + d.top.canonical[k];
        auto [it, fresh] = by_key.emplace(key, "");
        if (fresh) {
            Distinct g = kernels[top_of.at(top_functions[k])];
            g.function = name + "_g" + std::to_string(kernels.size() - first_generic);
            g.origin = "generic";
            g.generic = true;
            g.generic_source = source;
            kernels.push_back(g);
            it->second = g.function;
        }
        functions.push_back(it->second);
    }
    return functions;
}

// The library of `m`'s kernels (`kernels`, their schedules chosen) with the program calling
// `functions` (one list per variant) at `shapes`.
DeployedModel link_model(const std::string &name, const CompiledModel &m, const BufferPlan &plan,
                         const std::vector<Distinct> &kernels, const std::vector<std::vector<std::string>> &functions,
                         const ProgramShapes &shapes, const DeployOptions &o, const ScratchFolder &scratch,
                         const ModelVariants *variants = nullptr) {
    std::vector<opgen::ObjectJob> jobs = object_jobs(kernels, o, scratch);
    say(o, "compile: " + std::to_string(jobs.size()) + " objects (" + std::to_string(kernels.size()) +
               " distinct kernels and the Halide runtime) in " + std::to_string(std::max(1, o.compile_jobs)) +
               " worker process(es)");
    const std::vector<opgen::ObjectJob> missing = jobs_not_cached(jobs, object_cache_dir());
    opgen::ObjectCompileReport compile;
    if (!missing.empty()) compile = opgen::compile_objects(missing, o.compile_jobs);
    cache_objects(missing, object_cache_dir());
    DeployedModel out;
    out.name = name;
    ModelProgram program = model_program(name, m, plan, functions, shapes, uses_amx(kernels), variants);
    out.files = link_library(name, program, jobs, scratch);
    out.files[name + ".weights"] = weights_file_bytes(m, plan);
    out.runner = name + "-runner";
    out.report = deploy_report(name, m, plan, kernels, compile, o);
    if (variants) out.report["variants"] = variants->report;
    return out;
}

// The bandwidth variant sets of `m` (ModelVariants.h), their entry points added to `kernels`.
ModelVariants add_variant_kernels(const CompiledModel &m, const std::vector<std::string> &functions,
                                  std::vector<Distinct> &kernels, const DeployOptions &o) {
    VariantTuneContext ctx{o.db_path, o.signing_key, o.target, o.threads, o.tune_options, o.log};
    // Asking for variants asks for their tuning, with --no-tune too (which is about level 0).
    ModelVariants mv = plan_model_variants(m, functions, o.variants, ctx);
    std::map<std::string, size_t> first;
    for (size_t i = 0; i < kernels.size(); i++) first.emplace(kernels[i].function, i);
    std::set<std::string> added;
    for (size_t k = 0; k < mv.kernels.size(); k++)
        for (const LevelEntry &e : mv.kernels[k]) {
            if (e.function.empty() || !added.insert(e.function).second) continue;
            Distinct d = kernels[first.at(functions[k])];
            d.function = e.function;
            d.point_json = e.point_json;
            d.origin = "variant";
            d.time_ms = 0;  // its times are in deploy.json's "variants"
            d.timing = "hot";
            kernels.push_back(d);
        }
    return mv;
}

std::string library_name(const CompiledModel &m) { return model_identifier(fs::path(m.graph.path).stem().string()); }

// A scratch folder holding the generated ops of `models` (a model's ops are read from there when
// tuning).
void write_generated_ops(const ScratchFolder &scratch, const std::vector<const CompiledModel *> &models) {
    fs::create_directories(scratch.file("ops"));
    for (const CompiledModel *m : models)
        for (const SubgraphKernel &k : m->partition.kernels)
            if (k.generated) write_bytes(scratch.file("ops/" + k.op + ".op"), k.text);
}

json dynamic_report(const DynamicModel &d, const std::vector<Distinct> &kernels) {
    json ranges = json::array(), generic = json::array();
    for (const DimRange &r : d.ranges) ranges.push_back({{"name", r.name}, {"min", r.lo}, {"max", r.hi}});
    for (const Distinct &k : kernels)
        if (k.generic) generic.push_back(k.function);
    return {{"ranges", ranges}, {"specialized", d.points}, {"generic_kernels", generic}};
}

}  // namespace

DeployedModel build_model_library(const CompiledModel &m, const BufferPlan &plan, const DeployOptions &o) {
    ScratchFolder scratch;
    write_generated_ops(scratch, {&m});
    std::vector<Distinct> kernels;
    std::map<std::string, size_t> index;
    std::vector<std::string> functions = add_distinct_kernels(m, library_name(m), kernels, index);
    choose_points(kernels, o, scratch.file("ops"));
    std::optional<ModelVariants> variants;
    if (!o.variants.levels.empty()) variants = add_variant_kernels(m, functions, kernels, o);
    DeployedModel out = link_model(library_name(m), m, plan, kernels, {functions}, static_shapes(m), o, scratch,
                                   variants ? &*variants : nullptr);
    out.files["deploy.json"] = out.report.dump(2) + "\n";
    return out;
}

DeployedModel build_dynamic_library(const DynamicModel &d, const BufferPlan &plan, const DeployOptions &o) {
    ScratchFolder scratch;
    std::vector<const CompiledModel *> models = {&d.top};
    for (const CompiledModel &m : d.specialized) models.push_back(&m);
    write_generated_ops(scratch, models);
    const std::string name = library_name(d.top);
    std::vector<Distinct> kernels;
    std::map<std::string, size_t> index;
    std::vector<std::vector<std::string>> functions;
    for (const CompiledModel &m : d.specialized) functions.push_back(add_distinct_kernels(m, name, kernels, index));
    std::vector<std::string> top = add_distinct_kernels(d.top, name, kernels, index);
    choose_points(kernels, o, scratch.file("ops"));
    functions.push_back(add_generic_kernels(d, name, top, kernels));
    ProgramShapes shapes{d.ranges, d.points, d.arg_dims, d.io_dims};
    DeployedModel out = link_model(name, d.top, plan, kernels, functions, shapes, o, scratch);
    out.report["dynamic"] = dynamic_report(d, kernels);
    out.files["deploy.json"] = out.report.dump(2) + "\n";
    return out;
}

}  // namespace opgen::onnx_import
