#include "onnx/ModelCompile.h"

#include "base/Error.h"
#include "core/Parser.h"
#include "core/Shape.h"
#include "onnx/ChannelBlocking.h"
#include "onnx/QuantizedLayout.h"
#include "onnx/WeightDequantize.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <unistd.h>

namespace opgen::onnx_import {

namespace fs = std::filesystem;

namespace {

const char *kind_name(TensorKind k) {
    switch (k) {
    case TensorKind::Input: return "input";
    case TensorKind::Weight: return "weight";
    case TensorKind::Output: return "output";
    case TensorKind::Intermediate: break;
    }
    return "intermediate";
}

std::string mib(int64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / (1 << 20));
    return buf;
}

// The model's tensors, refused when they cannot all be held at once.
void check_memory(CompiledModel &m, int64_t max_bytes) {
    std::set<std::string> views, read;
    for (const auto &v : m.partition.views) views.insert(v.tensor), read.insert(v.source);
    for (const SubgraphKernel &k : m.partition.kernels)
        for (const auto &arg : k.args) read.insert(arg.second);
    for (const auto &[name, t] : m.graph.tensors) {
        // A weight no kernel reads (an int8 weight a fused kernel reads packed, its folded float
        // copy) is not in the library.
        if (t.kind == TensorKind::Weight) m.weight_bytes += read.count(name) ? t.bytes() : 0;
        else if (!views.count(name)) m.activation_bytes += t.bytes();
    }
    int64_t total = m.weight_bytes + m.activation_bytes;
    user_check(total <= max_bytes) << "model '" << m.graph.path << "': its tensors need " << mib(total) << " (weights "
                                   << mib(m.weight_bytes) << ", activations " << mib(m.activation_bytes)
                                   << "), more than the " << mib(max_bytes) << " allowed; refused before allocating";
}

// Binds one kernel's op and checks that each op tensor holds as many elements as the graph tensor
// it stands for: a mismatch is a partitioning bug, not the user's.
void bind_kernel(CompiledModel &m, size_t i, const OpLibrary &lib, std::map<std::string, ComputeDef> &bundled) {
    const SubgraphKernel &k = m.partition.kernels[i];
    ComputeDef def;
    if (k.generated) {
        def = parse_compute(k.text, "ops/" + k.op + ".op");
    } else {
        auto it = bundled.find(k.op);
        if (it == bundled.end()) it = bundled.emplace(k.op, lib.load(k.op)).first;
        def = it->second;
    }
    BoundShape bound = bind_shape(def, k.shape);
    // A model whose tensors disagree with its nodes' attributes (a weight of the wrong size for
    // the kernel shape and channels) binds an op that does not fit them: bad input, refused.
    for (const auto &[op_tensor, graph_tensor] : k.args)
        user_check(bound.elements(op_tensor) == m.graph.tensor(graph_tensor).elements())
            << "model '" << m.graph.path << "': tensor '" << graph_tensor << "' has "
            << m.graph.tensor(graph_tensor).elements() << " elements, but its node makes kernel " << i << " ("
            << k.op << " at " << k.shape << ") whose '" << op_tensor << "' has " << bound.elements(op_tensor)
            << ": the model's shapes disagree with its attributes";
    // Each kernel reads and writes the graph's tensors as they are laid out: the op's declared
    // types must be theirs (a partitioner that places a float32 op on int64 tensors is a bug).
    for (const auto &[op_tensor, graph_tensor] : k.args) {
        const TensorDecl *d = def.find_tensor(op_tensor);
        internal_check(d && m.graph.tensor(graph_tensor).dtype() == d->dtype)
            << "kernel " << i << " (" << k.op << ") declares '" << op_tensor << "' "
            << (d ? dtype_name(d->dtype) : "?") << " for tensor '" << graph_tensor << "' of ONNX type "
            << m.graph.tensor(graph_tensor).elem_type;
    }
    m.canonical.push_back(bound.canonical);
    m.flops.push_back(flop_count(def, bound));
    m.defs.push_back(def);
    m.bounds.push_back(bound);
}

// ONNX's name of a TensorProto data type.
std::string onnx_type_name(int elem_type) {
    static const char *names[] = {"undefined", "float32", "uint8", "int8", "uint16", "int16", "int32", "int64",
                                  "string", "bool", "float16", "double", "uint32", "uint64", "complex64",
                                  "complex128", "bfloat16"};
    return elem_type >= 0 && elem_type < 17 ? names[elem_type] : "type " + std::to_string(elem_type);
}

// The library's entry points and its runner take and give the types kernels compute
// (GraphTensor::dtype): any other input or output type is refused, every such tensor named in
// one error.
void refuse_untyped_io(const ModelGraph &g) {
    std::vector<std::string> bad;
    for (const auto *list : {&g.inputs, &g.outputs})
        for (const std::string &t : *list)
            if (!g.tensor(t).dtype())
                bad.push_back(std::string(list == &g.inputs ? "input" : "output") + " '" + t + "' is " +
                              onnx_type_name(g.tensor(t).elem_type));
    if (bad.empty()) return;
    std::string listed;
    for (const std::string &b : bad) listed += (listed.empty() ? "" : ", ") + b;
    user_check(false) << "model '" << g.path << "': " << listed
                      << "; a compiled model takes and gives float32, int32, int64, bool, uint8 and int8 tensors only";
}

// The weights kernels compute at compile time (SubgraphKernel::constants) join the graph's, their
// elements kept when the model's are.
void add_constants(ModelGraph &g, const Partition &p, bool with_weights) {
    for (const SubgraphKernel &k : p.kernels)
        for (GraphTensor t : k.constants) {
            if (!with_weights) t.data.clear();
            g.tensors[t.name] = std::move(t);
        }
}

void write_text(const fs::path &path, const std::string &text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    out.close();
    user_check(out.good()) << "cannot write '" << path.string() << "'";
}

}  // namespace

