// What the layout passes over a partition share (docs/design.md §3.2): ChannelBlocking.h holds
// float activations channel-blocked between convolutions, QuantizedLayout.h holds u8 activations
// NHWC between int8 convolutions. Each rewrites the kernels in their order; a tensor is held
// either row-major over its dimensions (NCHW) or in the pass's layout, and where a kernel wants
// the other one a conversion kernel writes a copy first ("<tensor>@<suffix>"), once per tensor.
// A graph output or a view's source is never left in the pass's layout: its kernel writes a copy,
// converted back into it.
#ifndef OPGEN_ONNX_HELD_LAYOUT_H
#define OPGEN_ONNX_HELD_LAYOUT_H

#include "onnx/ModelGraph.h"
#include "onnx/Partition.h"

#include <functional>
#include <map>
#include <set>
#include <string>

namespace opgen::onnx_import {

class HeldLayout {
public:
    // Writes the kernel that converts `from` into `to`, into the pass's layout when `to_held`.
    using Conversion = std::function<SubgraphKernel(const std::string &from, const std::string &to, bool to_held)>;

    // `layout` is GraphTensor::layout's name for the pass's layout ("nChw16c", "nhwc"), which also
    // names a held copy ("<tensor>@<layout>"; a plain copy is "<tensor>@nchw"). The tensors the
    // graph already holds in it (written so by a fused kernel) count as held.
    //
    // With `views_follow`, a view of its source's dims and type (an identity requantization) is
    // held in whatever layout its source is, instead of keeping its source plain.
    HeldLayout(ModelGraph &g, Partition &p, std::string layout, Conversion convert, bool views_follow = false);

    // The partition's kernels, taken out for the pass to add back in order.
    std::vector<SubgraphKernel> take_kernels();

    bool held(const std::string &t) const { return held_.count(t) > 0; }

    // `t` in the layout a reader wants (the pass's when `want_held`), converting it first when it
    // is held in the other one.
    std::string in_layout(const std::string &t, bool want_held);

    // Adds kernel `k` whose output is held in the pass's layout: its own tensor, or a held copy
    // converted back into it when it must stay plain.
    void push_held_output(SubgraphKernel k);

    // Adds kernel `k` as it is.
    void push(SubgraphKernel k) { p_.kernels.push_back(std::move(k)); }

private:
    void add_tensor(const std::string &name, const std::string &like, bool held);
    void push_conversion(const std::string &from, const std::string &to, bool to_held);

    ModelGraph &g_;
    Partition &p_;
    std::string layout_;
    Conversion convert_;
    std::set<std::string> keep_plain_;            // graph outputs and views' sources
    std::set<std::string> held_;                  // tensors held in the pass's layout
    std::map<std::string, std::string> copies_;   // tensor -> its copy in the other layout
    std::multimap<std::string, std::string> followers_;  // source -> its views held as it is

    void hold(const std::string &t);
};

}  // namespace opgen::onnx_import

#endif
