#include "onnx/WeightDequantize.h"

#include <cstring>

namespace opgen::onnx_import {

namespace {

// Whether the DequantizeLinear `n` reads only constants and is read by a node.
bool foldable(const ModelGraph &g, const GraphNode &n) {
    if (n.op_type != "DequantizeLinear" || n.outputs.size() != 1) return false;
    for (const std::string &t : n.inputs)
        if (!t.empty() && !g.is_weight(t)) return false;
    for (const std::string &o : g.outputs)
        if (o == n.outputs[0]) return false;
    return g.consumers.count(n.outputs[0]) > 0;
}

// The float32 elements of (x - zero point) * scale, the parameters per `axis` where they have
// more than one value; empty when an element count does not fit or the elements were not read.
std::vector<float> dequantized(const GraphTensor &x, const GraphTensor &scale, const GraphTensor *zero, int64_t axis) {
    const std::vector<double> xv = constant_elements(x), sv = constant_elements(scale);
    const std::vector<double> zv = zero ? constant_elements(*zero) : std::vector<double>{0.0};
    if (int64_t(xv.size()) != x.elements() || sv.empty() || zv.empty()) return {};
    int64_t inner = 1;
    for (size_t d = size_t(axis) + 1; d < x.dims.size(); d++) inner *= x.dims[d];
    const int64_t channels = x.dims.empty() ? 1 : x.dims[size_t(axis)];
    std::vector<float> out(xv.size());
    for (size_t i = 0; i < xv.size(); i++) {
        const size_t c = size_t((int64_t(i) / inner) % channels);
        const double s = sv.size() == 1 ? sv[0] : sv[c], z = zv.size() == 1 ? zv[0] : zv[c];
        out[i] = float((xv[i] - z) * s);
    }
    return out;
}

}  // namespace

std::vector<double> constant_elements(const GraphTensor &t) {
    if (!t.values.empty() && int64_t(t.values.size()) == t.elements()) return t.values;
    if (!t.data.empty()) return {t.data.begin(), t.data.end()};
    std::vector<double> out;
    if (t.elem_type == 2 || t.elem_type == 3)
        for (char c : t.raw) out.push_back(t.elem_type == 3 ? double(int8_t(c)) : double(uint8_t(c)));
    if (t.elem_type == 6)
        for (size_t i = 0; i + 4 <= t.raw.size(); i += 4) {
            int32_t v = 0;
            std::memcpy(&v, t.raw.data() + i, 4);
            out.push_back(v);
        }
    return out;
}

void fold_weight_dequantize(ModelGraph &g) {
    for (const GraphNode &n : g.nodes) {
        if (!foldable(g, n)) continue;
        const GraphTensor &x = g.tensor(n.inputs[0]), &scale = g.tensor(n.inputs[1]);
        const GraphTensor *zero = n.inputs.size() > 2 && !n.inputs[2].empty() ? &g.tensor(n.inputs[2]) : nullptr;
        int64_t axis = n.int_attr("axis", 1);
        if (axis < 0) axis += int64_t(x.dims.size());
        if (x.dims.empty()) axis = 0;
        else if (axis < 0 || axis >= int64_t(x.dims.size())) continue;
        const int64_t channels = x.dims.empty() ? 1 : x.dims[size_t(axis)];
        if ((scale.elements() != 1 && scale.elements() != channels) ||
            (zero && zero->elements() != 1 && zero->elements() != channels))
            continue;
        const bool read = !constant_elements(x).empty();
        std::vector<float> data = dequantized(x, scale, zero, axis);
        if (read && data.empty()) continue;
        GraphTensor &y = g.tensors[n.outputs[0]];
        y.kind = TensorKind::Weight;
        y.elem_type = 1;
        y.raw.clear();
        y.values.clear();
        if (data.size() <= 64) y.values.assign(data.begin(), data.end());
        y.data = std::move(data);
    }
}

}  // namespace opgen::onnx_import
