#include "onnx/Partition.h"

#include "base/Error.h"
#include "onnx/OpText.h"
#include "onnx/QdqChains.h"
#include "onnx/QdqConv.h"
#include "onnx/QdqFusion.h"
#include "onnx/QdqPool.h"
#include "onnx/ops/Broadcast.h"
#include "onnx/ops/Gemm.h"
#include "onnx/ops/Layout.h"
#include "onnx/ops/Normalization.h"
#include "onnx/ops/Quantize.h"
#include "onnx/ops/Index.h"
#include "onnx/ops/Reduce.h"
#include "onnx/ops/Resize.h"
#include "onnx/ops/Window.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <set>
#include <utility>

namespace opgen::onnx_import {

namespace {

// One step of a fused epilogue, applied to the value computed so far.
struct Step {
    std::string kind;    // bias, add, relu, tanh, gelu, scale
    std::string tensor;  // bias or residual tensor
    double value = 1.0;  // scale
    std::vector<int> nodes;
};

// The value after `steps`, starting from `base` (an access such as "Z[n, f, y, x]"); `channel`
// indexes the bias and `at` the residual tensor R.
std::string epilogue(std::string e, const std::vector<Step> &steps, const std::string &channel, const std::string &at) {
    for (const auto &s : steps) {
        if (s.kind == "bias") e = e + " + bias[" + channel + "]";
        else if (s.kind == "add") e = e + " + R[" + at + "]";
        else if (s.kind == "relu") e = "max(" + e + ", 0.0)";
        else if (s.kind == "relu6") e = "min(max(" + e + ", 0.0), 6.0)";
        else if (s.kind == "tanh") e = "tanh(" + e + ")";
        else if (s.kind == "gelu") e = "0.5 * (" + e + ") * (1.0 + erf((" + e + ") * 0.7071067811865476))";
        else if (s.kind == "scale") e = "(" + e + ") * " + literal(s.value);
    }
    return e;
}

std::string step_suffix(const std::vector<Step> &steps) {
    std::string s;
    for (const auto &st : steps) s += "_" + st.kind;
    return s;
}

std::string epilogue_doc(const std::vector<Step> &steps) {
    std::vector<std::string> parts;
    for (const auto &s : steps) {
        if (s.kind == "bias") parts.push_back("adds a per-channel bias");
        else if (s.kind == "add") parts.push_back("adds the residual R");
        else if (s.kind == "relu") parts.push_back("applies ReLU");
        else if (s.kind == "relu6") parts.push_back("applies ReLU6 (clamps to [0, 6])");
        else if (s.kind == "tanh") parts.push_back("applies tanh");
        else if (s.kind == "gelu") parts.push_back("applies the exact GELU 0.5 x (1 + erf(x / sqrt 2))");
        else if (s.kind == "scale") parts.push_back("scales by " + literal(s.value));
    }
    return parts.empty() ? "" : ", then " + join(parts, ", ");
}

const char *const kHeader = kGeneratedHeader;

class Partitioner {
public:
    explicit Partitioner(const ModelGraph &g) : g_(g), taken_(g.nodes.size(), false) {}

    Partition run() {
        reserve_attention_transposes();
        place_quantized_kernels();
        for (const auto &n : g_.nodes) {
            if (taken_[n.index]) continue;
            try {
                place(n);
            } catch (const Unsupported &u) {
                unsupported_[n.op_type + " (" + u.reason + ")"]++;
            }
        }
        report_unsupported();
        // A subgraph runs where its last node was: everything it reads is computed by then,
        // because an absorbed value has no reader outside its subgraph.
        std::stable_sort(order_.begin(), order_.end());
        Partition p;
        for (const auto &[last, i] : order_) p.kernels.push_back(kernels_[i]);
        // Views in graph order, each after its source (the identity requantizations are found
        // before the walk).
        p.views = views_;
        std::stable_sort(p.views.begin(), p.views.end(),
                         [](const TensorView &a, const TensorView &b) { return a.node < b.node; });
        for (const auto &[name, r] : relayouts_) p.relayouts.push_back(r);
        return p;
    }

private:
    const ModelGraph &g_;
    std::vector<bool> taken_;
    std::map<int, std::map<int, int>> transposes_;  // batched MatMul -> operand -> its Transpose node
    std::map<std::string, int> unsupported_;
    std::vector<SubgraphKernel> kernels_;
    std::vector<std::pair<int, size_t>> order_;  // (last node, kernel)
    std::vector<TensorView> views_;
    std::set<int> identity_views_;  // QuantizeLinear nodes placed as views (identity_requantization)
    std::map<std::string, std::string> texts_;  // generated op name -> text
    std::map<std::string, WeightRelayout> relayouts_;  // by new tensor name
    std::set<std::string> output_roots_;                // tensors a graph output is a view of

    // The name of weight `w` in `layout`, recorded for compile_model to add to the graph.
    std::string relaid(const std::string &w, const std::string &layout) {
        WeightRelayout r = make_relayout(w, dims(w), layout);
        std::string name = r.tensor;
        relayouts_.try_emplace(name, std::move(r));
        return name;
    }

    const Dims &dims(const std::string &t) const { return g_.tensor(t).dims; }

    bool is_output(const std::string &t) const {
        return std::find(g_.outputs.begin(), g_.outputs.end(), t) != g_.outputs.end();
    }

    // The only reader of `t`, if it has exactly one, is not a graph output and is still free.
    const GraphNode *sole_reader(const std::string &t) const {
        auto it = g_.consumers.find(t);
        if (it == g_.consumers.end() || it->second.size() != 1 || is_output(t)) return nullptr;
        int i = it->second[0];
        return taken_[i] ? nullptr : &g_.nodes[i];
    }

    const GraphNode *producer(const std::string &t) const {
        auto it = g_.producer.find(t);
        return it == g_.producer.end() ? nullptr : &g_.nodes[it->second];
    }

    bool scalar(const std::string &t, double &v) const {
        if (!g_.is_weight(t)) return false;
        const auto &w = g_.tensor(t);
        if (w.values.size() != 1) return false;
        v = w.values[0];
        return true;
    }

    struct ClipBounds {
        std::optional<double> lo, hi;  // absent: no bound on that side
    };

    // The bounds of a Clip: attributes up to opset 6, constant inputs from opset 11 (an empty or
    // absent input: no bound); nullopt when a bound is computed at run time.
    std::optional<ClipBounds> clip_bounds(const GraphNode &n) const {
        ClipBounds b;
        if (n.has("min")) b.lo = n.float_attr("min", 0);
        if (n.has("max")) b.hi = n.float_attr("max", 0);
        for (size_t i = 1; i < std::min<size_t>(n.inputs.size(), 3); i++) {
            if (n.inputs[i].empty()) continue;
            double v = 0;
            if (!scalar(n.inputs[i], v)) return std::nullopt;
            (i == 1 ? b.lo : b.hi) = v;
        }
        return b;
    }

