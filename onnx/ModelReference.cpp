#include "onnx/ModelReference.h"

#include "base/Error.h"

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
    HostTensor y;
    y.dims = bound.dims.at(out);
    y.data.reserve(size_t(y.elements()));
    std::vector<int64_t> index(y.dims.size(), 0);
    do {
        y.data.push_back(float(eval.value(out, index)));
    } while (next_index(index, y.dims));
    return y;
}

}  // namespace

std::map<std::string, HostTensor> evaluate_compiled_model(const CompiledModel &m,
                                                          const std::map<std::string, HostTensor> &inputs) {
    const ModelGraph &g = m.graph;
    std::map<std::string, HostTensor> values;
    for (const auto &[name, t] : g.tensors)
        if (t.kind == TensorKind::Weight && !t.data.empty()) values[name] = {t.dims, t.data};
    for (const auto &name : g.inputs) {
        auto it = inputs.find(name);
        user_check(it != inputs.end()) << "model '" << g.path << "': no value for input '" << name << "'";
        user_check(it->second.elements() == g.tensor(name).elements())
            << "model '" << g.path << "': input '" << name << "' has " << it->second.elements() << " elements, the model "
            << g.tensor(name).elements();
        values[name] = {g.tensor(name).dims, it->second.data};
    }
    // Views and kernels interleave: a view is ready once its source is.
    size_t next_view = 0;
    auto settle_views = [&] {
        for (; next_view < m.partition.views.size(); next_view++) {
            const TensorView &v = m.partition.views[next_view];
            auto src = values.find(v.source);
            if (src == values.end()) return;
            values[v.tensor] = {g.tensor(v.tensor).dims, src->second.data};
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
