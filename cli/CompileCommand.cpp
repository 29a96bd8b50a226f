// compile: an ONNX model partitioned into fused subgraphs, each an op of the op language
// (onnx/ModelCompile.h), and built into a deployable library with its weights and a runner
// (onnx/ModelLibrary.h); `--partition-only` stops at the partition (manifest, graph, ops).
#include "core/Shape.h"
#include "core/Target.h"
#include "cli/Cli.h"
#include "onnx/BufferPlan.h"
#include "onnx/DynamicDims.h"
#include "onnx/ModelCompile.h"
#include "onnx/ModelLibrary.h"
#include "onnx/ModelReference.h"
#include "onnx/Npy.h"
#include "tuner/Variants.h"

#include <chrono>

#include <sys/stat.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <thread>

namespace opgen::cli {

namespace {

struct CompileArgs {
    Common common;
    std::unique_ptr<TuneFlags> flags;
    bool partition_only = false, no_tune = false, nchw = false, no_winograd = false, hot_weights = false, even_trials = false;
    int compile_jobs = 0;  // 0: the machine's cores
    std::string model, out;
    std::vector<std::string> dims;
    std::vector<std::string> specialize;  // NAME=V[,V...] of a ranged --dim
    std::vector<std::string> fixed_inputs;  // NAME=FILE.npy
    std::string max_memory;  // "512M"; empty: this machine's memory
    std::string check_with;  // folder of <input>.npy: evaluate the partition with the reference
    std::string variants;    // contention levels, e.g. "0.5,1"; empty: one schedule per kernel
    double variant_intensity = 10;
    tuner::VariantOptions variant_tuning;  // --variant-* (the levels come from `variants`)
};

// "4096", "64K", "512M", "2G" as bytes; UserError otherwise.
int64_t memory_size(const std::string &text) {
    size_t used = 0;
    long long v = -1;
    try {
        v = std::stoll(text, &used);
    } catch (const std::exception &) {
    }
    std::string unit = text.substr(used);
    int shift = unit.empty() ? 0 : unit == "K" ? 10 : unit == "M" ? 20 : unit == "G" ? 30 : -1;
    user_check(v > 0 && shift >= 0 && v < (1LL << (62 - shift)))
        << "--max-memory '" << text << "': expected a positive size in bytes, optionally with K, M or G";
    return int64_t(v) << shift;
}

// The partitioned model evaluated by the op language's reference interpreter on the inputs in
// `folder`: check/<output>.npy files to write with the rest of DIR.
std::map<std::string, std::string> reference_outputs(const onnx_import::CompiledModel &m, const std::string &folder) {
    std::map<std::string, HostTensor> inputs;
    for (const auto &name : m.graph.inputs)
        inputs[name] = onnx_import::host_tensor(onnx_import::read_npy_array(folder + "/" + name + ".npy"));
    auto start = std::chrono::steady_clock::now();
    std::map<std::string, HostTensor> outputs = onnx_import::evaluate_compiled_model(m, inputs);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::map<std::string, std::string> files;
    for (const auto &[name, t] : outputs) files["check/" + name + ".npy"] = onnx_import::npy_bytes(t);
    std::printf("check: %zu kernels evaluated by the reference interpreter in %.2f s -> check/\n",
                m.partition.kernels.size(), s);
    return files;
}

onnx_import::DeployOptions deploy_options(const CompileArgs &a) {
    Target target = load_target(a.common.target);
    onnx_import::DeployOptions o;
    o.db_path = a.common.db_path;
    o.signing_key = signing_key_of(a.common.signing_key);
    o.target = a.common.target;
    o.ops_dirs = a.common.ops_dirs;
    o.threads = threads_of(a.common, target);
    set_threads(o.threads);
    o.tune = !a.no_tune;
    o.cold_weights = !a.hot_weights;
    o.trials = a.flags->trials;
    o.even_trials = a.even_trials;
    o.seed = a.flags->seed;
    o.tune_options = tune_options(*a.flags, a.common, target);
    o.compile_jobs = a.compile_jobs > 0 ? a.compile_jobs : int(std::max(1u, std::thread::hardware_concurrency()));
    o.log = [](const std::string &line) { std::printf("%s\n", line.c_str()); };
    if (!a.variants.empty()) {
        o.variants.levels = tuner::parse_contention_levels(a.variants, "--variants");
        o.variants.max_intensity = a.variant_intensity;
        o.variants.tuning = a.variant_tuning;
        o.variants.tuning.default_model = o.tune_options.default_model;
    }
    return o;
}

std::string mib(int64_t bytes) { return fixed(double(bytes) / (1 << 20)) + " MiB"; }

void print_partition(const onnx_import::CompiledModel &m, const CompileArgs &a) {
    nlohmann::json g = onnx_import::compiled_graph(m);
    const auto &s = g["summary"];
    std::printf("model %s: %zu nodes -> %zu kernels (%zu with generated ops, %zu distinct), %zu views; "
                "%.2f GFLOP; weights %.1f MiB, activations %.1f MiB -> %s\n",
                a.model.c_str(), s["nodes"].get<size_t>(), s["kernels"].get<size_t>(),
                s["kernels_with_generated_ops"].get<size_t>(), s["generated_ops"].get<size_t>(),
                s["views"].get<size_t>(), s["gflop"].get<double>(),
                double(s["weight_bytes"].get<int64_t>()) / (1 << 20),
                double(s["activation_bytes"].get<int64_t>()) / (1 << 20), a.out.c_str());
    nlohmann::json manifest = onnx_import::compiled_manifest(m);
    for (const auto &e : manifest["entries"])
        std::printf("  %-34s %s\n", e["op"].get<std::string>().c_str(), e["comment"].get<std::string>().c_str());
}

void print_deployed(const nlohmann::json &r, const std::string &out) {
    const auto &mem = r["memory"];
    std::printf("memory: plan %s (arena %s for %s of intermediates, weights %s, inputs and outputs %s); "
                "all tensors in their own buffers %s\n",
                mib(mem["plan_bytes"].get<int64_t>()).c_str(), mib(mem["arena_bytes"].get<int64_t>()).c_str(), mib(mem["intermediate_bytes"].get<int64_t>()).c_str(),
                mib(mem["weight_bytes"].get<int64_t>()).c_str(), mib(mem["io_bytes"].get<int64_t>()).c_str(), mib(mem["all_tensor_bytes"].get<int64_t>()).c_str());
    std::string origins;
    for (const auto &[origin, n] : r["origins"].items()) origins += " " + std::to_string(n.get<int>()) + " " + origin;
    const auto &c = r["compile"];
    std::printf("kernels: %zu distinct:%s; compiled in %d worker(s): %.2f s wall, %.2f s of worker time\n",
                r["distinct_kernels"].size(), origins.c_str(), c["workers"].get<int>(), c["wall_s"].get<double>(),
                c["worker_s"].get<double>());
    std::string name = r["name"];
    std::printf("library: %s/lib%s.a, %s/%s.h, weights %s/%s.weights\nrun: opgen run %s --input FILE.npy\n",
                out.c_str(), name.c_str(), out.c_str(), name.c_str(), out.c_str(), name.c_str(), out.c_str());
}

// --fix-input NAME=FILE.npy values, read and checked for their form (the model checks the rest).
onnx_import::FixedInputs fixed_inputs(const std::vector<std::string> &specs) {
    onnx_import::FixedInputs fixed;
    for (const std::string &spec : specs) {
        const size_t eq = spec.find('=');
        user_check(eq != std::string::npos && eq > 0 && eq + 1 < spec.size())
            << "--fix-input '" << spec << "': expected NAME=FILE.npy";
        const std::string name = spec.substr(0, eq);
        user_check(!fixed.count(name)) << "--fix-input " << name << ": given twice";
        fixed[name] = onnx_import::read_npy_array(spec.substr(eq + 1));
    }
    return fixed;
}

// The --dim values: fixed ones into `dims`, ranges (NAME=LO..HI) with their --specialize values
// returned.
std::vector<onnx_import::DimRange> parse_dims(const CompileArgs &a, std::map<std::string, int64_t> &dims) {
    std::vector<onnx_import::DimRange> ranges;
    for (const auto &d : a.dims) {
        if (auto r = onnx_import::parse_dim_range(d)) {
            ranges.push_back(*r);
            continue;
        }
        for (const auto &[k, v] : parse_shape_text(d)) {
            user_check(v > 0) << "--dim " << d << ": a dimension must be positive";
            dims[k] = v;
        }
    }
    for (const auto &s : a.specialize) onnx_import::add_specializations(ranges, s);
    return ranges;
}

void print_ranges(const onnx_import::DynamicModel &d) {
    for (const auto &r : d.ranges) {
        std::string at;
        for (int64_t v : r.specialized) at += (at.empty() ? "" : ",") + std::to_string(v);
        std::printf("dynamic: %s=%lld..%lld, kernels tuned at %s=%s, shape-generic kernels at every other value\n",
                    r.name.c_str(), (long long)r.lo, (long long)r.hi, r.name.c_str(), at.c_str());
    }
    size_t varying = 0;
    for (bool v : d.varies) varying += v;
    std::printf("dynamic: %zu of %zu kernels vary with the ranges\n", varying, d.varies.size());
}

// After DIR is written: the batch command that tunes a partition, or the built library's runner
// made executable and its figures.
void report_written(const CompileArgs &a, const std::optional<onnx_import::DeployedModel> &deployed) {
    if (!deployed) {
        std::printf("tune: opgen batch %s/manifest.json --ops-dir %s/ops\n", a.out.c_str(), a.out.c_str());
        return;
    }
    std::string runner = a.out + "/" + deployed->runner;
    user_check(::chmod(runner.c_str(), 0755) == 0) << "cannot make '" << runner << "' executable";
    print_deployed(deployed->report, a.out);
}

// A library taking the ranges' values at call time (onnx/DynamicDims.h).
void run_dynamic(const CompileArgs &a, const std::map<std::string, int64_t> &dims,
                 const std::vector<onnx_import::DimRange> &ranges, int64_t max_bytes, const OpLibrary &lib) {
    user_check(a.check_with.empty()) << "--check-with: not with a ranged --dim (give each dim one value)";
    user_check(a.variants.empty()) << "--variants: not with a ranged --dim (give each dim one value)";
    onnx_import::DynamicModel d = onnx_import::compile_dynamic_model(a.model, dims, ranges, lib, max_bytes, !a.nchw,
                                                                     fixed_inputs(a.fixed_inputs));
    print_partition(d.top, a);
    print_ranges(d);
    // The manifest lists the kernels of every specialization, so `opgen batch` tunes them all.
    std::vector<const onnx_import::CompiledModel *> specialized;
    for (const auto &m : d.specialized) specialized.push_back(&m);
    std::optional<onnx_import::DeployedModel> deployed;
    if (!a.partition_only) deployed = onnx_import::build_dynamic_library(d, onnx_import::plan_buffers(d.top), deploy_options(a));
    onnx_import::write_model_dir(d.top, a.out, deployed ? deployed->files : std::map<std::string, std::string>{},
                                 specialized);
    report_written(a, deployed);
}

// Winograd's transforms do not split across cores yet (docs/results.md: ResNet-50 1.29x ONNX
// Runtime at 2 threads with them, 1.18x without; 0.95x against 1.02x at 1), so by default only a
// one-thread library takes them.
bool winograd(const CompileArgs &a) {
    return !a.no_winograd && threads_of(a.common, load_target(a.common.target)) == 1;
}

void run(const CompileArgs &a) {
    // A bad level list fails before the model is read.
    if (!a.variants.empty()) tuner::parse_contention_levels(a.variants, "--variants");
    std::map<std::string, int64_t> dims;
    std::vector<onnx_import::DimRange> ranges = parse_dims(a, dims);
    int64_t max_bytes = a.max_memory.empty() ? onnx_import::physical_memory_bytes() : memory_size(a.max_memory);
    OpLibrary lib = OpLibrary::standard(a.common.ops_dirs);
    if (!ranges.empty()) return run_dynamic(a, dims, ranges, max_bytes, lib);
    user_check(a.specialize.empty()) << "--specialize: needs a ranged --dim NAME=LO..HI";
    bool weights = !a.partition_only || !a.check_with.empty();
    onnx_import::CompiledModel m =
        onnx_import::compile_model(a.model, dims, lib, max_bytes, weights, {!a.nchw, winograd(a)},
                                   fixed_inputs(a.fixed_inputs));
    print_partition(m, a);
    std::map<std::string, std::string> extra;
    if (!a.check_with.empty()) extra = reference_outputs(m, a.check_with);
    std::optional<onnx_import::DeployedModel> deployed;
    if (!a.partition_only) {
        deployed = onnx_import::build_model_library(m, onnx_import::plan_buffers(m), deploy_options(a));
        extra.insert(deployed->files.begin(), deployed->files.end());
    }
    onnx_import::write_model_dir(m, a.out, extra);
    report_written(a, deployed);
}

void add_compile(CLI::App &app) {
    auto a = std::make_shared<CompileArgs>();
    auto *cmd = app.add_subcommand(
        "compile", "compile an ONNX model into a deployable library: fused kernels from the cache (missing ones "
                   "tuned), weights, a buffer plan and a runner");
    cmd->add_option("model", a->model, "ONNX model file")->required();
    cmd->add_option("-o,--out", a->out,
                    "folder to write (library, header, weights, runner; manifest.json, graph.json, ops/)")
        ->required();
    cmd->add_option("--dim", a->dims,
                    "value of a symbolic dimension, e.g. --dim batch=1, or its range, e.g. --dim seq=1..512: the "
                    "library then takes the value at call time (repeatable)");
    cmd->add_option("--specialize", a->specialize,
                    "NAME=V[,V...]: values of a ranged --dim that get kernels tuned for exactly them (default: its "
                    "largest; other values run shape-generic kernels)");
    cmd->add_option("--fix-input", a->fixed_inputs,
                    "NAME=FILE.npy: compile with input NAME fixed to that value, a constant of the library, which "
                    "no longer takes it (a shape, axes or sizes input; repeatable)");
    add_common_options(cmd, a->common, true);
    add_signing_key_option(cmd, a->common.signing_key);
    a->flags = std::make_unique<TuneFlags>(cmd);
    cmd->add_flag("--partition-only", a->partition_only,
                  "stop after partitioning: manifest.json, graph.json and ops/, no library");
    cmd->add_flag("--no-tune", a->no_tune,
                  "kernels missing from the cache get Halide's heuristic schedule point instead of being tuned");
    cmd->add_flag("--hot-weights", a->hot_weights,
                  "tune and look kernels up with their weights hot in the caches (default: weights flushed before "
                  "every timed call, as the model's other layers evict them)");
    cmd->add_flag("--even-trials", a->even_trials,
                  "give every missing kernel --trials (default: kernels under a quarter of the mean share of the "
                  "model's estimated time get a quarter of them)");
    cmd->add_flag("--nchw", a->nchw,
                  "keep activations in ONNX's NCHW layout (default: channel-blocked nChw16c between convolutions)");
    cmd->add_flag("--no-winograd", a->no_winograd,
                  "run the 3x3 convolutions directly (default at --threads 1: one-image, stride-1 3x3s of even size "
                  "as Winograd F(2x2, 3x3): an input transform, 16 products, an output transform)");
    cmd->add_option("--compile-jobs", a->compile_jobs, "compile worker processes (default: the core count)")
        ->check(CLI::Range(1, 256));
    cmd->add_option("--max-memory", a->max_memory,
                    "refuse a model whose tensors need more, e.g. 512M (default: this machine's memory)");
    cmd->add_option("--variants", a->variants,
                    "LEVELS, e.g. 0.5,1: build the memory-bound kernels' variants for these memory-bandwidth "
                    "contention levels (load threads x intensity) into the library, which switches the whole "
                    "pipeline's set by how far its kernels' times drift from their quiet times")
        ->check([](const std::string &text) { return text.empty() ? "no contention levels given (e.g. 0.5,1)" : ""; });
    cmd->add_option("--variant-intensity", a->variant_intensity,
                    "kernels under this many FLOPs per compulsory byte get variants (default 10)")
        ->check(CLI::Range(0.0, 1e9));
    add_variant_tuning_options(cmd, a->variant_tuning);
    cmd->add_option("--check-with", a->check_with,
                    "folder of <input>.npy: evaluate the partitioned model with the reference interpreter and "
                    "write DIR/check/<output>.npy (small models: an interpreter)");
    cmd->callback([a] { run(*a); });
}

}  // namespace

void add_compile_command(CLI::App &app) { add_compile(app); }

}  // namespace opgen::cli
