#include "onnx/ModelGraph.h"

#include "base/Error.h"
#include "onnx/OnnxRead.h"

#include <cstring>
#include <set>

namespace opgen::onnx_import {

namespace {

// Element values of a small constant; empty when it is large or of a type partitioning never reads.
std::vector<double> small_values(const onnx::TensorProto &t) {
    int64_t count = 1;
    for (auto d : t.dims()) count *= d;
    if (count > 64) return {};
    std::vector<double> out;
    const std::string &raw = t.raw_data();
    auto from_raw = [&](auto sample) {
        using T = decltype(sample);
        if (raw.size() != size_t(count) * sizeof(T)) return;
        for (int64_t i = 0; i < count; i++) {
            T v;
            std::memcpy(&v, raw.data() + i * sizeof(T), sizeof(T));
            out.push_back(double(v));
        }
    };
    switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
        if (!raw.empty()) from_raw(float{});
        else out.assign(t.float_data().begin(), t.float_data().end());
        break;
    case onnx::TensorProto::INT64:
        if (!raw.empty()) from_raw(int64_t{});
        else out.assign(t.int64_data().begin(), t.int64_data().end());
        break;
    case onnx::TensorProto::INT32:
        if (!raw.empty()) from_raw(int32_t{});
        else out.assign(t.int32_data().begin(), t.int32_data().end());
        break;
    case onnx::TensorProto::BOOL:
    case onnx::TensorProto::UINT8:
        if (!raw.empty()) from_raw(uint8_t{});
        else out.assign(t.int32_data().begin(), t.int32_data().end());
        break;
    default:
        break;
    }
    return out;
}

std::vector<float> float_data(const onnx::TensorProto &t, int64_t count) {
    if (t.data_type() != onnx::TensorProto::FLOAT) return {};
    if (t.raw_data().empty()) return std::vector<float>(t.float_data().begin(), t.float_data().end());
    std::vector<float> out(static_cast<size_t>(count));
    if (t.raw_data().size() != out.size() * sizeof(float)) return {};
    std::memcpy(out.data(), t.raw_data().data(), t.raw_data().size());
    return out;
}

// The bytes of a weight of another type than float32, laid out as GraphTensor::dtype() says:
// raw_data as it is, or the typed field (int64_data, or int32_data that ONNX also uses for int8,
// uint8 and bool) narrowed. Empty when the sizes disagree.
std::string typed_bytes(const onnx::TensorProto &t, int64_t count, int width) {
    if (!t.raw_data().empty()) return t.raw_data().size() == size_t(count * width) ? t.raw_data() : std::string();
    std::vector<int64_t> v;
    if (t.data_type() == onnx::TensorProto::INT64) v.assign(t.int64_data().begin(), t.int64_data().end());
    else v.assign(t.int32_data().begin(), t.int32_data().end());
    if (int64_t(v.size()) != count) return {};
    std::string out(size_t(count * width), '\0');
    for (int64_t i = 0; i < count; i++) std::memcpy(out.data() + i * width, &v[size_t(i)], size_t(width));  // little-endian
    return out;
}

GraphTensor weight_of(const onnx::TensorProto &t, bool with_data) {
    GraphTensor w;
    w.name = t.name();
    w.dims.assign(t.dims().begin(), t.dims().end());
    w.kind = TensorKind::Weight;
    w.elem_type = t.data_type();
    w.values = small_values(t);
    if (with_data && w.elem_type == 1) w.data = float_data(t, w.elements());
    else if (with_data && w.dtype()) w.raw = typed_bytes(t, w.elements(), dtype_bytes(*w.dtype()));
    return w;
}

NodeAttr attr_of(const onnx::AttributeProto &a) {
    NodeAttr out;
    out.i = a.i();
    out.f = a.f();
    out.s = a.s();
    out.ints.assign(a.ints().begin(), a.ints().end());
    return out;
}

// Dimensions of every value with a type, symbolic ones resolved from `given`. Symbolic
// dimensions without a value are collected (name -> first value that has it), not raised one at
// a time, so the user sees every --dim they need at once.
class ShapeTable {
public:
    ShapeTable(const onnx::GraphProto &g, const std::map<std::string, int64_t> &given) : given_(given) {
        for (const auto &v : g.input()) add(v);
        for (const auto &v : g.value_info()) add(v);
        for (const auto &v : g.output()) add(v);
    }

