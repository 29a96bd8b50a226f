#include "onnx/ops/Gemm.h"

#include "onnx/OpText.h"

namespace opgen::onnx_import {

namespace {

// Gemm: Y = alpha * A' B' + beta * C, A' and B' transposed as asked, C broadcast to [M, N].
SubgraphKernel gemm(const ModelGraph &g, const GraphNode &n) {
    const std::string &a = n.inputs[0], &b = n.inputs[1];
    require_float(g, a), require_float(g, b);
    const Dims &ad = g.tensor(a).dims, &bd = g.tensor(b).dims;
    if (ad.size() != 2 || bd.size() != 2)
        throw Unsupported{"operands not matrices"};
    const bool ta = n.int_attr("transA", 0) != 0, tb = n.int_attr("transB", 0) != 0;
    const int64_t m = ta ? ad[1] : ad[0], k = ta ? ad[0] : ad[1], cols = tb ? bd[0] : bd[1];
    if ((tb ? bd[1] : bd[0]) != k)
        throw Unsupported{"inner sizes differ"};
    const std::string alpha = literal(n.float_attr("alpha", 1.0)),
                      beta = literal(n.float_attr("beta", 1.0));
    const bool bias = n.inputs.size() > 2 && !n.inputs[2].empty();
    std::string name = std::string("gemm") + (ta ? "_ta" : "") + (tb ? "_tb" : "");
    std::string cdecl, cread;
    if (bias) {
        const std::string &c = n.inputs[2];
        require_float(g, c);
        const Dims &cd = g.tensor(c).dims;
        if (cd.size() > 2)
            throw Unsupported{"a bias of rank above 2"};
        // Right-aligned against [M, N]; an extent 1 (or an absent axis) stretches.
        const bool rows = cd.size() == 2 && cd[0] == m && m != 1,
                   own_cols = !cd.empty() && cd.back() == cols && cols != 1;
        if ((cd.size() == 2 && cd[0] != m && cd[0] != 1) ||
            (!cd.empty() && cd.back() != cols && cd.back() != 1))
            throw Unsupported{"a bias that does not broadcast"};
        name += std::string("_c") + (rows ? "m" : "1") + (own_cols ? "n" : "1");
        cdecl = "input  C: f32[" + std::string(rows ? "M" : "1") + ", " + (own_cols ? "N" : "1") +
                "]\n";
        cread = "C[" + std::string(rows ? "m" : "0") + ", " + (own_cols ? "n" : "0") + "]";
    }
    std::string text = std::string(kGeneratedHeader) + "# Gemm: Y = " + alpha + " * A" +
                       (ta ? "^T" : "") + " B" + (tb ? "^T" : "") +
                       (bias ? " + " + beta + " * C, C broadcast to M x N" : "") + ".\n";
    text += "op " + name + "\nparam M, N, K\ninput  A: f32[" + (ta ? "K, M" : "M, K") +
            "]\ninput  B: f32[" + (tb ? "N, K" : "K, N") + "]\n" + cdecl;
    text += "local  P: f32[M, N]\noutput Y: f32[M, N]\n";
    text += "P[m, n] = sum(k: K) A[" + std::string(ta ? "k, m" : "m, k") + "] * B[" +
            (tb ? "n, k" : "k, n") + "]\n";
    text += "Y[m, n] = " + alpha + " * P[m, n]" + (bias ? " + " + beta + " * " + cread : "") + "\n";
    std::vector<std::pair<std::string, std::string>> args = {{"A", a}, {"B", b}};
    if (bias)
        args.push_back({"C", n.inputs[2]});
    args.push_back({"Y", n.outputs[0]});
    return generated_kernel("dense", name, text, shape_text({{"M", m}, {"N", cols}, {"K", k}}),
                            args);
}

// MatMul as numpy's matmul: a 1-D A is a row [1, K], a 1-D B a column [K, 1] (their axis
// dropped from the result), and the batch axes broadcast.
SubgraphKernel matmul(const ModelGraph &g, const GraphNode &n) {
    const std::string &a = n.inputs[0], &b = n.inputs[1];
    require_float(g, a), require_float(g, b);
    Dims ad = g.tensor(a).dims, bd = g.tensor(b).dims;
    if (ad.empty() || bd.empty())
        throw Unsupported{"a scalar operand"};
    if (ad.size() == 1)
        ad.insert(ad.begin(), 1);
    if (bd.size() == 1)
        bd.push_back(1);
    if (ad.back() != bd[bd.size() - 2])
        throw Unsupported{"inner sizes differ"};
    const size_t batch = std::max(ad.size(), bd.size()) - 2;
    Dims out(batch, 1);
    for (const Dims *d : {&ad, &bd})
        for (size_t j = 0; j + 2 < d->size(); j++) {
            int64_t &o = out[batch - (d->size() - 2) + j];
            if ((*d)[j] != 1 && o != 1 && o != (*d)[j])
                throw Unsupported{"batch extents that do not broadcast"};
            o = std::max(o, (*d)[j]);
        }
    const AxisNames names = axis_names(out);
    std::string name = "matmul_bcast";
    std::vector<std::string> decl[2], read[2];
    for (int side = 0; side < 2; side++) {
        const Dims &d = side ? bd : ad;
        std::string pattern;
        for (size_t j = 0; j + 2 < d.size(); j++) {
            const size_t axis = batch - (d.size() - 2) + j;
            const bool own = d[j] == out[axis] && out[axis] != 1;
            pattern += own ? 'f' : '1';
            decl[side].push_back(own ? names.dims[axis] : "1");
            read[side].push_back(own ? names.vars[axis] : "0");
        }
        name += "_" + (pattern.empty() ? std::string("0") : pattern);
    }
    decl[0].insert(decl[0].end(), {"M", "K"}), read[0].insert(read[0].end(), {"m", "k"});
    decl[1].insert(decl[1].end(), {"K", "N"}), read[1].insert(read[1].end(), {"k", "n"});
    std::vector<std::string> ydims = names.dims, yvars = names.vars, params = names.dims;
    ydims.insert(ydims.end(), {"M", "N"}), yvars.insert(yvars.end(), {"m", "n"});
    params.insert(params.end(), {"M", "N", "K"});
    std::string text = std::string(kGeneratedHeader) +
                       "# Matrix product C = A B over broadcast batch axes (numpy's matmul).\n";
    text += "op " + name + "\nparam " + join(params, ", ") + "\ninput  A: f32[" +
            join(decl[0], ", ") + "]\ninput  B: f32[" + join(decl[1], ", ") + "]\noutput C: f32[" +
            join(ydims, ", ") + "]\n";
    text += "C[" + join(yvars, ", ") + "] = sum(k: K) A[" + join(read[0], ", ") + "] * B[" +
            join(read[1], ", ") + "]\n";
    std::vector<std::pair<std::string, int64_t>> shape = names.shape;
    shape.insert(shape.end(), {{"M", ad[ad.size() - 2]}, {"N", bd.back()}, {"K", ad.back()}});
    return generated_kernel("attention", name, text, shape_text(shape),
                            {{"A", a}, {"B", b}, {"C", n.outputs[0]}});
}

} // namespace

std::vector<SubgraphKernel> gemm_kernels(const ModelGraph &g, const GraphNode &n) {
    if (n.op_type == "Gemm")
        return {gemm(g, n)};
    return {matmul(g, n)};
}

} // namespace opgen::onnx_import