    // Whether `n` is a Clip to [0, 6]: ReLU6 as exporters write it (MobileNet).
    bool is_relu6(const GraphNode &n) const {
        if (n.op_type != "Clip") return false;
        std::optional<ClipBounds> b = clip_bounds(n);
        return b && b->lo == 0.0 && b->hi == 6.0;
    }

    std::string other_input(const GraphNode &n, const std::string &t) const {
        return n.inputs.size() == 2 ? (n.inputs[0] == t ? n.inputs[1] : n.inputs[0]) : "";
    }

    // x * 0.5 * (1 + erf(x / sqrt 2)) as exporters write it: Div (or Mul by 1/sqrt 2), Erf, Add 1,
    // Mul by x, Mul by 0.5. Returns the nodes and sets `out` when `x` starts that pattern.
    std::vector<int> match_gelu(const std::string &x, std::string &out) const {
        auto it = g_.consumers.find(x);
        if (it == g_.consumers.end() || it->second.size() != 2 || is_output(x)) return {};
        for (int first : it->second) {
            const GraphNode &d = g_.nodes[first];
            double c = 0;
            bool divides = d.op_type == "Div" && d.inputs.size() == 2 && d.inputs[0] == x && scalar(d.inputs[1], c) &&
                           std::fabs(c - std::sqrt(2.0)) < 1e-5;
            bool multiplies = d.op_type == "Mul" && scalar(other_input(d, x), c) && std::fabs(c - std::sqrt(0.5)) < 1e-6;
            if (!divides && !multiplies) continue;
            const GraphNode *e = sole_reader(d.outputs[0]);
            if (!e || e->op_type != "Erf") return {};
            const GraphNode *a = sole_reader(e->outputs[0]);
            if (!a || a->op_type != "Add" || !scalar(other_input(*a, e->outputs[0]), c) || c != 1.0) return {};
            const GraphNode *m = sole_reader(a->outputs[0]);
            if (!m || m->op_type != "Mul" || other_input(*m, a->outputs[0]) != x) return {};
            const GraphNode *h = sole_reader(m->outputs[0]);
            if (!h || h->op_type != "Mul" || !scalar(other_input(*h, m->outputs[0]), c) || c != 0.5) return {};
            out = h->outputs[0];
            return {d.index, e->index, a->index, m->index, h->index};
        }
        return {};
    }

    // A constant holding one value per channel, broadcast along axis `channel_axis` of a tensor of
    // dimensions `of` ([F], [F, 1, 1] or [1, F, 1, 1] for NCHW; [N] for rows).
    bool is_channel_row(const std::string &w, const Dims &of, size_t channel_axis, int64_t channels) const {
        const Dims &d = dims(w);
        int64_t at = int64_t(d.size()) - int64_t(of.size() - channel_axis);
        return g_.tensor(w).elements() == channels && d.size() <= of.size() && at >= 0 && d[size_t(at)] == channels;
    }

    // Absorbs the epilogue that follows `t`: each step's kind must be in `allowed`; a bias only
    // first, a residual add once. `channels` is the bias length; `channel_axis` where it sits.
    std::vector<Step> absorb(std::string &t, const std::set<std::string> &allowed, std::vector<Step> steps,
                             int64_t channels, size_t channel_axis, std::vector<int> &nodes) {
        for (;;) {
            std::string gelu_out;
            if (allowed.count("gelu")) {
                std::vector<int> g = match_gelu(t, gelu_out);
                if (!g.empty()) {
                    steps.push_back({"gelu", "", 1.0, g});
                    t = gelu_out;
                    continue;
                }
            }
            const GraphNode *n = sole_reader(t);
            if (!n) break;
            std::string other = other_input(*n, t);
            double c = 0;
            auto has = [&](const char *kind) {
                return std::any_of(steps.begin(), steps.end(), [&](const Step &s) { return s.kind == kind; });
            };
            Step s;
            if (n->op_type == "Add" && allowed.count("bias") && steps.empty() && g_.is_weight(other) &&
                is_channel_row(other, dims(t), channel_axis, channels)) {
                s = {"bias", other, 1.0, {}};
            } else if (n->op_type == "Add" && allowed.count("add") && !has("add") && !other.empty() &&
                       !g_.is_weight(other) && dims(other) == dims(t)) {
                s = {"add", other, 1.0, {}};
            } else if ((n->op_type == "Relu" || n->op_type == "Tanh") && allowed.count(n->op_type == "Relu" ? "relu" : "tanh")) {
                s = {n->op_type == "Relu" ? "relu" : "tanh", "", 1.0, {}};
            } else if (is_relu6(*n) && allowed.count("relu6")) {
                s = {"relu6", "", 1.0, {}};
            } else if ((n->op_type == "Mul" || (n->op_type == "Div" && n->inputs[0] == t)) && allowed.count("scale") &&
                       !has("scale") && scalar(other, c) && c != 0) {
                s = {"scale", "", n->op_type == "Mul" ? c : 1.0 / c, {}};
            } else {
                break;
            }
            s.nodes = {n->index};
            steps.push_back(s);
            t = n->outputs[0];
        }
        for (const auto &s : steps) nodes.insert(nodes.end(), s.nodes.begin(), s.nodes.end());
        return steps;
    }

    // Records a subgraph, marking its nodes taken; a generated op's text is shared by name, and a
    // different text under a name already used gets a numbered name.
    void emit(SubgraphKernel k, std::vector<int> nodes) {
        std::sort(nodes.begin(), nodes.end());
        for (int i : nodes) taken_[i] = true;
        if (k.generated) {
            std::string base = k.op;
            for (int n = 2;; n++) {
                auto it = texts_.find(k.op);
                std::string text = k.text;
                // The op line carries the name.
                size_t at = text.find("\nop " + base + "\n");
                internal_check(at != std::string::npos) << "generated text lacks 'op " << base << "'";
                text.replace(at, base.size() + 5, "\nop " + k.op + "\n");
                if (it == texts_.end()) {
                    texts_[k.op] = text;
                    k.text = text;
                    break;
                }
                if (it->second == text) {
                    k.text = text;
                    break;
                }
                k.op = base + "_" + std::to_string(n);
            }
        }
        k.nodes = nodes;
        order_.push_back({nodes.back(), kernels_.size()});
        kernels_.push_back(std::move(k));
    }

    // Records a subgraph whose op is generated: `text` named `name`.
    void emit_generated(SubgraphKernel k, const std::string &name, const std::string &text, std::vector<int> nodes) {
        k.op = name;
        k.generated = true;
        k.text = text;
        emit(std::move(k), std::move(nodes));
    }

