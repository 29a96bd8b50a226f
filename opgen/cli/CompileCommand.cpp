// compile: an ONNX model partitioned into fused subgraphs, each an op of the op language, written
// to a folder that `opgen batch` tunes (opgen/onnx/ModelCompile.h). The deployable library is
// future work (issue 21).
#include "opgen/Shape.h"
#include "opgen/cli/Cli.h"
#include "opgen/onnx/ModelCompile.h"
#include "opgen/onnx/ModelReference.h"
#include "opgen/onnx/Npy.h"

#include <chrono>

#include <cstdio>
#include <memory>

namespace opgen::cli {

namespace {

struct CompileArgs {
    std::vector<std::string> ops_dirs;
    std::string model, out;
    std::vector<std::string> dims;
    std::string max_memory;  // "512M"; empty: this machine's memory
    std::string check_with;  // folder of <input>.npy: evaluate the partition with the reference
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
    for (const auto &name : m.graph.inputs) inputs[name] = onnx_import::read_npy(folder + "/" + name + ".npy");
    auto start = std::chrono::steady_clock::now();
    std::map<std::string, HostTensor> outputs = onnx_import::evaluate_compiled_model(m, inputs);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::map<std::string, std::string> files;
    for (const auto &[name, t] : outputs) files["check/" + name + ".npy"] = onnx_import::npy_bytes(t);
    std::printf("check: %zu kernels evaluated by the reference interpreter in %.2f s -> check/\n",
                m.partition.kernels.size(), s);
    return files;
}

void run(const CompileArgs &a) {
    std::map<std::string, int64_t> dims;
    for (const auto &d : a.dims)
        for (const auto &[k, v] : parse_shape_text(d)) {
            user_check(v > 0) << "--dim " << d << ": a dimension must be positive";
            dims[k] = v;
        }
    int64_t max_bytes = a.max_memory.empty() ? onnx_import::physical_memory_bytes() : memory_size(a.max_memory);
    OpLibrary lib = OpLibrary::standard(a.ops_dirs);
    onnx_import::CompiledModel m = onnx_import::compile_model(a.model, dims, lib, max_bytes, !a.check_with.empty());
    std::map<std::string, std::string> extra;
    if (!a.check_with.empty()) extra = reference_outputs(m, a.check_with);
    onnx_import::write_model_dir(m, a.out, extra);

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
    std::printf("tune: opgen batch %s/manifest.json --ops-dir %s/ops\n", a.out.c_str(), a.out.c_str());
}

void add_compile(CLI::App &app) {
    auto a = std::make_shared<CompileArgs>();
    auto *cmd = app.add_subcommand(
        "compile", "partition an ONNX model into fused kernels: a tunable manifest, a graph description, generated ops");
    cmd->add_option("model", a->model, "ONNX model file")->required();
    cmd->add_option("-o,--out", a->out, "folder to write (manifest.json, graph.json, ops/)")->required();
    cmd->add_option("--dim", a->dims, "value of a symbolic dimension, e.g. --dim batch=1 (repeatable)");
    cmd->add_option("--ops-dir", a->ops_dirs, "extra folder of .op files (also OPGEN_OPS_PATH)");
    cmd->add_option("--max-memory", a->max_memory,
                    "refuse a model whose tensors need more, e.g. 512M (default: this machine's memory)");
    cmd->add_option("--check-with", a->check_with,
                    "folder of <input>.npy: evaluate the partitioned model with the reference interpreter and "
                    "write DIR/check/<output>.npy (small models: an interpreter)");
    cmd->callback([a] { run(*a); });
}

}  // namespace

void add_compile_command(CLI::App &app) { add_compile(app); }

}  // namespace opgen::cli
