#include "onnx/ops/Index.h"

#include "onnx/OpText.h"
#include "onnx/ops/Broadcast.h"

namespace opgen::onnx_import {

namespace {

// ArgMax / ArgMin over X viewed as [A, K, B] around the axis: the extreme M of each row, then the
// first position holding it (the smallest k whose value equals M) or, with select_last_index, the
// last. Comparisons are in X's type (core/ComputeDef.h comparison_type), the positions int64.
SubgraphKernel arg_extreme(const ModelGraph &g, const GraphNode &n) {
    const std::string &x = n.inputs[0], &y = n.outputs[0];
    const Dims &d = g.tensor(x).dims;
    const size_t axis = size_t(normalize_axis(n.int_attr("axis", 0), int64_t(d.size())));
    const bool max = n.op_type == "ArgMax", last = n.int_attr("select_last_index", 0) != 0;
    const std::string extreme = max ? "max" : "min", type = type_name(g, x);
    const std::string name = std::string(max ? "argmax" : "argmin") + (last ? "_last" : "_first") +
                             type_suffix(g, {x, y});
    std::string text = std::string(kGeneratedHeader) + "# The " + (last ? "last" : "first") +
                       " position of the " + extreme + "imum along K of X viewed as [A, K, B] (an ONNX " +
                       n.op_type + ").\n";
    text += "op " + name + "\nparam A, K, B\ninput  X: " + type + "[A, K, B]\nlocal  M: " + type +
            "[A, B]\noutput Y: " + type_name(g, y) + "[A, B]\n";
    text += "M[a, b] = " + extreme + "(k: K) X[a, k, b]\n";
    text += last ? "Y[a, b] = max(k: K) select(X[a, k, b] == M[a, b], k, 0)\n"
                 : "Y[a, b] = min(k: K) select(X[a, k, b] == M[a, b], k, K)\n";
    const std::string shape =
        shape_text({{"A", product(d, 0, axis)}, {"K", d[axis]}, {"B", product(d, axis + 1, d.size())}});
    return generated_kernel("reduction", name, text, shape, {{"X", x}, {"Y", y}});
}

// Trilu over X viewed as [B, N, M]: element (i, j) is kept where j - i >= k (upper) or <= k
// (lower), the diagonal offset k written into the op (its name carries it).
SubgraphKernel trilu(const ModelGraph &g, const GraphNode &n) {
    const std::string &x = n.inputs[0], &y = n.outputs[0];
    const Dims &d = g.tensor(x).dims;
    if (d.size() < 2) throw Unsupported{"a tensor of rank below 2"};
    int64_t k = 0;
    if (n.inputs.size() > 1 && !n.inputs[1].empty()) {
        std::vector<double> v = constant_values(g, n.inputs[1], "the diagonal k");
        if (v.size() != 1) throw Unsupported{"a diagonal k of " + std::to_string(v.size()) + " values"};
        k = int64_t(v[0]);
    }
    const bool upper = n.int_attr("upper", 1) != 0;
    const std::string type = type_name(g, x), k_text = std::to_string(k);
    const std::string name = std::string(upper ? "triu" : "tril") + "_k" + (k < 0 ? "m" + std::to_string(-k) : k_text) +
                             type_suffix(g, {x});
    std::string text = std::string(kGeneratedHeader) + "# The " + (upper ? "upper" : "lower") +
                       " triangle of each N x M matrix of X from diagonal " + k_text + ", zero elsewhere (an ONNX Trilu).\n";
    text += "op " + name + "\nparam B, N, M\ninput  X: " + type + "[B, N, M]\noutput Y: " + type + "[B, N, M]\n";
    text += "Y[b, i, j] = select(j - i " + std::string(upper ? ">=" : "<=") + " " + k_text + ", X[b, i, j], 0)\n";
    const size_t r = d.size();
    const std::string shape = shape_text({{"B", product(d, 0, r - 2)}, {"N", d[r - 2]}, {"M", d[r - 1]}});
    return generated_kernel("elementwise", name, text, shape, {{"X", x}, {"Y", y}});
}

// Gather and GatherElements with indices known at run time, as a masked reduction over the
// gathered axis: the op language reads tensors at affine indices only, so the element at position
// I is the one term of sum(v: V) select(I == v, X[.., v, ..], 0) that is not zero (exact in any
// type). Negative indices count from the end (I == v - V). It does V times a gather's work: right
// for the conformance cases and small tables, slow for a large vocabulary's embedding.
SubgraphKernel gather(const ModelGraph &g, const GraphNode &n) {
    const std::string &x = n.inputs[0], &idx = n.inputs[1], &y = n.outputs[0];
    const Dims &d = g.tensor(x).dims;
    const size_t axis = size_t(normalize_axis(n.int_attr("axis", 0), int64_t(d.size())));
    const bool elements = n.op_type == "GatherElements";
    const std::string type = type_name(g, x), itype = type_name(g, idx);
    const std::string name = std::string(elements ? "gather_elements" : "gather") + type_suffix(g, {x, idx});
    const std::string pick = "select(I[" + std::string(elements ? "a, n, b" : "n") + "] == v || I[" +
                             (elements ? "a, n, b" : "n") + "] == v - V, X[a, v, b], 0)";
    std::string text = std::string(kGeneratedHeader) + "# Y = X at the positions I along V of X viewed as [A, V, B] (an ONNX " +
                       n.op_type + "), as the one non-zero term of a masked sum over V.\n";
    text += "op " + name + "\nparam A, V, B, N\ninput  X: " + type + "[A, V, B]\ninput  I: " + itype +
            (elements ? "[A, N, B]" : "[N]") + "\noutput Y: " + type + "[A, N, B]\n";
    text += "Y[a, n, b] = sum(v: V) " + pick + "\n";
    const Dims &yd = g.tensor(y).dims;
    const int64_t A = product(d, 0, axis), B = product(d, axis + 1, d.size());
    const int64_t N = elements ? g.tensor(idx).dims[axis] : g.tensor(idx).elements();
    if (elements && (product(yd, 0, axis) != A || product(yd, axis + 1, yd.size()) != B))
        throw Unsupported{"indices narrower than the data on an axis other than the gathered one"};
    const std::string shape = shape_text({{"A", A}, {"V", d[axis]}, {"B", B}, {"N", N}});
    return generated_kernel("reduction", name, text, shape, {{"X", x}, {"I", idx}, {"Y", y}});
}

// Expand: X broadcast to the output's shape (which shape inference gave from the shape input).
SubgraphKernel expand(const ModelGraph &g, const GraphNode &n) {
    return broadcast_kernel(g, {n.inputs[0]}, n.outputs[0], "expand", "Expand",
                            [](const std::vector<std::string> &r) { return r[0]; });
}

} // namespace

bool is_index_op(const std::string &op_type) {
    return op_type == "ArgMax" || op_type == "ArgMin" || op_type == "Trilu" || op_type == "Expand" ||
           op_type == "Gather" || op_type == "GatherElements";
}

std::vector<SubgraphKernel> index_kernels(const ModelGraph &g, const GraphNode &n) {
    if (n.op_type == "Trilu") return {trilu(g, n)};
    if (n.op_type == "Expand") return {expand(g, n)};
    if (n.op_type == "Gather" || n.op_type == "GatherElements") return {gather(g, n)};
    return {arg_extreme(g, n)};
}

} // namespace opgen::onnx_import