    // Whether a MatMul of two activations is a plain batched product: equal batch dimensions and
    // inner sizes, float32 operands (else onnx/ops/Gemm.h's general form computes it).
    bool fits_batched(const GraphNode &n) const {
        const Dims &ad = dims(n.inputs[0]), &bd = dims(n.inputs[1]);
        const size_t r = ad.size();
        return r >= 2 && bd.size() == r && Dims(ad.begin(), ad.end() - 2) == Dims(bd.begin(), bd.end() - 2) &&
               ad[r - 1] == bd[r - 2] && g_.tensor(n.inputs[0]).elem_type == 1 && g_.tensor(n.inputs[1]).elem_type == 1;
    }

    void reserve_attention_transposes() {
        for (const auto &n : g_.nodes) {
            if (n.op_type != "MatMul" || g_.is_weight(n.inputs[1]) || g_.is_weight(n.inputs[0]) || !fits_batched(n))
                continue;
            for (int i = 0; i < 2; i++) {
                const GraphNode *t = producer(n.inputs[i]);
                if (!t || t->op_type != "Transpose" || taken_[t->index]) continue;
                auto readers = g_.consumers.find(n.inputs[i]);
                if (readers->second.size() != 1 || is_output(n.inputs[i])) continue;
                transposes_[n.index][i] = t->index;
                taken_[t->index] = true;
            }
        }
    }

    // Quantized dense layers, convolutions and max pools as int8 kernels (QdqFusion.h, QdqConv.h,
    // QdqPool.h), then the float elementwise chains between Q/DQ pairs as one kernel each
    // (QdqChains.h; docs/design.md §3.2, QDQ fusion). Before the walk: their DequantizeLinear
    // nodes come before the nodes they feed.
    void place_quantized_kernels() {
        const SoleReader reader = [this](const std::string &t) { return sole_reader(t); };
        for (const auto &n : g_.nodes) {
            if (taken_[n.index]) continue;
            if (std::optional<SubgraphKernel> k = fuse_quantized_dense(g_, n, reader)) {
                emit(*k, k->nodes);
                continue;
            }
            for (SubgraphKernel &k : fuse_quantized_conv(g_, n, reader)) emit(k, k.nodes);
            if (std::optional<SubgraphKernel> k = fuse_quantized_max_pool(g_, n, reader)) emit(*k, k->nodes);
        }
        const NodeFree free = [this](int i) { return !taken_[size_t(i)]; };
        for (const auto &n : g_.nodes) {
            if (taken_[n.index]) continue;
            std::optional<SubgraphKernel> k = fuse_quantized_chain(g_, n, free);
            if (k) emit(*k, k->nodes);
        }
        for (const auto &n : g_.nodes)
            if (!taken_[n.index]) identity_requantization(n);
    }

    // A QuantizeLinear of a DequantizeLinear's output with the same constant scale and zero point
    // gives back the DQ's u8 input exactly (a QOperator model's conv output requantized for the
    // next conv): a view of it, no kernel. The DQ needs none either when nothing else reads it.
    void identity_requantization(const GraphNode &q) {
        if (q.op_type != "QuantizeLinear" || is_output(q.outputs[0])) return;
        const GraphNode *dq = producer(q.inputs[0]);
        if (!dq || dq->op_type != "DequantizeLinear") return;
        const std::string &x = dq->inputs[0], &y = q.outputs[0];
        if (g_.tensor(x).elem_type != g_.tensor(y).elem_type || dims(x) != dims(y)) return;
        const auto same = [&](size_t i) {
            const bool a = dq->inputs.size() > i && !dq->inputs[i].empty(), b = q.inputs.size() > i && !q.inputs[i].empty();
            if (a != b) return false;
            if (!a) return true;
            const GraphTensor &u = g_.tensor(dq->inputs[i]), &v = g_.tensor(q.inputs[i]);
            return g_.is_weight(u.name) && g_.is_weight(v.name) && u.values.size() == 1 && v.values.size() == 1 &&
                   u.elem_type == v.elem_type && u.values[0] == v.values[0];
        };
        if (!same(1) || !same(2)) return;
        views_.push_back({y, x, q.index});
        taken_[q.index] = true;
        identity_views_.insert(q.index);
        const auto readers = g_.consumers.find(q.inputs[0]);
        if (!is_output(q.inputs[0]) && std::all_of(readers->second.begin(), readers->second.end(),
                                                   [&](int r) { return identity_views_.count(r) > 0; }))
            taken_[dq->index] = true;
    }

    void place(const GraphNode &n) {
        const std::string &t = n.op_type;
        // Outputs without elements (a 0 extent) need no kernel: nothing is computed or written.
        if (std::all_of(n.outputs.begin(), n.outputs.end(),
                        [&](const std::string &o) { return o.empty() || g_.tensor(o).elements() == 0; })) {
            taken_[n.index] = true;
            return;
        }
        // Outputs folded into weights at compile time (WeightDequantize.h) need no kernel either.
        if (std::all_of(n.outputs.begin(), n.outputs.end(), [&](const std::string &o) { return g_.is_weight(o); })) {
            taken_[n.index] = true;
            return;
        }
        if (t == "Dropout") return dropout(n);
        if (t == "Reshape" || t == "Flatten" || t == "Squeeze" || t == "Unsqueeze" || t == "Identity")
            return view(n);
        if (t == "Cast" || t == "CastLike") return cast(n);
        if (t == "Conv") return tuned_or_general([&] { conv(n); }, n, window_kernels);
        if (t == "ConvTranspose" || t == "ConvInteger" || t == "QLinearConv") return emit_family(window_kernels(g_, n), n);
        if ((t == "MatMul" || t == "Gemm") && g_.is_weight(n.inputs[1]))
            return tuned_or_general([&] { dense(n); }, n, gemm_kernels);
        if (t == "MatMul") return tuned_or_general([&] { batched(n); }, n, gemm_kernels);
        if (t == "Gemm") return emit_family(gemm_kernels(g_, n), n);
        if (is_normalization(t)) return emit_family(normalization_kernels(g_, n), n);
        if (t == "MaxPool" || t == "AveragePool" || t == "GlobalAveragePool" || t == "GlobalMaxPool")
            return tuned_or_general([&] { pool(n); }, n, window_kernels);
        if (t == "Resize") return tuned_or_general([&] { emit_family(layout_kernels(g_, n), n); }, n, resize_kernels);
        if (is_layout(t)) return emit_family(layout_kernels(g_, n), n);
        if (is_broadcast(g_, n)) return emit_family(broadcast_kernels(g_, n), n);
        if (is_reduction(t) && reduces_nothing(g_, n)) return view(n);
        if (is_reduction(t)) return emit_family({reduce_kernel(g_, n)}, n);
        if (is_index_op(t)) return emit_family(index_kernels(g_, n), n);
        if (is_quantized_op(t)) return emit_family(quantized_kernels(g_, n), n);
        if (t == "Transpose") return transpose(n);
        if (t == "Add" || t == "Sub" || t == "Mul" || t == "Div" || t == "Relu" || t == "Sigmoid" || t == "Tanh" ||
            t == "Erf" || t == "Exp" || t == "Log" || t == "Sqrt" || t == "Abs" || t == "Neg" || t == "Clip" ||
            t == "LeakyRelu" || t == "Elu" || t == "Selu" || t == "Celu" || t == "HardSigmoid" || t == "HardSwish" ||
            t == "Softplus" || t == "Softsign" || t == "Reciprocal" || t == "Max" || t == "Min" || t == "Pow" ||
            t == "Sin" || t == "Cos")
            return elementwise(n);
        // The shape operators fold into constants when their inputs are known (ShapeFold.h).
        if (t == "Shape" || t == "Size" || t == "ConstantOfShape" || t == "Range")
            throw Unsupported{"inputs known only at run time"};
        throw Unsupported{"no opgen op"};
    }