int64_t physical_memory_bytes() { return int64_t(::sysconf(_SC_PHYS_PAGES)) * int64_t(::sysconf(_SC_PAGE_SIZE)); }

CompiledModel compile_model(const std::string &path, const std::map<std::string, int64_t> &dims,
                            const OpLibrary &lib, int64_t max_bytes, bool with_weights, Layouts layouts,
                            const FixedInputs &fixed) {
    CompiledModel m;
    m.graph = read_model_graph(path, dims, with_weights, fixed);
    refuse_untyped_io(m.graph);
    fold_weight_dequantize(m.graph);
    m.partition = partition_graph(m.graph);
    add_constants(m.graph, m.partition, with_weights);
    check_memory(m, max_bytes);
    if (layouts.blocked) block_channels(m.graph, m.partition, layouts.winograd);
    hold_quantized_nhwc(m.graph, m.partition);
    add_relaid_weights(m.graph, m.partition.relayouts);
    std::map<std::string, ComputeDef> bundled;
    for (size_t i = 0; i < m.partition.kernels.size(); i++) bind_kernel(m, i, lib, bundled);
    return m;
}

nlohmann::json compiled_manifest(const CompiledModel &m, const std::vector<const CompiledModel *> &more) {
    using nlohmann::json;
    json entries = json::array();
    std::map<std::string, size_t> entry_of;
    std::map<std::string, std::set<std::string>> seen;
    std::map<std::string, int> kernels;
    std::vector<const CompiledModel *> models = {&m};
    models.insert(models.end(), more.begin(), more.end());
    for (const CompiledModel *model : models)
        for (size_t i = 0; i < model->partition.kernels.size(); i++) {
            const auto &k = model->partition.kernels[i];
            if (!entry_of.count(k.op)) {
                entry_of[k.op] = entries.size();
                entries.push_back({{"op", k.op}, {"shapes", json::array()}});
            }
            if (model == &m) kernels[k.op]++;
            if (seen[k.op].insert(model->canonical[i]).second)
                entries[entry_of[k.op]]["shapes"].push_back(model->canonical[i]);
        }
    for (auto &[op, i] : entry_of) {
        bool generated = false;
        for (const auto &k : m.partition.kernels) generated |= k.op == op && k.generated;
        entries[i]["comment"] = std::to_string(kernels[op]) + " kernel(s), " + std::to_string(seen[op].size()) +
                                " distinct shape(s); " + (generated ? "generated: ops/" + op + ".op" : "bundled op");
    }
    json j;
    j["name"] = fs::path(m.graph.path).stem().string();
    j["source"] = {{"model", m.graph.path},
                   {"opset", m.graph.opset},
                   {"nodes", m.graph.nodes.size()},
                   {"kernels", m.partition.kernels.size()},
                   {"tune", "opgen batch manifest.json --ops-dir ops (from this folder)"}};
    j["entries"] = entries;
    return j;
}