    bool has(const std::string &name) const { return dims_.count(name) != 0; }
    const std::vector<int64_t> &dims(const std::string &name) const { return dims_.at(name); }
    int elem_type(const std::string &name) const { return types_.at(name); }
    const std::map<std::string, std::string> &unbound() const { return unbound_; }
    const std::vector<std::string> &unknown() const { return unknown_; }

private:
    void add(const onnx::ValueInfoProto &v) {
        if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
        std::vector<int64_t> out;
        for (const auto &d : v.type().tensor_type().shape().dim()) {
            if (d.has_dim_value()) {
                out.push_back(d.dim_value());
            } else if (d.has_dim_param() && given_.count(d.dim_param())) {
                out.push_back(given_.at(d.dim_param()));
            } else if (d.has_dim_param()) {
                unbound_.emplace(d.dim_param(), v.name());
                out.push_back(-1);
            } else {
                unknown_.push_back(v.name());
                out.push_back(-1);
            }
        }
        dims_[v.name()] = out;
        types_[v.name()] = v.type().tensor_type().elem_type();
    }
    const std::map<std::string, int64_t> &given_;
    std::map<std::string, std::vector<int64_t>> dims_;
    std::map<std::string, int> types_;
    std::map<std::string, std::string> unbound_;  // symbolic dim -> first value with it
    std::vector<std::string> unknown_;
};

void refuse_dynamic(const std::string &path, const ShapeTable &shapes) {
    if (!shapes.unbound().empty()) {
        std::string names, fix;
        for (const auto &[dim, value] : shapes.unbound()) {
            names += (names.empty() ? "" : ", ") + dim + " (in '" + value + "')";
            fix += (fix.empty() ? "" : " ") + std::string("--dim ") + dim + "=N";
        }
        user_check(false) << "model '" << path << "': dynamic dimensions without a value: " << names
                          << "; compiling needs static shapes: give " << fix;
    }
    user_check(shapes.unknown().empty()) << "model '" << path << "': a dimension of '" << shapes.unknown().front()
                                         << "' is unknown after shape inference; compiling needs static shapes";
}

bool is_graph_output(const onnx::GraphProto &g, const std::string &name) {
    for (const auto &v : g.output())
        if (v.name() == name) return true;
    return false;
}

// A Constant that is a graph output: the output needs a buffer of its own, written by a kernel,
// so the constant becomes a weight of another name and an Identity node copies it out.
void copy_constant_to_output(ModelGraph &out, const std::string &name) {
    GraphTensor w = out.tensors.at(name);
    w.name = name + "#constant";
    GraphTensor o = w;
    o.name = name;
    o.kind = TensorKind::Intermediate;
    o.values.clear(), o.data.clear(), o.raw.clear();
    out.tensors[w.name] = w;
    out.tensors[name] = o;
    GraphNode copy;
    copy.index = int(out.nodes.size());
    copy.name = "#constant " + name;
    copy.op_type = "Identity";
    copy.inputs = {w.name};
    copy.outputs = {name};
    out.producer[name] = copy.index;
    out.consumers[w.name].push_back(copy.index);
    out.nodes.push_back(copy);
}

}  // namespace

int64_t GraphNode::int_attr(const std::string &attr, int64_t fallback) const {
    auto it = attrs.find(attr);
    return it == attrs.end() ? fallback : it->second.i;
}

double GraphNode::float_attr(const std::string &attr, double fallback) const {
    auto it = attrs.find(attr);
    return it == attrs.end() ? fallback : it->second.f;
}

std::vector<int64_t> GraphNode::ints_attr(const std::string &attr, const std::vector<int64_t> &fallback) const {
    auto it = attrs.find(attr);
    return it == attrs.end() ? fallback : it->second.ints;
}

int64_t GraphTensor::elements() const {
    int64_t n = 1;
    for (auto d : dims) n *= d;
    return n;
}

std::optional<DType> GraphTensor::dtype() const { return onnx_element_dtype(elem_type); }

int64_t GraphTensor::bytes() const {
    // The types opgen computes by their op-language type; of the others, double 8 bytes (ONNX's
    // 11) and float16 2 (10).
    std::optional<DType> t = dtype();
    int64_t size = t ? dtype_bytes(*t) : elem_type == 11 ? 8 : elem_type == 10 ? 2 : 4;
    return elements() * size;
}

const GraphTensor &ModelGraph::tensor(const std::string &name) const {
    auto it = tensors.find(name);
    internal_check(it != tensors.end()) << "no tensor '" << name << "'";
    return it->second;
}

bool ModelGraph::is_weight(const std::string &name) const {
    auto it = tensors.find(name);
    return it != tensors.end() && it->second.kind == TensorKind::Weight;
}