    // A node in the partitioner's tuned forms (bundled ops, fused epilogues, channel blocking)
    // when they fit, else in the general form of an operator family (onnx/ops/Window.h, Gemm.h).
    // `place_tuned` throws before it records anything.
    void tuned_or_general(const std::function<void()> &place_tuned, const GraphNode &n,
                          std::vector<SubgraphKernel> (*general)(const ModelGraph &, const GraphNode &)) {
        try {
            place_tuned();
        } catch (const Unsupported &) {
            emit_family(general(g_, n), n);
        }
    }

    // The kernels an operator family (onnx/ops/) made for node `n`, each covering it.
    void emit_family(std::vector<SubgraphKernel> kernels, const GraphNode &n) {
        for (SubgraphKernel &k : kernels) emit(std::move(k), {n.index});
    }

    // The tensor whose buffer `t` is, following the views recorded so far.
    std::string view_root(std::string t) const {
        for (bool found = true; found;) {
            found = false;
            for (const TensorView &v : views_)
                if (v.tensor == t) t = v.source, found = true;
        }
        return t;
    }

    // Dropout at inference is the identity, and its mask all true. In training mode with a ratio
    // above 0 it draws random numbers, which a compiled model does not.
    void dropout(const GraphNode &n) {
        auto constant = [&](size_t i, double fallback) {
            if (n.inputs.size() <= i || n.inputs[i].empty()) return fallback;
            std::vector<double> v = constant_values(g_, n.inputs[i], "a training mode or its ratio");
            return v.empty() ? fallback : v[0];
        };
        const bool training = n.inputs.size() > 2 && !n.inputs[2].empty() && constant(2, 0.0) != 0;
        if (training && constant(1, 0.5) != 0) throw Unsupported{"random numbers (training mode)"};
        if (n.outputs.size() > 1 && !n.outputs[1].empty()) all_true(n, n.outputs[1]);
        view(n);
    }

    // `mask` = true everywhere, shaped as the node's first input (read only to be compared with
    // itself: an op reads at least one tensor).
    void all_true(const GraphNode &n, const std::string &mask) {
        const std::string &x = n.inputs[0];
        std::string text = std::string(kHeader) + "# Y = true (1) for every element of X (a Dropout's mask at inference).\n";
        text += "op all_true" + type_suffix(g_, {x, mask}) + "\nparam N\ninput  X: " + type_name(g_, x) +
                "[N]\noutput Y: u8[N]\nY[i] = select(X[i] == X[i] || X[i] != X[i], 1, 0)\n";
        SubgraphKernel k;
        k.kind = "elementwise";
        k.shape = shape_text({{"N", g_.tensor(x).elements()}});
        k.args = {{"X", x}, {"Y", mask}};
        emit_generated(k, "all_true" + type_suffix(g_, {x, mask}), text, {n.index});
        taken_[n.index] = false;  // the data output is still to be placed, as a view
    }

    void view(const GraphNode &n) {
        const std::string &y = n.outputs[0];
        if (is_output(y)) {
            // A graph output has a buffer of its own, given by the caller: a view of an input, a
            // weight, another output or what another output views is copied there instead.
            const std::string root = view_root(n.inputs[0]);
            const GraphTensor &r = g_.tensor(root);
            if (r.kind != TensorKind::Intermediate || !output_roots_.insert(root).second) return copy(n);
        }
        views_.push_back({y, n.inputs[0], n.index});
        taken_[n.index] = true;
    }

    // A Cast (or CastLike) to the type its input has already is a view; between types, a
    // converting kernel (onnx/ops/Broadcast.h).
    void cast(const GraphNode &n) {
        if (g_.tensor(n.inputs[0]).elem_type != g_.tensor(n.outputs[0]).elem_type)
            return emit_family(broadcast_kernels(g_, n), n);
        view(n);
    }

    // Y = X element by element: the buffer of a view that must be a tensor of its own.
    void copy(const GraphNode &n) {
        const int64_t count = g_.tensor(n.inputs[0]).elements();
        const std::string type = type_name(g_, n.inputs[0]), name = "copy" + type_suffix(g_, {n.inputs[0]});
        std::string text = std::string(kHeader) + "# A copy of X (an ONNX " + n.op_type + " writing a graph output).\n";
        text += "op " + name + "\nparam N\ninput  X: " + type + "[N]\noutput Y: " + type + "[N]\nY[i] = X[i]\n";
        SubgraphKernel k;
        k.kind = "copy";
        k.shape = shape_text({{"N", count}});
        k.args = {{"X", n.inputs[0]}, {"Y", n.outputs[0]}};
        emit_generated(k, name, text, {n.index});
    }

    void require_float(const std::string &t) const { onnx_import::require_float(g_, t); }

    // One value for both spatial axes (and both sides, for pads).
    int64_t same(const Dims &v, const char *what) const {
        if (v.size() == 2 && v[0] == v[1]) return v[0];
        if (v.size() == 4 && v[0] == v[1] && v[1] == v[2] && v[2] == v[3]) return v[0];
        throw Unsupported{std::string("different ") + what + " per axis or side"};
    }

    int64_t pad_of(const GraphNode &n) const {
        std::string mode = n.has("auto_pad") ? n.attrs.at("auto_pad").s : "NOTSET";
        if (mode == "VALID") return 0;
        if (mode != "NOTSET") throw Unsupported{"auto_pad " + mode};
        return same(n.ints_attr("pads", {0, 0, 0, 0}), "pads");
    }

