#include "onnx/ops/Quantize.h"

#include "onnx/OpText.h"
#include "onnx/ops/Broadcast.h"

#include <algorithm>
#include <map>

namespace opgen::onnx_import {

namespace {

bool present(const GraphNode &n, size_t i) { return n.inputs.size() > i && !n.inputs[i].empty(); }

// The smallest and largest value of a u8 or i8 type, as float32 literals.
std::pair<std::string, std::string> saturation(const std::string &type) {
    if (type == "i8") return {"-128.0", "127.0"};
    if (type == "u8") return {"0.0", "255.0"};
    throw Unsupported{"a quantized type other than uint8 or int8"};
}

std::pair<std::string, std::string> saturation(const ModelGraph &g, const std::string &t) {
    return saturation(type_name(g, t));
}

// How a scale or zero point `t` is read against x of dims `xd`: one value, or one per index of
// `axis` (the broadcast reads it at that axis).
std::map<std::string, Dims> per_axis_reads(const ModelGraph &g, const GraphNode &n, const Dims &xd,
                                           const std::vector<std::string> &params) {
    std::map<std::string, Dims> read_as;
    for (const std::string &p : params) {
        const GraphTensor &t = g.tensor(p);
        if (t.elements() == 1) {
            read_as[p] = {};
            continue;
        }
        const size_t axis = size_t(normalize_axis(n.int_attr("axis", 1), int64_t(xd.size())));
        if (t.dims.size() != 1 || t.dims[0] != xd[axis]) throw Unsupported{"a scale or zero point of neither 1 nor the axis's values"};
        Dims d(xd.size(), 1);
        d[axis] = xd[axis];
        read_as[p] = d;
    }
    return read_as;
}

// y = (x - zero point) * scale, in float32.
SubgraphKernel dequantize(const ModelGraph &g, const GraphNode &n) {
    std::vector<std::string> inputs = {n.inputs[0], n.inputs[1]};
    if (present(n, 2)) inputs.push_back(n.inputs[2]);
    const std::map<std::string, Dims> read_as =
        per_axis_reads(g, n, g.tensor(n.inputs[0]).dims, {inputs.begin() + 1, inputs.end()});
    const bool zero = inputs.size() > 2;
    return broadcast_kernel(
        g, inputs, n.outputs[0], "dequantize", "DequantizeLinear",
        [zero](const std::vector<std::string> &r) { return zero ? "(" + r[0] + " - " + r[2] + ") * " + r[1] : r[0] + " * " + r[1]; },
        read_as);
}

// y = saturate(round(x / scale) + zero point): the rounding and the clamp in float32, then the
// conversion (every value of a statement is in its output's type).
SubgraphKernel quantize(const ModelGraph &g, const GraphNode &n) {
    std::vector<std::string> inputs = {n.inputs[0], n.inputs[1]};
    if (present(n, 2)) inputs.push_back(n.inputs[2]);
    const std::map<std::string, Dims> read_as =
        per_axis_reads(g, n, g.tensor(n.inputs[0]).dims, {inputs.begin() + 1, inputs.end()});
    const auto [lo, hi] = saturation(g, n.outputs[0]);
    const bool zero = inputs.size() > 2;
    const BroadcastStage rounded{"R", "f32", [zero, lo = lo, hi = hi](const std::vector<std::string> &r) {
                                     return "min(max(round(" + r[0] + " / " + r[1] + ")" + (zero ? " + " + r[2] : "") +
                                            ", " + lo + "), " + hi + ")";
                                 }};
    return broadcast_kernel(
        g, inputs, n.outputs[0], "quantize", "QuantizeLinear", [](const std::vector<std::string> &r) { return r.back(); },
        read_as, {rounded});
}

// A zero point's read in a matrix product: one value, or one per row (a) or column (b).
std::string zero_point_read(const ModelGraph &g, const std::string &t, const std::string &name, const std::string &var,
                            int64_t extent, std::string &decl) {
    const GraphTensor &z = g.tensor(t);
    const std::string type = type_name(g, t);
    if (z.elements() == 1) {
        decl = "input  " + name + ": " + type + "[1]\n";
        return name + "[0]";
    }
    if (z.elements() != extent) throw Unsupported{"a zero point of neither 1 nor the rows' or columns' count"};
    decl = "input  " + name + ": " + type + "[" + (var == "m" ? "M" : "N") + "]\n";
    return name + "[" + var + "]";
}

// MatMulInteger and QLinearMatMul over A [batch.., M, K] and B [K, N] or [batch.., K, N] (the same
// batch): P = sum(k) (A - a_zp)(B - b_zp) in int32; QLinearMatMul requantizes P.
SubgraphKernel integer_matmul(const ModelGraph &g, const GraphNode &n) {
    const bool requant = n.op_type == "QLinearMatMul";
    const std::string &a = n.inputs[0], &b = n.inputs[requant ? 3 : 1], &y = n.outputs[0];
    const Dims &ad = g.tensor(a).dims, &bd = g.tensor(b).dims;
    if (ad.size() < 2 || (bd.size() != 2 && bd.size() != ad.size())) throw Unsupported{"operands of these ranks"};
    const size_t r = ad.size();
    const bool batched_b = bd.size() == r && r > 2;
    if (batched_b && !std::equal(ad.begin(), ad.end() - 2, bd.begin())) throw Unsupported{"batch axes that differ"};
    const int64_t batch = product(ad, 0, r - 2), M = ad[r - 2], K = ad[r - 1], N = bd.back();
    const std::string azp = requant ? n.inputs[2] : (present(n, 2) ? n.inputs[2] : "");
    const std::string bzp = requant ? n.inputs[5] : (present(n, 3) ? n.inputs[3] : "");
    std::string decls = "input  A: " + type_name(g, a) + "[BATCH, M, K]\ninput  B: " + type_name(g, b) +
                        (batched_b ? "[BATCH, K, N]\n" : "[K, N]\n");
    std::vector<std::pair<std::string, std::string>> args = {{"A", a}, {"B", b}};
    std::string a_read = "A[i, m, k]", b_read = batched_b ? "B[i, k, n]" : "B[k, n]", decl;
    if (!azp.empty()) a_read = "(" + a_read + " - " + zero_point_read(g, azp, "AZ", "m", M, decl) + ")", decls += decl, args.push_back({"AZ", azp});
    if (!bzp.empty()) b_read = "(" + b_read + " - " + zero_point_read(g, bzp, "BZ", "n", N, decl) + ")", decls += decl, args.push_back({"BZ", bzp});
    std::string text = std::string(kGeneratedHeader) + "# An ONNX " + n.op_type +
                       ": (A - a_zero_point)(B - b_zero_point) summed in int32" +
                       (requant ? ", scaled by a_scale b_scale / y_scale, rounded half to even, y_zero_point added, saturated" : "") + ".\n";
    std::string name = requant ? "qlinear_matmul" : "matmul_integer";
    name += type_suffix(g, {a, b, y}) + (batched_b ? "_batched" : "");
    text += "op " + name + "\nparam BATCH, M, N, K\n" + decls;
    const std::string sum = "sum(k: K) " + a_read + " * " + b_read;
    if (!requant) {
        text += "output C: i32[BATCH, M, N]\nC[i, m, n] = " + sum + "\n";
    } else {
        for (const auto &[op, idx] : std::vector<std::pair<std::string, size_t>>{{"AS", 1}, {"BS", 4}, {"YS", 6}}) {
            if (g.tensor(n.inputs[idx]).elements() != 1) throw Unsupported{"scales per row or column"};
            text += "input  " + op + ": f32[1]\n";
            args.push_back({op, n.inputs[idx]});
        }
        std::string yz = "0.0";
        if (present(n, 7)) {
            if (g.tensor(n.inputs[7]).elements() != 1) throw Unsupported{"an output zero point per column"};
            text += "input  YZ: " + type_name(g, n.inputs[7]) + "[1]\n";
            args.push_back({"YZ", n.inputs[7]});
            yz = "YZ[0]";
        }
        text += requantized_text(sum, "", "AS[0] * BS[0] / YS[0]", yz, "C", type_name(g, y), "[BATCH, M, N]", "[i, m, n]");
    }
    args.push_back({"C", y});
    const std::string shape = shape_text({{"BATCH", batch}, {"M", M}, {"N", N}, {"K", K}});
    return generated_kernel("dense", name, text, shape, args);
}

// DynamicQuantizeLinear's scale and zero point from x's range (widened to hold 0), each one
// element: y_scale = (max - min) / 255, y_zero_point = saturate(round(-min / y_scale)).
SubgraphKernel dynamic_range(const ModelGraph &g, const GraphNode &n, bool zero_point) {
    const std::string &x = n.inputs[0], &out = n.outputs[zero_point ? 2 : 1];
    std::string text = std::string(kGeneratedHeader) + "# DynamicQuantizeLinear's " +
                       (zero_point ? "zero point" : "scale") + " from the range of X, widened to hold 0.\n";
    const std::string name = zero_point ? "dynamic_zero_point" : "dynamic_scale";
    text += "op " + name + "\nparam N\ninput  X: f32[N]\nlocal  MX: f32[1]\nlocal  MN: f32[1]\n";
    const std::string scale = "(max(MX[z], 0.0) - min(MN[z], 0.0)) / 255.0";
    if (zero_point) text += "local  R: f32[1]\noutput Y: u8[1]\n";
    else text += "output Y: f32[1]\n";
    text += "MX[z] = max(i: N) X[i]\nMN[z] = min(i: N) X[i]\n";
    if (zero_point) text += "R[z] = min(max(round(0.0 - min(MN[z], 0.0) / (" + scale + ")), 0.0), 255.0)\nY[z] = R[z]\n";
    else text += "Y[z] = " + scale + "\n";
    return generated_kernel("reduction", name, text, shape_text({{"N", g.tensor(x).elements()}}), {{"X", x}, {"Y", out}});
}

// DynamicQuantizeLinear: the scale, the zero point, then x quantized with them (uint8).
std::vector<SubgraphKernel> dynamic_quantize(const ModelGraph &g, const GraphNode &n) {
    if (n.outputs.size() != 3) throw Unsupported{"outputs other than y, y_scale and y_zero_point"};
    GraphNode q = n;
    q.op_type = "QuantizeLinear";
    q.inputs = {n.inputs[0], n.outputs[1], n.outputs[2]};
    q.outputs = {n.outputs[0]};
    return {dynamic_range(g, n, false), dynamic_range(g, n, true), quantize(g, q)};
}

} // namespace

std::string requantized_text(const std::string &sum, const std::string &bias, const std::string &scale,
                             const std::string &zero, const std::string &out, const std::string &out_type,
                             const std::string &dims, const std::string &at) {
    const auto [lo, hi] = saturation(out_type);
    const std::string p = bias.empty() ? "P" + at : "(P" + at + " + " + bias + ")";
    return "local  P: i32" + dims + "\nlocal  R: f32" + dims + "\noutput " + out + ": " + out_type + dims + "\n" + "P" +
           at + " = " + sum + "\nR" + at + " = min(max(round(" + p + " * (" + scale + ")) + " + zero + ", " + lo + "), " +
           hi + ")\n" + out + at + " = R" + at + "\n";
}

bool is_quantized_op(const std::string &op_type) {
    return op_type == "QuantizeLinear" || op_type == "DequantizeLinear" || op_type == "MatMulInteger" ||
           op_type == "QLinearMatMul" || op_type == "DynamicQuantizeLinear";
}

std::vector<SubgraphKernel> quantized_kernels(const ModelGraph &g, const GraphNode &n) {
    if (n.op_type == "QuantizeLinear") return {quantize(g, n)};
    if (n.op_type == "DequantizeLinear") return {dequantize(g, n)};
    if (n.op_type == "DynamicQuantizeLinear") return dynamic_quantize(g, n);
    return {integer_matmul(g, n)};
}

} // namespace opgen::onnx_import
