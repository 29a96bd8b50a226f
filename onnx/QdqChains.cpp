#include "onnx/QdqChains.h"

#include "onnx/OpText.h"
#include "onnx/QdqOperands.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace opgen::onnx_import {

namespace {

struct NoChain {};

bool single_constant(const ModelGraph &g, const std::string &t) {
    return g.is_weight(t) && g.tensor(t).values.size() == 1;
}

// Walks back from the Q's input, writing the float expression of each value and collecting the
// nodes and the u8 tensors (with their scales and zero points) it reads.
class ChainBuilder {
public:
    ChainBuilder(const ModelGraph &g, const NodeFree &free, Dims dims, const std::string &index)
        : g_(g), free_(free), dims_(std::move(dims)), index_(index) {}

    std::string expr(const std::string &t) {
        if (single_constant(g_, t)) return literal(g_.tensor(t).values[0]);
        auto it = g_.producer.find(t);
        if (it == g_.producer.end() || !free_(it->second) || g_.tensor(t).dims != dims_) throw NoChain{};
        const GraphNode &n = g_.nodes[it->second];
        nodes.insert(n.index);
        if (n.op_type == "DequantizeLinear") return dequantized(n);
        static const std::map<std::string, std::string> infix = {{"Add", " + "}, {"Sub", " - "}, {"Mul", " * "}, {"Div", " / "}};
        static const std::map<std::string, std::string> unary = {{"Relu", "max("}, {"Tanh", "tanh("}, {"Erf", "erf("}};
        operators.push_back(n.op_type);
        if (infix.count(n.op_type) && n.inputs.size() == 2)
            return "(" + expr(n.inputs[0]) + infix.at(n.op_type) + expr(n.inputs[1]) + ")";
        if (unary.count(n.op_type) && n.inputs.size() == 1)
            return unary.at(n.op_type) + expr(n.inputs[0]) + (n.op_type == "Relu" ? ", 0.0)" : ")");
        throw NoChain{};
    }

    std::set<int> nodes;
    std::vector<std::string> operators;  // the float operators, as met
    std::string decls;
    std::vector<std::pair<std::string, std::string>> args;

private:
    // (X - zero point) * scale of a u8 tensor; each tensor read once as an input.
    std::string dequantized(const GraphNode &dq) {
        const std::string &x = dq.inputs[0];
        if (g_.tensor(x).elem_type != kOnnxUint8 || !single_constant(g_, dq.inputs[1]) ||
            (present(dq, 2) && !single_constant(g_, dq.inputs[2])))
            throw NoChain{};
        std::string &name = inputs_[x];
        if (name.empty()) {
            name = std::to_string(inputs_.size() - 1);
            decls += "input  X" + name + ": u8[" + join(axis_names(dims_).dims, ", ") + "]\n";
            decls += "input  S" + name + ": f32[1]\n";
            args.push_back({"X" + name, x});
            args.push_back({"S" + name, dq.inputs[1]});
            if (present(dq, 2)) {
                decls += "input  Z" + name + ": u8[1]\n";
                args.push_back({"Z" + name, dq.inputs[2]});
                zero_[x] = true;
            }
        }
        const std::string read = "X" + name + index_;
        return "(" + (zero_[x] ? "(" + read + " - Z" + name + "[0])" : read) + " * S" + name + "[0])";
    }

    const ModelGraph &g_;
    const NodeFree &free_;
    Dims dims_;
    std::string index_;  // "[i0, i1, ...]"
    std::map<std::string, std::string> inputs_;  // u8 tensor -> its number
    std::map<std::string, bool> zero_;           // u8 tensor -> has a zero point input
};

// Whether every value written inside the chain is read only inside it (or by `q`).
bool closed(const ModelGraph &g, const std::set<int> &nodes, int q) {
    for (int i : nodes)
        for (const std::string &t : g.nodes[i].outputs) {
            if (std::find(g.outputs.begin(), g.outputs.end(), t) != g.outputs.end()) return false;
            auto it = g.consumers.find(t);
            if (it == g.consumers.end()) continue;
            for (int r : it->second)
                if (r != q && !nodes.count(r)) return false;
        }
    return true;
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

}  // namespace

std::optional<SubgraphKernel> fuse_quantized_chain(const ModelGraph &g, const GraphNode &q, const NodeFree &free) {
    if (q.op_type != "QuantizeLinear" || g.tensor(q.outputs[0]).elem_type != kOnnxUint8 ||
        !single_constant(g, q.inputs[1]) || (present(q, 2) && !single_constant(g, q.inputs[2])))
        return std::nullopt;
    const Dims dims = g.tensor(q.outputs[0]).dims;
    const AxisNames axes = axis_names(dims);
    const std::string at = "[" + join(axes.vars, ", ") + "]", decl = "[" + join(axes.dims, ", ") + "]";
    ChainBuilder chain(g, free, dims, at);
    std::string e;
    try {
        e = chain.expr(q.inputs[0]);
    } catch (const NoChain &) {
        return std::nullopt;
    }
    if (chain.operators.empty() || !closed(g, chain.nodes, q.index)) return std::nullopt;
    std::string decls = chain.decls + "input  YS: f32[1]\n";
    std::vector<std::pair<std::string, std::string>> args = chain.args;
    args.push_back({"YS", q.inputs[1]});
    std::string zero = "0.0";
    if (present(q, 2)) {
        decls += "input  YZ: u8[1]\n";
        args.push_back({"YZ", q.inputs[2]});
        zero = "YZ[0]";
    }
    args.push_back({"Y", q.outputs[0]});
    std::vector<std::string> ops;
    for (auto it = chain.operators.rbegin(); it != chain.operators.rend(); ++it) ops.push_back(lower(*it));
    const std::string name = "qdq_" + join(ops, "_");
    std::string text = std::string(kGeneratedHeader) +
                       "# A QDQ chain: u8 inputs dequantized, " + join(ops, ", ") +
                       " in float32, requantized to u8 (round half to even, zero point, saturation).\n";
    text += "op " + name + "\nparam " + join(axes.dims, ", ") + "\n" + decls + "local  R: f32" + decl + "\noutput Y: u8" + decl + "\n";
    text += "R" + at + " = min(max(round(" + e + " / YS[0]) + " + zero + ", 0.0), 255.0)\n";
    text += "Y" + at + " = R" + at + "\n";
    SubgraphKernel k = generated_kernel("elementwise", name, text, shape_text(axes.shape), args);
    k.pointwise = true;
    k.nodes.assign(chain.nodes.begin(), chain.nodes.end());
    k.nodes.push_back(q.index);
    return k;
}

}  // namespace opgen::onnx_import