    void conv(const GraphNode &n) {
        const std::string &x = n.inputs[0], &w = n.inputs[1];
        require_float(x);
        if (!g_.is_weight(w)) throw Unsupported{"weights computed at run time"};
        const Dims &xd = dims(x), &wd = dims(w);
        if (xd.size() != 4 || wd.size() != 4) throw Unsupported{"not a 2-D convolution"};
        int64_t group = n.int_attr("group", 1);
        bool depthwise = group > 1 && group == xd[1] && wd[0] == xd[1] && wd[1] == 1;
        if (group != 1 && !depthwise) throw Unsupported{"grouped convolution (group " + std::to_string(group) + ")"};
        int64_t stride = same(n.ints_attr("strides", {1, 1}), "strides");
        int64_t dilation = same(n.ints_attr("dilations", {1, 1}), "dilations");
        int64_t pad = pad_of(n);
        std::vector<Step> steps;
        std::vector<int> nodes = {n.index};
        bool bias = n.inputs.size() > 2 && !n.inputs[2].empty();
        if (bias) steps.push_back({"bias", n.inputs[2], 1.0, {}});
        std::string y = n.outputs[0];
        steps = absorb(y, {"bias", "add", "relu", "relu6"}, steps, wd[0], 1, nodes);

        std::string name = std::string(depthwise ? "depthwise_conv2d" : "conv2d") + step_suffix(steps);
        SubgraphKernel k;
        k.kind = "conv";
        std::vector<std::pair<std::string, int64_t>> shape = {{"N", xd[0]}, {"C", xd[1]}, {"H", xd[2]}, {"W", xd[3]}};
        if (!depthwise) shape.push_back({"F", wd[0]});
        shape.insert(shape.end(), {{"KH", wd[2]}, {"KW", wd[3]}, {"stride", stride}, {"pad", pad}, {"dilation", dilation}});
        k.shape = shape_text(shape);
        k.args = {{"X", x}, {"Wt", w}};
        for (const auto &s : steps)
            if (!s.tensor.empty()) k.args.push_back({s.kind == "bias" ? "bias" : "R", s.tensor});
        k.args.push_back({"Y", y});
        if (name == "conv2d" || name == "conv2d_bias_relu" || name == "depthwise_conv2d") {
            k.op = name == "conv2d" ? "conv2d_nchw" : name;
            return emit(k, nodes);
        }
        std::string f = depthwise ? "c" : "f";
        std::string F = depthwise ? "C" : "F";
        std::string text = std::string(kHeader) + "# " + (depthwise ? "Depthwise 2-D convolution" : "2-D convolution") +
                           ", NCHW layout (cross-correlation; reads outside X are zero)" + epilogue_doc(steps) + ".\n";
        text += "op " + name + "\n";
        text += std::string("param N, C, H, W, ") + (depthwise ? "" : "F, ") + "KH, KW\n";
        text += "attr stride = 1, pad = 0, dilation = 1\n";
        text += "let OH = (H + 2*pad - dilation*(KH - 1) - 1) / stride + 1\n";
        text += "let OW = (W + 2*pad - dilation*(KW - 1) - 1) / stride + 1\n";
        text += "input  X: f32[N, C, H, W] zero_pad\n";
        text += std::string("input  Wt: f32[") + (depthwise ? "C, 1" : "F, C") + ", KH, KW]\n";
        for (const auto &s : steps) {
            if (s.kind == "bias") text += "input  bias: f32[" + F + "]\n";
            if (s.kind == "add") text += "input  R: f32[N, " + F + ", OH, OW]\n";
        }
        text += "local  Z: f32[N, " + F + ", OH, OW]\n";
        text += "output Y: f32[N, " + F + ", OH, OW]\n";
        std::string at = "n, " + f + ", y, x";
        text += "Z[" + at + "] = sum(" + std::string(depthwise ? "" : "c: C, ") + "ry: KH, rx: KW) X[n, c, y*stride + ry*dilation - pad,\n";
        text += std::string("    x*stride + rx*dilation - pad] * Wt[") + (depthwise ? "c, 0" : "f, c") + ", ry, rx]\n";
        text += "Y[" + at + "] = " + epilogue("Z[" + at + "]", steps, f, at) + "\n";
        emit_generated(k, name, text, nodes);
    }

    void dense(const GraphNode &n) {
        const std::string &a = n.inputs[0];
        std::string b = n.inputs[1];
        require_float(a);
        const Dims &ad = dims(a), bd = dims(b);
        if (ad.size() < 2 || bd.size() != 2) throw Unsupported{"operands not [..., K] x [K, N]"};
        bool nt = false;
        std::vector<Step> steps;
        if (n.op_type == "Gemm") {
            if (n.int_attr("transA", 0) != 0) throw Unsupported{"transA"};
            if (n.float_attr("alpha", 1.0) != 1.0 || n.float_attr("beta", 1.0) != 1.0) throw Unsupported{"alpha or beta not 1"};
            nt = n.int_attr("transB", 0) != 0;
            if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
                const std::string &c = n.inputs[2];
                int64_t cols = nt ? bd[0] : bd[1];
                if (!g_.is_weight(c) || g_.tensor(c).elements() != cols) throw Unsupported{"bias C not a constant row"};
                steps.push_back({"bias", c, 1.0, {}});
            }
        }
        int64_t k_ = ad.back(), n_ = nt ? bd[0] : bd[1];
        if ((nt ? bd[1] : bd[0]) != k_) throw Unsupported{"inner sizes differ"};
        std::vector<int> nodes = {n.index};
        std::string y = n.outputs[0];
        steps = absorb(y, {"bias", "add", "relu", "relu6", "tanh", "gelu"}, steps, n_, dims(y).size() - 1, nodes);
        // B^T of a weight is laid out once, at compile time: the kernel then reads B's rows
        // contiguously along N, which a GEMV streams and a GEMM packs as it does any matmul.
        if (nt) b = relaid(b, "transpose"), nt = false;
        std::string name = std::string("matmul") + (nt ? "_nt" : "") + step_suffix(steps);
        SubgraphKernel k;
        k.kind = "dense";
        k.shape = shape_text({{"M", product(ad, 0, ad.size() - 1)}, {"N", n_}, {"K", k_}});
        k.args = {{"A", a}, {"B", b}};
        for (const auto &s : steps)
            if (!s.tensor.empty()) k.args.push_back({s.kind == "bias" ? "bias" : "R", s.tensor});
        k.args.push_back({"C", y});
        if (name == "matmul" || name == "matmul_bias_relu" || name == "matmul_bias_gelu") {
            k.op = name;
            return emit(k, nodes);
        }
        std::string text = std::string(kHeader) + "# Matrix product of A (M x K) and " +
                           (nt ? "the transpose of B (N x K)" : "B (K x N)") + epilogue_doc(steps) + ".\n";
        text += "op " + name + "\nparam M, N, K\ninput  A: f32[M, K]\n";
        text += std::string("input  B: f32[") + (nt ? "N, K" : "K, N") + "]\n";
        for (const auto &s : steps) {
            if (s.kind == "bias") text += "input  bias: f32[N]\n";
            if (s.kind == "add") text += "input  R: f32[M, N]\n";
        }
        text += "local  P: f32[M, N]\noutput C: f32[M, N]\n";
        text += std::string("P[m, n] = sum(k: K) A[m, k] * ") + (nt ? "B[n, k]" : "B[k, n]") + "\n";
        text += "C[m, n] = " + epilogue("P[m, n]", steps, "n", "m, n") + "\n";
        emit_generated(k, name, text, nodes);
    }

