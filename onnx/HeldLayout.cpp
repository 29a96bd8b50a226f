#include "onnx/HeldLayout.h"

namespace opgen::onnx_import {

HeldLayout::HeldLayout(ModelGraph &g, Partition &p, std::string layout, Conversion convert, bool views_follow)
    : g_(g), p_(p), layout_(std::move(layout)), convert_(std::move(convert)) {
    for (const TensorView &v : p.views) {
        const GraphTensor &t = g.tensor(v.tensor), &s = g.tensor(v.source);
        if (views_follow && t.dims == s.dims && t.elem_type == s.elem_type) followers_.insert({v.source, v.tensor});
        else keep_plain_.insert(v.source);
    }
    for (const std::string &o : g.outputs) keep_plain_.insert(o);
    for (const auto &[name, t] : g.tensors)
        if (t.layout == layout_) held_.insert(name);
}

std::vector<SubgraphKernel> HeldLayout::take_kernels() {
    std::vector<SubgraphKernel> kernels = std::move(p_.kernels);
    p_.kernels.clear();
    return kernels;
}

std::string HeldLayout::in_layout(const std::string &t, bool want_held) {
    if (held(t) == want_held) return t;
    auto it = copies_.find(t);
    if (it != copies_.end()) return it->second;
    const std::string out = t + "@" + (want_held ? layout_ : "nchw");
    add_tensor(out, t, want_held);
    push_conversion(t, out, want_held);
    copies_[t] = out;
    return out;
}

void HeldLayout::push_held_output(SubgraphKernel k) {
    const std::string y = k.args.back().second;
    if (!keep_plain_.count(y)) {
        hold(y);
        return push(std::move(k));
    }
    const std::string copy = y + "@" + layout_;
    add_tensor(copy, y, true);
    k.args.back().second = copy;
    push(std::move(k));
    push_conversion(copy, y, false);
}

void HeldLayout::hold(const std::string &t) {
    g_.tensors.at(t).layout = layout_;
    held_.insert(t);
    auto [from, to] = followers_.equal_range(t);
    for (auto it = from; it != to; ++it) hold(it->second);
}

void HeldLayout::add_tensor(const std::string &name, const std::string &like, bool held) {
    GraphTensor t = g_.tensor(like);
    t.name = name;
    t.kind = TensorKind::Intermediate;
    t.layout = held ? layout_ : "";
    t.values.clear();
    t.data.clear();
    t.raw.clear();
    g_.tensors[name] = t;
    if (held) held_.insert(name);
}

void HeldLayout::push_conversion(const std::string &from, const std::string &to, bool to_held) {
    push(convert_(from, to, to_held));
}

}  // namespace opgen::onnx_import
