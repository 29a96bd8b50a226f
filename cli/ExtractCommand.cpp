// extract: an ONNX model's kernels as a batch manifest (onnx/OnnxExtract.h).
#include "core/Shape.h"
#include "cli/Cli.h"
#include "onnx/OnnxExtract.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

namespace opgen::cli {

namespace {

struct ExtractArgs {
    std::vector<std::string> ops_dirs;
    std::string model, out;
    std::vector<std::string> dims;
};

void run(const ExtractArgs &a) {
    std::map<std::string, int64_t> dims;
    for (const auto &d : a.dims)
        for (const auto &[k, v] : parse_shape_text(d)) {
            user_check(v > 0) << "--dim " << d << ": a dimension must be positive";
            dims[k] = v;
        }
    OpLibrary lib = OpLibrary::standard(a.ops_dirs);
    onnx_import::Extraction x = onnx_import::extract_onnx(a.model, lib, dims);
    std::string unsupported;
    for (const auto &[key, u] : x.unsupported) unsupported += "\n  " + key.first + " x" + std::to_string(u.count) + ": " + key.second;
    user_check(!x.kernels.empty()) << "model '" << a.model << "': no node maps to an opgen op; unsupported:" << unsupported;
    nlohmann::json m = onnx_import::extraction_manifest(x);
    // Written whole or not at all.
    write_file_whole(a.out, m.dump(2) + "\n", "manifest");

    size_t shapes = 0;
    for (const auto &e : m["entries"]) shapes += e["shapes"].size();
    std::printf("model %s: %lld nodes (opset %lld); %zu supported -> %s: %zu entries, %zu distinct shapes\n",
                a.model.c_str(), static_cast<long long>(x.nodes), static_cast<long long>(x.opset), x.kernels.size(),
                a.out.c_str(), m["entries"].size(), shapes);
    for (const auto &e : m["entries"])
        std::printf("  %-18s %s\n", e["op"].get<std::string>().c_str(), e["comment"].get<std::string>().c_str());
    if (x.unsupported.empty()) return;
    std::printf("unsupported:\n");
    for (const auto &[key, u] : x.unsupported) {
        std::string names;
        for (const auto &n : u.nodes) names += (names.empty() ? "" : ", ") + n;
        std::printf("  %-18s %4lld  %s (e.g. %s)\n", key.first.c_str(), static_cast<long long>(u.count),
                    key.second.c_str(), names.c_str());
    }
}

void add_extract(CLI::App &app) {
    auto a = std::make_shared<ExtractArgs>();
    auto *cmd = app.add_subcommand("extract", "list an ONNX model's kernels as a batch manifest");
    cmd->add_option("model", a->model, "ONNX model file")->required();
    cmd->add_option("-o,--out", a->out, "manifest to write")->required();
    cmd->add_option("--dim", a->dims, "value of a symbolic dimension, e.g. --dim batch=1 (repeatable)");
    cmd->add_option("--ops-dir", a->ops_dirs, "extra folder of .op files (also OPGEN_OPS_PATH)");
    cmd->callback([a] { run(*a); });
}

}  // namespace

void add_extract_command(CLI::App &app) { add_extract(app); }

}  // namespace opgen::cli