    // The two operands of a batched MatMul, each read through the Transpose reserved for it, if
    // any (perm empty: read as it is).
    struct BatchedInputs {
        std::string src[2];
        Dims perm[2];
    };
    BatchedInputs read_through_transposes(const GraphNode &n, std::vector<int> &nodes) {
        BatchedInputs in;
        for (int i = 0; i < 2; i++) {
            in.src[i] = n.inputs[i];
            auto it = transposes_.find(n.index);
            if (it != transposes_.end() && it->second.count(i)) {
                const GraphNode &t = g_.nodes[it->second.at(i)];
                in.src[i] = t.inputs[0];
                in.perm[i] = t.ints_attr("perm", {});
                if (in.perm[i].empty())
                    for (int64_t d = int64_t(dims(in.src[i]).size()) - 1; d >= 0; d--) in.perm[i].push_back(d);
                nodes.push_back(t.index);
            }
            require_float(in.src[i]);
        }
        return in;
    }

    // The epilogue a batched MatMul absorbs: a constant scale and the output's transpose, each at
    // most once, in either order; `y` ends as the last absorbed node's output.
    struct BatchedOutput {
        std::string y;
        std::vector<Step> steps;
        Dims operm;
    };
    BatchedOutput absorb_batched_epilogue(std::string y, std::vector<int> &nodes) {
        BatchedOutput out;
        for (;;) {
            const GraphNode *next = sole_reader(y);
            double c = 0;
            if (next && next->op_type == "Transpose" && out.operm.empty() && next->has("perm")) {
                out.operm = next->ints_attr("perm", {});
                nodes.push_back(next->index);
                y = next->outputs[0];
                continue;
            }
            if (next && out.steps.empty() &&
                (next->op_type == "Mul" || (next->op_type == "Div" && next->inputs[0] == y)) &&
                scalar(other_input(*next, y), c) && c != 0) {
                out.steps.push_back({"scale", "", next->op_type == "Mul" ? c : 1.0 / c, {next->index}});
                nodes.push_back(next->index);
                y = next->outputs[0];
                continue;
            }
            break;
        }
        out.y = y;
        return out;
    }

    // An operand's declared dims and index read, in its source layout: the logical axes
    // (names/vars plus its row and column) placed by `perm` (empty: in order).
    static std::pair<std::string, std::string> operand_axes(const std::vector<std::string> &names,
                                                            const std::vector<std::string> &vars, const Dims &perm,
                                                            const std::string &row, const std::string &col,
                                                            const std::string &rv, const std::string &cv) {
        std::vector<std::string> tn = names, tv = vars;
        tn.push_back(row), tn.push_back(col), tv.push_back(rv), tv.push_back(cv);
        size_t r = tn.size();
        std::vector<std::string> sn(r), sv(r);
        for (size_t k = 0; k < r; k++) {
            size_t axis = perm.empty() ? k : size_t(perm[k]);
            sn[axis] = tn[k];
            sv[axis] = tv[k];
        }
        return {join(sn, ", "), join(sv, ", ")};
    }

    // The op text of a batched product with transposed reads, a scale or a transposed write.
    static std::string batched_text(const std::string &name, const std::vector<std::string> &names,
                                    const std::vector<std::string> &vars, const BatchedInputs &in,
                                    const BatchedOutput &out) {
        const size_t r = names.size() + 2;
        auto [adecl, aread] = operand_axes(names, vars, in.perm[0], "M", "K", "m", "k");
        auto [bdecl, bread] = operand_axes(names, vars, in.perm[1], "K", "N", "k", "n");
        std::vector<std::string> yn = names, yv = vars;
        yn.push_back("M"), yn.push_back("N"), yv.push_back("m"), yv.push_back("n");
        std::vector<std::string> on = yn, ov = yv;
        if (!out.operm.empty())
            for (size_t k = 0; k < r; k++) on[k] = yn[size_t(out.operm[k])], ov[k] = yv[size_t(out.operm[k])];
        std::string text = std::string(kHeader) + "# Batched matrix product C[b] = A[b] B[b] over the leading axes";
        if (!in.perm[0].empty() || !in.perm[1].empty()) text += ", reading A and B through their transposes";
        if (!out.operm.empty()) text += ", writing C transposed";
        text += epilogue_doc(out.steps) + ".\n";
        text += "op " + name + "\nparam " + join(names, ", ") + (names.empty() ? "" : ", ") + "M, N, K\n";
        text += "input  A: f32[" + adecl + "]\ninput  B: f32[" + bdecl + "]\n";
        std::string sum = "sum(k: K) A[" + aread + "] * B[" + bread + "]";
        if (out.steps.empty()) {
            text += "output C: f32[" + join(on, ", ") + "]\n";
            text += "C[" + join(ov, ", ") + "] = " + sum + "\n";
            return text;
        }
        text += "local  P: f32[" + join(yn, ", ") + "]\noutput C: f32[" + join(on, ", ") + "]\n";
        text += "P[" + join(yv, ", ") + "] = " + sum + "\n";
        text += "C[" + join(ov, ", ") + "] = " + epilogue("P[" + join(yv, ", ") + "]", out.steps, "", "") + "\n";
        return text;
    }

    // A MatMul of two activations, reading through the Transposes reserved for it and writing
    // through the Transpose that reads it; a constant scale folds into its epilogue.
    void batched(const GraphNode &n) {
        std::vector<int> nodes = {n.index};
        const BatchedInputs in = read_through_transposes(n, nodes);
        const Dims &ad = dims(n.inputs[0]), &bd = dims(n.inputs[1]);
        size_t r = ad.size();
        if (!fits_batched(n)) throw Unsupported{"broadcast or mismatched batch dimensions"};
        const BatchedOutput out = absorb_batched_epilogue(n.outputs[0], nodes);
        size_t nb = r - 2;
        std::vector<std::string> names, vars;  // logical axes of the product: B0.., M, N, K
        std::vector<std::pair<std::string, int64_t>> shape;
        for (size_t i = 0; i < nb; i++) {
            names.push_back("B" + std::to_string(i));
            vars.push_back("b" + std::to_string(i));
            shape.push_back({names.back(), ad[i]});
        }
        shape.insert(shape.end(), {{"M", ad[r - 2]}, {"N", bd[r - 1]}, {"K", ad[r - 1]}});
        SubgraphKernel k;
        k.kind = "attention";
        k.args = {{"A", in.src[0]}, {"B", in.src[1]}, {"C", out.y}};
        bool plain = in.perm[0].empty() && in.perm[1].empty() && out.operm.empty() && out.steps.empty();
        if (plain && r == 2) {
            k.op = "matmul";
            k.shape = shape_text({{"M", ad[0]}, {"N", bd[1]}, {"K", ad[1]}});
            return emit(k, nodes);
        }
        if (plain) {
            k.op = "batch_matmul";
            k.shape = shape_text({{"BATCH", product(ad, 0, nb)}, {"M", ad[r - 2]}, {"N", bd[r - 1]}, {"K", ad[r - 1]}});
            return emit(k, nodes);
        }
        std::string name = "batch_matmul";
        if (!in.perm[0].empty()) name += "_ta" + digits(in.perm[0]);
        if (!in.perm[1].empty()) name += "_tb" + digits(in.perm[1]);
        if (!out.steps.empty()) name += "_scale";
        if (!out.operm.empty()) name += "_to" + digits(out.operm);
        k.shape = shape_text(shape);
        emit_generated(k, name, batched_text(name, names, vars, in, out), nodes);
    }

