#include "onnx/QdqOperands.h"

#include "onnx/WeightDequantize.h"

#include <algorithm>

namespace opgen::onnx_import {

bool present(const GraphNode &n, size_t i) { return n.inputs.size() > i && !n.inputs[i].empty(); }

bool all_zero(const ModelGraph &g, const std::string &t) {
    if (!g.is_weight(t)) return false;
    for (double v : constant_elements(g.tensor(t)))
        if (v != 0) return false;
    return true;
}

std::optional<PerTensor> per_tensor(const ModelGraph &g, const std::string &t, const std::string &s,
                                    const std::string &z) {
    if (!g.is_weight(s) || g.tensor(s).values.size() != 1) return std::nullopt;
    PerTensor p{t, g.tensor(s).values[0], 0};
    if (z.empty()) return p;
    if (!g.is_weight(z) || g.tensor(z).values.size() != 1 || g.tensor(z).elem_type != kOnnxUint8) return std::nullopt;
    p.zero = int64_t(g.tensor(z).values[0]);
    return p;
}

const GraphNode *dequantize_of(const ModelGraph &g, const std::string &t) {
    auto it = g.producer.find(t);
    if (it == g.producer.end()) return nullptr;
    const GraphNode &dq = g.nodes[it->second];
    return dq.op_type == "DequantizeLinear" ? &dq : nullptr;
}

std::optional<RequantizedOutput> match_requantized_output(const ModelGraph &g, const std::string &t,
                                                          const SoleReader &sole_reader) {
    const GraphNode *r = sole_reader(t);
    const GraphNode *relu = nullptr;
    if (r && r->op_type == "Relu") relu = r, r = sole_reader(r->outputs[0]);
    if (!r || r->op_type != "QuantizeLinear" || g.tensor(r->outputs[0]).elem_type != kOnnxUint8) return std::nullopt;
    std::optional<PerTensor> y = per_tensor(g, r->outputs[0], r->inputs[1], present(*r, 2) ? r->inputs[2] : "");
    if (!y || (relu && y->zero != 0)) return std::nullopt;
    RequantizedOutput out{*y, {}};
    if (relu) out.nodes.push_back(relu->index);
    out.nodes.push_back(r->index);
    return out;
}

GraphTensor folded_constant(const std::string &name, const Dims &dims, int elem_type) {
    GraphTensor t;
    t.name = name;
    t.dims = dims;
    t.elem_type = elem_type;
    t.kind = TensorKind::Weight;
    return t;
}

bool one_value(const Dims &v, int64_t &out) {
    if (v.empty() || std::any_of(v.begin(), v.end(), [&](int64_t e) { return e != v[0]; })) return false;
    out = v[0];
    return true;
}

double per_channel(const std::vector<double> &v, int64_t i) { return v.size() == 1 ? v[0] : v[size_t(i)]; }

}  // namespace opgen::onnx_import