namespace {

// The most elements one tensor may have: far beyond any model that fits a machine, and small
// enough that a tensor's bytes cannot overflow int64.
constexpr int64_t kMaxTensorElements = int64_t(1) << 40;

// A tensor's dims as the file gives them must be sizes (>= 0) of at most kMaxTensorElements
// elements together, counted without overflow; a cut or edited file can hold any integers here.
void check_dims(const std::vector<int64_t> &dims, const std::string &tensor, const std::string &path) {
    int64_t elements = 1;
    for (int64_t d : dims) {
        user_check(d >= 0) << "model '" << path << "': tensor '" << tensor << "' has a negative dimension (" << d << ")";
        user_check(d == 0 || elements <= kMaxTensorElements / d)
            << "model '" << path << "': tensor '" << tensor << "' has more than 2^40 elements";
        elements *= d;
    }
}

// No tensor is written twice (onnx/ModelCheck.h has checked, before inference, that every node
// reads only what is defined before it).
void check_node_wiring(const ModelGraph &g, const GraphNode &node, const std::string &path) {
    for (const std::string &o : node.outputs) {
        user_check(o.empty() || !g.tensors.count(o))
            << "model '" << path << "': node '" << node.name << "' (" << node.op_type << ") writes '" << o
            << "', which the graph already defines";
    }
}

}  // namespace

ModelGraph read_model_graph(const std::string &path, const std::map<std::string, int64_t> &dims,
                            bool with_weights, const FixedInputs &fixed) {
    onnx::ModelProto model = read_onnx_with_shapes(path, dims, fixed);
    const onnx::GraphProto &g = model.graph();
    ShapeTable shapes(g, dims);
    refuse_dynamic(path, shapes);

    ModelGraph out;
    out.path = path;
    out.opset = onnx_opset(model);
    for (const auto &t : g.initializer()) {
        check_dims({t.dims().begin(), t.dims().end()}, t.name(), path);
        out.tensors[t.name()] = weight_of(t, with_weights);
    }
    for (const auto &v : g.input()) {
        if (out.tensors.count(v.name())) continue;  // older exporters list weights as inputs too
        user_check(shapes.has(v.name())) << "model '" << path << "': input '" << v.name() << "' has no tensor shape";
        check_dims(shapes.dims(v.name()), v.name(), path);
        out.tensors[v.name()] = {v.name(), shapes.dims(v.name()), TensorKind::Input, shapes.elem_type(v.name()), {}, {}, {}, {}};
        out.inputs.push_back(v.name());
    }
    for (int i = 0; i < g.node_size(); i++) {
        const auto &n = g.node(i);
        if (n.op_type() == "Constant" && n.domain().empty() && n.output_size() == 1) {
            for (const auto &a : n.attribute())
                if (a.name() == "value" && a.has_t()) {
                    check_dims({a.t().dims().begin(), a.t().dims().end()}, n.output(0), path);
                    GraphTensor w = weight_of(a.t(), with_weights);
                    w.name = n.output(0);
                    out.tensors[w.name] = w;
                }
            user_check(out.tensors.count(n.output(0)))
                << "model '" << path << "': Constant node '" << n.name() << "' has no tensor 'value'";
            if (is_graph_output(g, n.output(0))) copy_constant_to_output(out, n.output(0));
            continue;
        }
        GraphNode node;
        node.index = int(out.nodes.size());
        node.name = n.name().empty() ? "#" + std::to_string(i) : n.name();
        node.op_type = n.domain().empty() || n.domain() == "ai.onnx" ? n.op_type() : n.domain() + "." + n.op_type();
        node.inputs.assign(n.input().begin(), n.input().end());
        node.outputs.assign(n.output().begin(), n.output().end());
        for (const auto &a : n.attribute()) node.attrs[a.name()] = attr_of(a);
        check_node_wiring(out, node, path);
        for (const auto &o : node.outputs) {
            if (o.empty()) continue;
            user_check(shapes.has(o)) << "model '" << path << "': the shape of '" << o << "' (output of node '"
                                      << node.name << "', " << node.op_type
                                      << ") is unknown after shape inference; compiling needs static shapes";
            check_dims(shapes.dims(o), o, path);
            out.tensors[o] = {o, shapes.dims(o), TensorKind::Intermediate, shapes.elem_type(o), {}, {}, {}, {}};
            out.producer[o] = node.index;
        }
        for (const auto &in : node.inputs)
            if (!in.empty()) out.consumers[in].push_back(node.index);
        out.nodes.push_back(std::move(node));
    }
    for (const auto &v : g.output()) {
        user_check(out.tensors.count(v.name())) << "model '" << path << "': output '" << v.name() << "' is never computed";
        if (out.tensors[v.name()].kind == TensorKind::Intermediate) out.tensors[v.name()].kind = TensorKind::Output;
        out.outputs.push_back(v.name());
    }
    return out;
}

}  // namespace opgen::onnx_import