    void pool(const GraphNode &n) {
        const std::string &x = n.inputs[0];
        require_float(x);
        const Dims &d = dims(x);
        if (d.size() != 4) throw Unsupported{"not 2-D pooling"};
        if (n.outputs.size() > 1 && !n.outputs[1].empty()) throw Unsupported{"indices output"};
        bool max = n.op_type.find("Max") != std::string::npos;
        int64_t kh = d[2], kw = d[3], stride = 1, pad = 0;
        if (n.op_type.rfind("Global", 0) != 0) {
            if (n.int_attr("ceil_mode", 0) != 0) throw Unsupported{"ceil_mode 1"};
            Dims ks = n.ints_attr("kernel_shape", {});
            if (ks.size() != 2) throw Unsupported{"kernel_shape not 2-D"};
            if (same(n.ints_attr("dilations", {1, 1}), "dilations") != 1) throw Unsupported{"dilated pooling"};
            kh = ks[0], kw = ks[1];
            stride = same(n.ints_attr("strides", {1, 1}), "strides");
            pad = pad_of(n);
            if (!max && pad > 0 && n.int_attr("count_include_pad", 0) == 0)
                throw Unsupported{"padded average excluding the padding"};
        }
        SubgraphKernel k;
        k.kind = "pool";
        k.op = max ? "max_pool2d" : "avg_pool2d";
        k.shape = shape_text({{"N", d[0]}, {"C", d[1]}, {"H", d[2]}, {"W", d[3]}, {"KH", kh}, {"KW", kw},
                              {"stride", stride}, {"pad", pad}});
        k.args = {{"X", x}, {"Y", n.outputs[0]}};
        emit(k, {n.index});
    }

    // An elementwise node left alone: bundled add, mul, relu and sigmoid; other unary functions,
    // Sub and Div, and an operand that is a scalar constant get a generated op on M x N.
    // x to a Pow node's constant exponent: products for the small integers (any sign of base, as
    // ONNX computes them), sqrt for 0.5, else exp(e log x) (NaN for a negative base, as pow gives
    // for a fractional exponent). Unsupported for an exponent computed at run time or a large
    // integer one.
    std::string power(const GraphNode &n, const std::string &x) const {
        double e = 0;
        if (n.inputs.size() != 2 || !scalar(n.inputs[1], e)) throw Unsupported{"an exponent computed at run time"};
        if (e == 0.5) return "sqrt(" + x + ")";
        if (e != std::floor(e)) return "exp(" + literal(e) + " * log(" + x + "))";
        if (std::fabs(e) > 4) throw Unsupported{"an integer exponent beyond 4"};
        if (e == 0) return "1.0";
        std::string product = x;
        for (int i = 1; i < int(std::fabs(e)); i++) product += " * " + x;
        return e > 0 ? product : "1.0 / (" + product + ")";
    }

    // The op-language expression of an activation ONNX node `n` applied to `x`, and its op name;
    // false for a node that is not one of them. The formulas are ONNX's (opset 17) with its
    // attribute defaults; softplus in the form that does not overflow.
    bool activation(const GraphNode &n, const std::string &x, std::string &expr, std::string &name) const {
        const std::string &t = n.op_type;
        auto a = [&](const char *attr, double fallback) { return literal(n.float_attr(attr, fallback)); };
        const std::string softplus = "max(" + x + ", 0.0) + log(1.0 + exp(-abs(" + x + ")))";
        if (t == "Clip") {
            std::optional<ClipBounds> b = clip_bounds(n);
            if (!b) throw Unsupported{"clip bounds computed at run time"};
            expr = x;
            if (b->lo) expr = "max(" + expr + ", " + literal(*b->lo) + ")";
            if (b->hi) expr = "min(" + expr + ", " + literal(*b->hi) + ")";
            name = "clip";
        } else if (t == "LeakyRelu") {
            expr = "select(" + x + " > 0.0, " + x + ", " + a("alpha", 0.01) + " * " + x + ")";
            name = "leaky_relu";
        } else if (t == "Elu" || t == "Selu") {
            std::string alpha = t == "Elu" ? a("alpha", 1.0) : a("alpha", 1.67326319217681884765625);
            expr = "select(" + x + " > 0.0, " + x + ", " + alpha + " * (exp(" + x + ") - 1.0))";
            if (t == "Selu") expr = a("gamma", 1.05070102214813232421875) + " * " + expr;
            name = t == "Elu" ? "elu" : "selu";
        } else if (t == "Celu") {
            std::string alpha = a("alpha", 1.0);
            expr = "max(" + x + ", 0.0) + min(0.0, " + alpha + " * (exp(" + x + " / " + alpha + ") - 1.0))";
            name = "celu";
        } else if (t == "HardSigmoid") {
            expr = "max(0.0, min(1.0, " + a("alpha", 0.2) + " * " + x + " + " + a("beta", 0.5) + "))";
            name = "hard_sigmoid";
        } else if (t == "HardSwish") {
            expr = x + " * max(0.0, min(1.0, " + x + " / 6.0 + 0.5))";
            name = "hard_swish";
        } else if (t == "Softplus") {
            expr = softplus;
            name = "softplus";
        } else if (t == "Softsign") {
            expr = x + " / (1.0 + abs(" + x + "))";
            name = "softsign";
        } else if (t == "Reciprocal") {
            expr = "1.0 / " + x;
            name = "reciprocal";
        } else if (t == "Pow") {
            expr = power(n, x);
            name = "pow";
        } else {
            return false;
        }
        return true;
    }

    // A binary node whose operands broadcast by numpy's rules (onnx/ops/Broadcast.h): `op` is an
    // infix operator or a two-argument function (max, min).
    void broadcast_binary(const GraphNode &n, const std::string &base, const std::string &op, bool infix) {
        emit(broadcast_kernel(g_, n.inputs, n.outputs[0], base, n.op_type,
                              [&](const std::vector<std::string> &r) {
                                  return infix ? r[0] + " " + op + " " + r[1] : op + "(" + r[0] + ", " + r[1] + ")";
                              }),
             {n.index});
    }

