#include "onnx/ModelReference.h"

#include "base/Error.h"

#include <cstring>
#include <optional>

namespace opgen::onnx_import {

namespace {

// Every index of `dims` in row-major order, as the reference evaluator takes them.
bool next_index(std::vector<int64_t> &index, const std::vector<int64_t> &dims) {
    for (size_t i = dims.size(); i-- > 0;) {
        if (++index[i] < dims[i]) return true;
        index[i] = 0;
    }
    return false;
}

HostTensor run_kernel(const CompiledModel &m, size_t i, const std::map<std::string, HostTensor> &values) {
    const SubgraphKernel &k = m.partition.kernels[i];
    const BoundShape &bound = m.bounds[i];
    std::map<std::string, HostTensor> inputs;
    for (size_t a = 0; a + 1 < k.args.size(); a++) {
        const auto &[op_tensor, graph_tensor] = k.args[a];
        HostTensor t = values.at(graph_tensor);
        t.dims = bound.dims.at(op_tensor);  // the same row-major buffer under the op's dimensions
        inputs[op_tensor] = std::move(t);
    }
    const std::string &out = k.args.back().first;
    ReferenceEvaluator eval(m.defs[i], bound, inputs);
    HostTensor y = make_host_tensor(m.defs[i].output().dtype, bound.dims.at(out));
    std::vector<int64_t> index(y.dims.size(), 0);
    int64_t flat = 0;
    do {
        y.set(flat++, eval.value(out, index));
    } while (next_index(index, y.dims));
    return y;
}

// A weight's elements as a host tensor of its type; nullopt when the graph holds none.
std::optional<HostTensor> weight_tensor(const GraphTensor &t) {
    if (t.elem_type == 1) {
        if (t.data.empty()) return std::nullopt;
        HostTensor h = make_host_tensor(DType::F32, t.dims);
        h.data = t.data;
        return h;
    }
    if (!t.dtype() || t.raw.empty()) return std::nullopt;
    HostTensor h = make_host_tensor(*t.dtype(), t.dims);
    internal_check(int64_t(t.raw.size()) == h.byte_size()) << "weight '" << t.name << "': " << t.raw.size() << " bytes";
    std::memcpy(h.host(), t.raw.data(), t.raw.size());
    return h;
}

// `t` under other dimensions of as many elements (a view).
HostTensor viewed(HostTensor t, const std::vector<int64_t> &dims) {
    t.dims = dims;
    return t;
}

}  // namespace

std::map<std::string, HostTensor> evaluate_compiled_model(const CompiledModel &m,
                                                          const std::map<std::string, HostTensor> &inputs) {
    const ModelGraph &g = m.graph;
    std::map<std::string, HostTensor> values;
    for (const auto &[name, t] : g.tensors)
        if (t.kind == TensorKind::Weight)
            if (std::optional<HostTensor> w = weight_tensor(t)) values[name] = *w;
    for (const auto &name : g.inputs) {
        auto it = inputs.find(name);
        user_check(it != inputs.end()) << "model '" << g.path << "': no value for input '" << name << "'";
        user_check(it->second.elements() == g.tensor(name).elements())
            << "model '" << g.path << "': input '" << name << "' has " << it->second.elements() << " elements, the model "
            << g.tensor(name).elements();
        user_check(it->second.dtype == g.tensor(name).dtype())
            << "model '" << g.path << "': input '" << name << "' is " << dtype_name(it->second.dtype) << ", the model's "
            << (g.tensor(name).dtype() ? dtype_name(*g.tensor(name).dtype()) : "?");
        values[name] = viewed(it->second, g.tensor(name).dims);
    }
    // Views and kernels interleave: a view is ready once its source is.
    size_t next_view = 0;
    auto settle_views = [&] {
        for (; next_view < m.partition.views.size(); next_view++) {
            const TensorView &v = m.partition.views[next_view];
            auto src = values.find(v.source);
            if (src == values.end()) return;
            values[v.tensor] = viewed(src->second, g.tensor(v.tensor).dims);
        }
    };
    for (size_t i = 0; i < m.partition.kernels.size(); i++) {
        settle_views();
        HostTensor y = run_kernel(m, i, values);
        y.dims = g.tensor(m.partition.kernels[i].args.back().second).dims;
        values[m.partition.kernels[i].args.back().second] = std::move(y);
    }
    settle_views();
    std::map<std::string, HostTensor> out;
    for (const auto &name : g.outputs) {
        auto it = values.find(name);
        internal_check(it != values.end()) << "output '" << name << "' was never computed";
        out[name] = it->second;
    }
    return out;
}

}  // namespace opgen::onnx_import
