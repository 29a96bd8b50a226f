#include "onnx/OnnxExtract.h"

#include "base/Error.h"
#include "core/Shape.h"
#include "onnx/OnnxRead.h"

#include <onnx/onnx_pb.h>

#include <filesystem>
#include <optional>
#include <set>

namespace opgen::onnx_import {

namespace {

// A node that cannot be mapped; carries the reason.
struct Skip {
    std::string reason;
};

using Dims = std::vector<int64_t>;

class Shapes {
public:
    Shapes(const onnx::GraphProto &g, const std::map<std::string, int64_t> &given) : given_(given) {
        for (const auto &v : g.input()) add(v);
        for (const auto &v : g.value_info()) add(v);
        for (const auto &v : g.output()) add(v);
        for (const auto &t : g.initializer()) known_[t.name()] = Dims(t.dims().begin(), t.dims().end());
    }

    // The concrete shape of a value; Skip when it is unknown or has an unbound symbolic dim.
    Dims of(const std::string &name) const {
        if (auto it = known_.find(name); it != known_.end()) return it->second;
        auto it = protos_.find(name);
        if (it == protos_.end()) throw Skip{"shape of '" + name + "' unknown after shape inference"};
        Dims out;
        for (const auto &d : it->second.dim()) {
            if (d.has_dim_value()) {
                out.push_back(d.dim_value());
                continue;
            }
            if (d.has_dim_param()) {
                auto g = given_.find(d.dim_param());
                if (g == given_.end()) throw Skip{"symbolic dimension '" + d.dim_param() + "' (give --dim " + d.dim_param() + "=N)"};
                out.push_back(g->second);
                continue;
            }
            throw Skip{"a dimension of '" + name + "' is unknown after shape inference"};
        }
        return out;
    }

private:
    void add(const onnx::ValueInfoProto &v) {
        if (v.type().has_tensor_type() && v.type().tensor_type().has_shape())
            protos_[v.name()] = v.type().tensor_type().shape();
    }
    const std::map<std::string, int64_t> &given_;
    std::map<std::string, Dims> known_;
    std::map<std::string, onnx::TensorShapeProto> protos_;
};

const onnx::AttributeProto *attr(const onnx::NodeProto &n, const std::string &name) {
    for (const auto &a : n.attribute())
        if (a.name() == name) return &a;
    return nullptr;
}

int64_t int_attr(const onnx::NodeProto &n, const std::string &name, int64_t fallback) {
    const auto *a = attr(n, name);
    return a ? a->i() : fallback;
}

std::string string_attr(const onnx::NodeProto &n, const std::string &name, const std::string &fallback) {
    const auto *a = attr(n, name);
    return a ? a->s() : fallback;
}

Dims ints_attr(const onnx::NodeProto &n, const std::string &name, const Dims &fallback) {
    const auto *a = attr(n, name);
    return a ? Dims(a->ints().begin(), a->ints().end()) : fallback;
}

int64_t product(const Dims &d, size_t from, size_t to) {
    int64_t p = 1;
    for (size_t i = from; i < to; i++) p *= d[i];
    return p;
}

std::string dims_text(const Dims &d) {
    std::string s = "[";
    for (size_t i = 0; i < d.size(); i++) s += (i ? "," : "") + std::to_string(d[i]);
    return s + "]";
}

// One value for both spatial axes; Skip when they differ.
int64_t same_on_both_axes(const Dims &v, const char *what) {
    if (v.size() == 2 && v[0] == v[1]) return v[0];
    if (v.size() == 4 && v[0] == v[1] && v[1] == v[2] && v[2] == v[3]) return v[0];
    throw Skip{std::string("different ") + what + " per axis or side " + dims_text(v) + " (opgen's op has one)"};
}

// Padding of a 2-D window op, from `pads` or `auto_pad`.
int64_t window_pad(const onnx::NodeProto &n, int64_t k, int64_t stride, int64_t dilation) {
    std::string mode = string_attr(n, "auto_pad", "NOTSET");
    if (mode == "NOTSET") return same_on_both_axes(ints_attr(n, "pads", {0, 0, 0, 0}), "pads");
    if (mode == "VALID") return 0;
    if (stride == 1 && (dilation * (k - 1)) % 2 == 0) return dilation * (k - 1) / 2;
    throw Skip{"auto_pad " + mode + " with stride " + std::to_string(stride) + " pads unevenly"};
}

std::string shape_text(const std::vector<std::pair<const char *, int64_t>> &values) {
    std::string s;
    for (const auto &[k, v] : values) s += (s.empty() ? "" : ",") + std::string(k) + "=" + std::to_string(v);
    return s;
}

// rows x last-dimension view used by the row-wise and elementwise ops.
std::string rows_cols(const Dims &d) {
    if (d.empty()) throw Skip{"a scalar"};
    return shape_text({{"M", product(d, 0, d.size() - 1)}, {"N", d.back()}});
}

struct Mapped {
    std::string op, shape;
};

Mapped map_matmul(const Dims &a, const Dims &b) {
    if (a.size() < 2 || b.size() < 2) throw Skip{"a 1-D operand"};
    int64_t m = a[a.size() - 2], k = a.back(), n = b.back();
    if (b[b.size() - 2] != k) throw Skip{"inner sizes differ " + dims_text(a) + " x " + dims_text(b)};
    if (b.size() == 2) return {"matmul", shape_text({{"M", product(a, 0, a.size() - 1)}, {"N", n}, {"K", k}})};
    if (Dims(a.begin(), a.end() - 2) != Dims(b.begin(), b.end() - 2))
        throw Skip{"broadcast batch dimensions " + dims_text(a) + " x " + dims_text(b)};
    return {"batch_matmul", shape_text({{"BATCH", product(a, 0, a.size() - 2)}, {"M", m}, {"N", n}, {"K", k}})};
}

Mapped map_conv(const onnx::NodeProto &node, const Dims &x, const Dims &w) {
    if (x.size() != 4 || w.size() != 4) throw Skip{"not a 2-D convolution (input " + dims_text(x) + ")"};
    int64_t stride = same_on_both_axes(ints_attr(node, "strides", {1, 1}), "strides");
    int64_t dilation = same_on_both_axes(ints_attr(node, "dilations", {1, 1}), "dilations");
    int64_t kh = w[2], kw = w[3];
    if (kh != kw && string_attr(node, "auto_pad", "NOTSET") != "NOTSET") throw Skip{"auto_pad with a non-square kernel"};
    int64_t pad = window_pad(node, kh, stride, dilation);
    int64_t group = int_attr(node, "group", 1);
    if (group == 1)
        return {"conv2d_nchw", shape_text({{"N", x[0]}, {"C", x[1]}, {"H", x[2]}, {"W", x[3]}, {"F", w[0]}, {"KH", kh},
                                           {"KW", kw}, {"stride", stride}, {"pad", pad}, {"dilation", dilation}})};
    if (group == x[1] && w[0] == x[1] && w[1] == 1)
        return {"depthwise_conv2d", shape_text({{"N", x[0]}, {"C", x[1]}, {"H", x[2]}, {"W", x[3]}, {"KH", kh}, {"KW", kw},
                                                {"stride", stride}, {"pad", pad}, {"dilation", dilation}})};
    throw Skip{"grouped convolution (group " + std::to_string(group) + ")"};
}

Mapped map_pool(const onnx::NodeProto &node, const std::string &type, const Dims &x) {
    if (x.size() != 4) throw Skip{"not 2-D pooling (input " + dims_text(x) + ")"};
    std::string op = type.find("Max") != std::string::npos ? "max_pool2d" : "avg_pool2d";
    auto shape = [&](int64_t kh, int64_t kw, int64_t stride, int64_t pad) {
        return shape_text({{"N", x[0]}, {"C", x[1]}, {"H", x[2]}, {"W", x[3]}, {"KH", kh}, {"KW", kw}, {"stride", stride},
                           {"pad", pad}});
    };
    if (type.rfind("Global", 0) == 0) return {op, shape(x[2], x[3], 1, 0)};
    if (int_attr(node, "ceil_mode", 0) != 0) throw Skip{"ceil_mode 1"};
    Dims k = ints_attr(node, "kernel_shape", {});
    if (k.size() != 2) throw Skip{"kernel_shape " + dims_text(k)};
    if (same_on_both_axes(ints_attr(node, "dilations", {1, 1}), "dilations") != 1) throw Skip{"dilated pooling"};
    int64_t stride = same_on_both_axes(ints_attr(node, "strides", {1, 1}), "strides");
    if (k[0] != k[1] && string_attr(node, "auto_pad", "NOTSET") != "NOTSET") throw Skip{"auto_pad with a non-square window"};
    int64_t pad = window_pad(node, k[0], stride, 1);
    // avg_pool2d divides by the whole window, padding included.
    if (op == "avg_pool2d" && pad > 0 && int_attr(node, "count_include_pad", 0) == 0)
        throw Skip{"padded average excluding the padding (count_include_pad 0)"};
    return {op, shape(k[0], k[1], stride, pad)};
}

// Softmax and LayerNormalization normalize over the axes from `axis` on: rows x the rest.
std::string normalized_rows(const Dims &d, int64_t axis) {
    int64_t r = int64_t(d.size());
    if (axis < 0) axis += r;
    if (axis < 0 || axis >= r) throw Skip{"axis out of range"};
    return shape_text({{"M", product(d, 0, size_t(axis))}, {"N", product(d, size_t(axis), d.size())}});
}

Mapped map_node(const onnx::NodeProto &node, const Shapes &shapes, int64_t opset) {
    const std::string &t = node.op_type();
    if (!node.domain().empty() && node.domain() != "ai.onnx") throw Skip{"domain " + node.domain()};
    auto in = [&](int i) {
        if (node.input_size() <= i || node.input(i).empty()) throw Skip{"missing input " + std::to_string(i)};
        return shapes.of(node.input(i));
    };
    auto out = [&]() { return shapes.of(node.output(0)); };
    if (t == "MatMul") return map_matmul(in(0), in(1));
    if (t == "Gemm") {
        Dims a = in(0), b = in(1);
        if (a.size() != 2 || b.size() != 2) throw Skip{"operands not 2-D"};
        int64_t m = int_attr(node, "transA", 0) ? a[1] : a[0];
        int64_t k = int_attr(node, "transA", 0) ? a[0] : a[1];
        int64_t n = int_attr(node, "transB", 0) ? b[0] : b[1];
        return {"matmul", shape_text({{"M", m}, {"N", n}, {"K", k}})};
    }
    if (t == "Conv") return map_conv(node, in(0), in(1));
    if (t == "MaxPool" || t == "AveragePool" || t == "GlobalMaxPool" || t == "GlobalAveragePool") {
        if (t == "MaxPool" && node.output_size() > 1 && !node.output(1).empty()) throw Skip{"MaxPool with indices"};
        return map_pool(node, t, in(0));
    }
    if (t == "Softmax") {
        Dims d = in(0);
        int64_t axis = int_attr(node, "axis", opset >= 13 ? -1 : 1);
        if (opset >= 13 && axis != -1 && axis != int64_t(d.size()) - 1) throw Skip{"softmax over a middle axis"};
        return {"softmax", normalized_rows(d, axis)};
    }
    if (t == "LayerNormalization") return {"layernorm", normalized_rows(in(0), int_attr(node, "axis", -1))};
    if (t == "Relu" || t == "Sigmoid" || t == "Gelu") {
        std::string op = t == "Relu" ? "relu" : t == "Sigmoid" ? "sigmoid" : "gelu";
        return {op, rows_cols(out())};
    }
    if (t == "Add" || t == "Mul") {
        Dims a = in(0), b = in(1);
        if (a != b) throw Skip{"broadcasting " + dims_text(a) + " and " + dims_text(b)};
        return {t == "Add" ? "add" : "mul", rows_cols(a)};
    }
    throw Skip{"no opgen op"};
}

}  // namespace

Extraction extract_onnx(const std::string &path, const OpLibrary &lib, const std::map<std::string, int64_t> &dims) {
    onnx::ModelProto model = read_onnx_with_shapes(path);
    Extraction x;
    x.model = path;
    x.opset = onnx_opset(model);
    Shapes shapes(model.graph(), dims);
    std::map<std::string, ComputeDef> defs;
    const auto &nodes = model.graph().node();
    x.nodes = nodes.size();
    for (int i = 0; i < nodes.size(); i++) {
        const auto &node = nodes[i];
        std::string name = node.name().empty() ? "#" + std::to_string(i) : node.name();
        try {
            Mapped m = map_node(node, shapes, x.opset);
            auto it = defs.find(m.op);
            if (it == defs.end()) it = defs.emplace(m.op, lib.load(m.op)).first;
            BoundShape bound;
            try {
                bound = bind_shape(it->second, m.shape);
            } catch (const UserError &e) {
                throw Skip{std::string("shape does not bind: ") + e.what()};
            }
            x.kernels.push_back({node.op_type(), name, m.op, bound.canonical});
        } catch (const Skip &s) {
            auto &u = x.unsupported[{node.op_type(), s.reason}];
            u.count++;
            if (u.nodes.size() < 3) u.nodes.push_back(name);
        }
    }
    return x;
}

nlohmann::json extraction_manifest(const Extraction &x) {
    using nlohmann::json;
    json entries = json::array();
    std::map<std::string, size_t> entry_of;  // opgen op -> index in entries
    std::map<std::string, std::set<std::string>> seen;
    std::map<std::string, std::map<std::string, int>> from;  // opgen op -> onnx op -> nodes
    for (const auto &k : x.kernels) {
        if (!entry_of.count(k.op)) {
            entry_of[k.op] = entries.size();
            entries.push_back({{"op", k.op}, {"shapes", json::array()}});
        }
        from[k.op][k.onnx_op]++;
        if (seen[k.op].insert(k.shape).second) entries[entry_of[k.op]]["shapes"].push_back(k.shape);
    }
    for (auto &[op, i] : entry_of) {
        std::string c;
        for (const auto &[onnx_op, n] : from[op]) c += (c.empty() ? "" : ", ") + std::to_string(n) + " " + onnx_op;
        entries[i]["comment"] = "from " + c + " node(s), " + std::to_string(seen[op].size()) + " distinct shape(s)";
    }
    json unsupported = json::array();
    for (const auto &[key, u] : x.unsupported)
        unsupported.push_back({{"onnx_op", key.first}, {"reason", key.second}, {"count", u.count}, {"nodes", u.nodes}});
    json j;
    j["name"] = std::filesystem::path(x.model).stem().string();
    j["source"] = {{"model", x.model}, {"opset", x.opset}, {"nodes", x.nodes},
                   {"supported_nodes", x.kernels.size()}, {"unsupported", unsupported}};
    j["entries"] = entries;
    return j;
}

}  // namespace opgen::onnx_import