    void elementwise(const GraphNode &n) {
        static const std::map<std::string, std::string> unary = {
            {"Relu", "relu"}, {"Sigmoid", "sigmoid"}, {"Tanh", "tanh"}, {"Erf", "erf"}, {"Exp", "exp"},
            {"Log", "log"},   {"Sqrt", "sqrt"},       {"Abs", "abs"},   {"Neg", "neg"},
            {"Sin", "sin"},   {"Cos", "cos"}};
        struct Binary {
            std::string op, name;  // the infix operator, the op name
        };
        static const std::map<std::string, Binary> binary = {
            {"Add", {"+", "add"}}, {"Sub", {"-", "sub"}}, {"Mul", {"*", "mul"}}, {"Div", {"/", "div"}}};
        // A scalar is one element.
        const Dims d = dims(n.outputs[0]).empty() ? Dims{1} : dims(n.outputs[0]);
        if (n.op_type == "Max" || n.op_type == "Min") {
            const std::string fn = n.op_type == "Max" ? "max" : "min";
            return broadcast_binary(n, fn, fn, false);
        }
        SubgraphKernel k;
        k.kind = "elementwise";
        k.pointwise = true;
        k.shape = shape_text({{"M", product(d, 0, d.size() - 1)}, {"N", d.back()}});
        std::string name, expr, doc;
        std::vector<std::string> operands;
        if (activation(n, "X[m, n]", expr, name)) {
            require_float(n.inputs[0]);
            doc = "# " + n.op_type + " of every element of X (M x N): " + expr + ".\n";
            operands = {"X"};
            k.args = {{"X", n.inputs[0]}};
        } else if (unary.count(n.op_type)) {
            require_float(n.inputs[0]);
            name = unary.at(n.op_type);
            if (name == "relu" || name == "sigmoid") {
                k.op = name;
                k.args = {{"X", n.inputs[0]}, {"Y", n.outputs[0]}};
                return emit(k, {n.index});
            }
            expr = name == "neg" ? "-X[m, n]" : name + "(X[m, n])";
            doc = "# " + n.op_type + " of every element of X (M x N).\n";
            operands = {"X"};
            k.args = {{"X", n.inputs[0]}};
        } else {
            const std::string &a = n.inputs[0], &b = n.inputs[1];
            const std::string &op = binary.at(n.op_type).op, &base = binary.at(n.op_type).name;
            double c = 0;
            if (!g_.is_weight(a) && !g_.is_weight(b) && dims(a) == d && dims(b) == d) {
                require_float(a), require_float(b);
                if (n.op_type == "Add" || n.op_type == "Mul") {
                    k.op = base;
                    k.args = {{"A", a}, {"B", b}, {"C", n.outputs[0]}};
                    return emit(k, {n.index});
                }
                name = base;
                expr = "A[m, n] " + op + " B[m, n]";
                operands = {"A", "B"};
                k.args = {{"A", a}, {"B", b}};
            } else if (dims(a) == d && scalar(b, c)) {
                require_float(a);
                name = base + "_constant";
                expr = "A[m, n] " + op + " " + literal(c);
                operands = {"A"};
                k.args = {{"A", a}};
            } else if (dims(b) == d && scalar(a, c)) {
                require_float(b);
                name = "constant_" + base;
                expr = literal(c) + " " + op + " B[m, n]";
                operands = {"B"};
                k.args = {{"B", b}};
            } else {
                return broadcast_binary(n, base, op, true);
            }
            doc = "# Elementwise " + expr + " on M x N.\n";
        }
        k.args.push_back({binary.count(n.op_type) ? "C" : "Y", n.outputs[0]});
        std::string out = k.args.back().first;
        std::string text = std::string(kHeader) + doc + "op " + name + "\nparam M, N\n";
        for (const auto &o : operands) text += "input  " + o + ": f32[M, N]\n";
        text += "output " + out + ": f32[M, N]\n" + out + "[m, n] = " + expr + "\n";
        emit_generated(k, name, text, {n.index});
    }

    void transpose(const GraphNode &n) {
        const std::string &x = n.inputs[0];
        const Dims &d = dims(x);
        Dims perm = n.ints_attr("perm", {});
        if (perm.empty())
            for (int64_t i = int64_t(d.size()) - 1; i >= 0; i--) perm.push_back(i);
        std::vector<std::string> xn, xv(d.size()), yn, yv;
        std::vector<std::pair<std::string, int64_t>> shape;
        for (size_t i = 0; i < d.size(); i++) {
            xn.push_back("D" + std::to_string(i));
            shape.push_back({xn.back(), d[i]});
        }
        for (size_t k = 0; k < perm.size(); k++) {
            yn.push_back(xn[size_t(perm[k])]);
            yv.push_back("i" + std::to_string(k));
            xv[size_t(perm[k])] = yv.back();
        }
        std::string name = "transpose_p" + digits(perm);
        emit_copy(n, name, "Axis permutation " + digits(perm) + " of X (an ONNX Transpose)",
                  "param " + join(xn, ", ") + "\n", xn, yn, xv, yv, shape);
    }

    // A generated copy Y[yv] = X[xv], X of dimensions xn and Y of yn; `decls` declares the
    // parameters and attributes.
    void emit_copy(const GraphNode &n, const std::string &name, const std::string &doc, const std::string &decls,
                   const std::vector<std::string> &xn, const std::vector<std::string> &yn,
                   const std::vector<std::string> &xv, const std::vector<std::string> &yv,
                   const std::vector<std::pair<std::string, int64_t>> &shape) {
        const std::string type = type_name(g_, n.inputs[0]);
        std::string text = std::string(kHeader) + "# " + doc + ".\nop " + name + type_suffix(g_, {n.inputs[0]}) + "\n" + decls;
        text += "input  X: " + type + "[" + join(xn, ", ") + "]\noutput Y: " + type + "[" + join(yn, ", ") + "]\n";
        text += "Y[" + join(yv, ", ") + "] = X[" + join(xv, ", ") + "]\n";
        SubgraphKernel k;
        k.kind = "copy";
        k.shape = shape_text(shape);
        k.args = {{"X", n.inputs[0]}, {"Y", n.outputs[0]}};
        emit_generated(k, name + type_suffix(g_, {n.inputs[0]}), text, {n.index});
    }

    void report_unsupported() const {
        if (unsupported_.empty()) return;
        int total = 0;
        std::vector<std::string> parts;
        for (const auto &[what, count] : unsupported_) {
            total += count;
            size_t paren = what.find(" (");
            parts.push_back(what.substr(0, paren) + " x" + std::to_string(count) + what.substr(paren));
        }
        user_check(false) << "model '" << g_.path << "': " << total << " node" << (total == 1 ? "" : "s")
                          << " cannot be compiled (the op language cannot express them yet): " << join(parts, ", ");
    }
};

}  // namespace

Partition partition_graph(const ModelGraph &g) { return Partitioner(g).run(); }

}  // namespace opgen::onnx_import