nlohmann::json compiled_graph(const CompiledModel &m) {
    using nlohmann::json;
    const ModelGraph &g = m.graph;
    json kernels = json::array();
    double total_flops = 0;
    size_t generated = 0;
    for (size_t i = 0; i < m.partition.kernels.size(); i++) {
        const auto &k = m.partition.kernels[i];
        json nodes = json::array(), onnx_ops = json::array(), args = json::object();
        for (int n : k.nodes) {
            nodes.push_back(g.nodes[size_t(n)].name);
            onnx_ops.push_back(g.nodes[size_t(n)].op_type);
        }
        for (const auto &[op_tensor, graph_tensor] : k.args) args[op_tensor] = graph_tensor;
        kernels.push_back({{"index", i},
                           {"kind", k.kind},
                           {"op", k.op},
                           {"op_file", k.generated ? "ops/" + k.op + ".op" : "bundled"},
                           {"shape", m.canonical[i]},
                           {"gflop", m.flops[i] / 1e9},
                           {"nodes", nodes},
                           {"onnx_ops", onnx_ops},
                           {"args", args},
                           {"output", k.args.back().second}});
        total_flops += m.flops[i];
        if (k.generated) generated++;
    }
    std::map<std::string, std::string> view_of;
    for (const auto &v : m.partition.views) view_of[v.tensor] = v.source;
    json tensors = json::array();
    for (const auto &[name, t] : g.tensors) {
        json e = {{"name", name}, {"dims", t.dims}, {"kind", kind_name(t.kind)}, {"bytes", t.bytes()}};
        if (view_of.count(name)) e["view_of"] = view_of[name];
        if (!t.layout.empty()) e["layout"] = t.layout;
        for (const auto &r : m.partition.relayouts)
            if (r.tensor == name) e["relaid_from"] = {{"tensor", r.source}, {"layout", r.layout}};
        tensors.push_back(e);
    }
    std::set<std::string> ops;
    for (const auto &k : m.partition.kernels)
        if (k.generated) ops.insert(k.op);
    json j;
    j["model"] = g.path;
    j["inputs"] = g.inputs;
    j["outputs"] = g.outputs;
    j["kernels"] = kernels;
    j["tensors"] = tensors;
    j["summary"] = {{"nodes", g.nodes.size()},
                    {"kernels", m.partition.kernels.size()},
                    {"kernels_with_generated_ops", generated},
                    {"generated_ops", ops.size()},
                    {"views", m.partition.views.size()},
                    {"gflop", total_flops / 1e9},
                    {"weight_bytes", m.weight_bytes},
                    {"activation_bytes", m.activation_bytes}};
    return j;
}

std::vector<const TensorDecl *> kernel_call_tensors(const CompiledModel &m, size_t k) {
    std::vector<const TensorDecl *> tensors = m.defs[k].inputs();
    tensors.push_back(&m.defs[k].output());
    return tensors;
}

void write_model_dir(const CompiledModel &m, const std::string &dir, const std::map<std::string, std::string> &extra,
                     const std::vector<const CompiledModel *> &specialized) {
    fs::path target(dir);
    std::error_code ec;
    bool replace = fs::exists(target, ec);
    user_check(!replace || fs::exists(target / "graph.json"))
        << "output '" << dir << "' exists and is not an earlier `opgen compile` output (no graph.json); "
        << "remove it or choose another folder";
    std::string suffix = ".tmp-" + std::to_string(::getpid());
    fs::path tmp = target.string() + suffix;
    fs::path old = target.string() + ".old-" + std::to_string(::getpid());
    fs::remove_all(tmp, ec);
    try {
        fs::create_directories(tmp / "ops");
        write_text(tmp / "manifest.json", compiled_manifest(m, specialized).dump(2) + "\n");
        write_text(tmp / "graph.json", compiled_graph(m).dump(2) + "\n");
        for (const auto &k : m.partition.kernels)
            if (k.generated) write_text(tmp / "ops" / (k.op + ".op"), k.text);
        for (const auto &[rel, bytes] : extra) {
            fs::create_directories((tmp / rel).parent_path());
            write_text(tmp / rel, bytes);
        }
        if (replace) fs::rename(target, old);
        fs::rename(tmp, target);
    } catch (const fs::filesystem_error &e) {
        fs::remove_all(tmp, ec);
        if (replace && !fs::exists(target) && fs::exists(old)) fs::rename(old, target, ec);
        user_check(false) << "cannot write '" << dir << "': " << e.code().message();
    } catch (...) {
        fs::remove_all(tmp, ec);
        throw;
    }
    fs::remove_all(old, ec);
}

}  // namespace opgen::onnx_import
