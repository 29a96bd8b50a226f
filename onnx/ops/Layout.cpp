#include "onnx/ops/Layout.h"

#include "onnx/OpText.h"

#include <algorithm>

namespace opgen::onnx_import {

namespace {

bool present(const GraphNode &n, size_t i) {
    return n.inputs.size() > i && !n.inputs[i].empty();
}

// The integer values of constant input `i` of `n`; empty when it is absent.
Dims int_input(const ModelGraph &g, const GraphNode &n, size_t i, const std::string &what) {
    if (!present(n, i))
        return {};
    Dims out;
    for (double v : constant_values(g, n.inputs[i], what))
        out.push_back(int64_t(v));
    return out;
}

// `c` times index variable `v` as op text: "i0", "2*i0", "-i0", or nothing for 0.
std::string scaled(int64_t c, const std::string &v) {
    if (c == 0)
        return "";
    if (c == 1)
        return v;
    if (c == -1)
        return "-" + v;
    return std::to_string(c) + "*" + v;
}

// Y = X read at start + step * index on every axis: `count` entries per axis.
SubgraphKernel strided_copy(const GraphNode &n, const std::string &x, const std::string &y,
                            const Dims &d, const Dims &starts, const Dims &steps,
                            const Dims &counts) {
    const AxisNames a = axis_names(d);
    std::vector<std::string> out_dims, attrs, reads, step_names;
    std::vector<std::pair<std::string, int64_t>> shape = a.shape;
    bool strided = false;
    for (size_t k = 0; k < d.size(); k++) {
        const std::string L = "L" + std::to_string(k), s = "s" + std::to_string(k);
        out_dims.push_back(L);
        shape.push_back({L, counts[k]});
        attrs.push_back(s + " = 0");
        std::string term = scaled(steps[k], a.vars[k]);
        reads.push_back(s + (term.empty()     ? ""
                             : term[0] == '-' ? " - " + term.substr(1)
                                              : " + " + term));
        step_names.push_back(steps[k] < 0 ? "m" + std::to_string(-steps[k])
                                          : std::to_string(steps[k]));
        strided |= steps[k] != 1;
    }
    for (size_t k = 0; k < d.size(); k++)
        shape.push_back({"s" + std::to_string(k), starts[k]});
    const std::string name =
        "slice_r" + std::to_string(d.size()) + (strided ? "_step" + join(step_names, "x") : "");
    std::string text = std::string(kGeneratedHeader) + "# Y = X read from s_k with step " +
                       join(step_names, ", ") + " on every axis k (an ONNX " + n.op_type + ").\n";
    text += "op " + name + "\nparam " + join(a.dims, ", ") + ", " + join(out_dims, ", ") +
            "\nattr " + join(attrs, ", ") + "\n";
    text +=
        "input  X: f32[" + join(a.dims, ", ") + "]\noutput Y: f32[" + join(out_dims, ", ") + "]\n";
    text += "Y[" + join(a.vars, ", ") + "] = X[" + join(reads, ", ") + "]\n";
    return generated_kernel("copy", name, text, shape_text(shape), {{"X", x}, {"Y", y}});
}

// ONNX Slice (opset 10 on: starts, ends, axes and steps as constant inputs; before: attributes),
// clamped as ONNX clamps them.
SubgraphKernel slice(const ModelGraph &g, const GraphNode &n) {
    const std::string &x = n.inputs[0];
    const Dims &d = g.tensor(x).dims;
    const int64_t r = int64_t(d.size());
    Dims starts = n.ints_attr("starts", {}), ends = n.ints_attr("ends", {}),
         axes = n.ints_attr("axes", {}), steps;
    if (present(n, 1)) {
        starts = int_input(g, n, 1, "bounds"), ends = int_input(g, n, 2, "bounds");
        axes = int_input(g, n, 3, "axes"), steps = int_input(g, n, 4, "steps");
    }
    if (axes.empty())
        for (size_t i = 0; i < starts.size(); i++)
            axes.push_back(int64_t(i));
    if (steps.empty())
        steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() ||
        steps.size() != starts.size())
        throw Unsupported{"starts, ends, axes and steps of different lengths"};
    Dims first(size_t(r), 0), step(size_t(r), 1), count(d);
    for (size_t i = 0; i < starts.size(); i++) {
        const size_t axis = size_t(normalize_axis(axes[i], r));
        const int64_t dim = d[axis], st = steps[i];
        if (st == 0)
            throw Unsupported{"a step of 0"};
        auto clamp = [&](int64_t v, int64_t lo, int64_t hi) {
            return std::clamp(v < 0 ? v + dim : v, lo, hi);
        };
        const int64_t s = st > 0 ? clamp(starts[i], 0, dim) : clamp(starts[i], 0, dim - 1);
        const int64_t e = st > 0 ? clamp(ends[i], 0, dim) : clamp(ends[i], -1, dim - 1);
        const int64_t c = st > 0 ? (e - s + st - 1) / st : (s - e - st - 1) / -st;
        if (c <= 0)
            throw Unsupported{"an empty slice"};
        first[axis] = s, step[axis] = st, count[axis] = c;
    }
    return strided_copy(n, x, n.outputs[0], d, first, step, count);
}

// ONNX Split: sizes from the attribute (before opset 13), the input (from 13) or equal parts.
std::vector<SubgraphKernel> split(const ModelGraph &g, const GraphNode &n) {
    const std::string &x = n.inputs[0];
    const Dims &d = g.tensor(x).dims;
    const size_t axis = size_t(normalize_axis(n.int_attr("axis", 0), int64_t(d.size())));
    Dims sizes = present(n, 1) ? int_input(g, n, 1, "split sizes") : n.ints_attr("split", {});
    if (sizes.empty()) {
        const int64_t parts = int64_t(n.outputs.size());
        if (d[axis] % parts != 0)
            throw Unsupported{"an extent that does not split equally"};
        sizes.assign(size_t(parts), d[axis] / parts);
    }
    if (sizes.size() != n.outputs.size())
        throw Unsupported{"split sizes that do not match the outputs"};
    std::vector<SubgraphKernel> out;
    Dims first(d.size(), 0), step(d.size(), 1), count = d;
    for (size_t j = 0; j < sizes.size(); j++) {
        count[axis] = sizes[j];
        if (!n.outputs[j].empty() && sizes[j] > 0)
            out.push_back(strided_copy(n, x, n.outputs[j], d, first, step, count));
        first[axis] += sizes[j];
    }
    return out;
}

// ONNX Concat: each output index reads the input whose range along the axis holds it; the inputs
// are read with zero padding, so the reads of the inputs not selected stay legal.
SubgraphKernel concat(const ModelGraph &g, const GraphNode &n) {
    const Dims &d = g.tensor(n.outputs[0]).dims;
    const size_t r = d.size();
    if (r == 0)
        throw Unsupported{"a scalar"};
    const size_t axis = size_t(normalize_axis(n.int_attr("axis", 0), int64_t(r)));
    const AxisNames a = axis_names(d);
    std::vector<std::string> params, decls, extents;
    std::vector<std::pair<std::string, int64_t>> shape;
    std::vector<std::pair<std::string, std::string>> args;
    for (size_t k = 0; k < r; k++)
        if (k != axis)
            params.push_back(a.dims[k]), shape.push_back(a.shape[k]);
    std::vector<std::string> inputs, reads, bounds;
    for (const std::string &t : n.inputs)
        if (g.tensor(t).elements() > 0)
            inputs.push_back(t);
    for (size_t i = 0; i < inputs.size(); i++) {
        const std::string E = "E" + std::to_string(i), X = "X" + std::to_string(i);
        params.push_back(E);
        shape.push_back({E, g.tensor(inputs[i]).dims[axis]});
        std::vector<std::string> dims = a.dims, at = a.vars;
        dims[axis] = E;
        if (i > 0)
            at[axis] += " - (" + join(extents, " + ") + ")";
        decls.push_back("input  " + X + ": f32[" + join(dims, ", ") + "] zero_pad\n");
        args.push_back({X, inputs[i]});
        reads.push_back(X + "[" + join(at, ", ") + "]");
        extents.push_back(E);
        bounds.push_back(join(extents, " + "));
    }
    if (inputs.empty())
        throw Unsupported{"every input empty"};
    // The last input's read, then each earlier one selected where the index is below its end.
    std::string expr = reads.back();
    for (size_t i = inputs.size() - 1; i-- > 0;)
        expr = "select(" + a.vars[axis] + " < " + bounds[i] + ", " + reads[i] + ", " + expr + ")";
    std::vector<std::string> out_dims = a.dims;
    out_dims[axis] = "T";
    const std::string name = "concat_r" + std::to_string(r) + "_a" + std::to_string(axis) + "_n" +
                             std::to_string(inputs.size());
    std::string text = std::string(kGeneratedHeader) + "# Concatenation of " +
                       std::to_string(inputs.size()) + " inputs along axis " +
                       std::to_string(axis) + ".\n";
    text +=
        "op " + name + "\nparam " + join(params, ", ") + "\nlet T = " + join(extents, " + ") + "\n";
    for (const std::string &decl : decls)
        text += decl;
    text += "output Y: f32[" + join(out_dims, ", ") + "]\nY[" + join(a.vars, ", ") + "] = " + expr +
            "\n";
    args.push_back({"Y", n.outputs[0]});
    return generated_kernel("copy", name, text, shape_text(shape), args);
}

// The read of X in Pad's reflect or edge mode: on every padded axis k the index of the region
// i_k falls in (before X, in it, after it), each affine; X is read with zero padding, so the
// regions not chosen read legally too.
std::string mirrored_read(const AxisNames &a, const std::vector<bool> &padded, bool reflect,
                          size_t k, std::vector<std::string> index) {
    if (k == a.dims.size())
        return "X[" + join(index, ", ") + "]";
    if (!padded[k])
        return mirrored_read(a, padded, reflect, k + 1, index);
    const std::string &i = a.vars[k], &D = a.dims[k], b = "b" + std::to_string(k);
    auto with = [&](const std::string &e) {
        std::vector<std::string> at = index;
        at[k] = e;
        return mirrored_read(a, padded, reflect, k + 1, at);
    };
    const std::string before = reflect ? b + " - " + i : "0",
                      after = reflect ? "2*" + D + " - 2 + " + b + " - " + i : D + " - 1";
    return "select(" + i + " < " + b + ", " + with(before) + ", select(" + i + " < " + b + " + " +
           D + ", " + with(i + " - " + b) + ", " + with(after) + "))";
}

// ONNX Pad (pads and value as attributes before opset 11, as inputs from 11): X read with zero
// padding at its index less the leading pad; in constant mode the value where it is outside, in
// reflect and edge modes the mirrored or nearest element.
SubgraphKernel pad(const ModelGraph &g, const GraphNode &n) {
    const std::string &x = n.inputs[0];
    const std::string mode = n.has("mode") ? n.attrs.at("mode").s : "constant";
    if (mode != "constant" && mode != "reflect" && mode != "edge")
        throw Unsupported{"mode " + mode};
    const Dims &d = g.tensor(x).dims;
    const size_t r = d.size();
    Dims pads = present(n, 1) ? int_input(g, n, 1, "pads") : n.ints_attr("pads", {});
    double value = n.float_attr("value", 0.0);
    // A value given at run time is read from its one-element tensor.
    const bool value_input = present(n, 2) && mode == "constant" && !g.is_weight(n.inputs[2]);
    if (value_input && g.tensor(n.inputs[2]).elements() != 1)
        throw Unsupported{"a pad value that is not one number"};
    if (present(n, 2) && !value_input) {
        std::vector<double> v = constant_values(g, n.inputs[2], "a pad value");
        if (v.size() != 1)
            throw Unsupported{"a pad value that is not one number"};
        value = v[0];
    }
    if (present(n, 3))
        throw Unsupported{"pads on some axes only"};
    if (pads.size() != 2 * r)
        throw Unsupported{"pads not two per axis"};
    if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p < 0; }))
        throw Unsupported{"negative pads"};
    const AxisNames a = axis_names(d);
    std::vector<std::string> out_dims, attrs, reads, inside;
    std::vector<std::pair<std::string, int64_t>> shape = a.shape;
    for (size_t k = 0; k < r; k++) {
        const std::string b = "b" + std::to_string(k), O = "O" + std::to_string(k);
        out_dims.push_back(O);
        attrs.push_back(b + " = 0");
        reads.push_back(a.vars[k] + " - " + b);
        inside.push_back(a.vars[k] + " >= " + b + " && " + a.vars[k] + " < " + b + " + " +
                         a.dims[k]);
        shape.push_back({O, d[k] + pads[k] + pads[k + r]});
    }
    for (size_t k = 0; k < r; k++)
        shape.push_back({"b" + std::to_string(k), pads[k]});
    std::string read = "X[" + join(reads, ", ") + "]";
    const bool zero = !value_input && (value == 0.0 || mode != "constant");
    const std::string fill = value_input ? "V[0]" : literal(value);
    std::string name = "pad_r" + std::to_string(r) + (zero ? "" : value_input ? "_value_input" : "_value");
    std::string around = zero ? "zeros" : value_input ? "the value V" : "the constant " + literal(value);
    if (mode != "constant") {
        std::vector<bool> padded(r);
        std::string pattern;
        for (size_t k = 0; k < r; k++) {
            padded[k] = pads[k] + pads[k + r] > 0;
            pattern += padded[k] ? '1' : '0';
            if (mode == "reflect" && (pads[k] >= d[k] || pads[k + r] >= d[k]))
                throw Unsupported{"reflecting more than once"};
        }
        read = mirrored_read(a, padded, mode == "reflect", 0, reads);
        name += "_" + mode + "_" + pattern;
        around = mode == "reflect" ? "its reflection" : "its edge repeated";
    }
    std::string text = std::string(kGeneratedHeader) +
                       "# X placed at offset b_k on every axis k of Y, " + around +
                       " around it (an ONNX Pad).\n";
    text += "op " + name + "\nparam " + join(a.dims, ", ") + ", " + join(out_dims, ", ") +
            "\nattr " + join(attrs, ", ") + "\n";
    text += "input  X: f32[" + join(a.dims, ", ") + "] zero_pad\n" + (value_input ? "input  V: f32[1]\n" : "") +
            "output Y: f32[" + join(out_dims, ", ") + "]\n";
    text += "Y[" + join(a.vars, ", ") + "] = " +
            (zero ? read : "select(" + join(inside, " && ") + ", " + read + ", " + fill + ")") + "\n";
    std::vector<std::pair<std::string, std::string>> args = {{"X", x}};
    if (value_input) args.push_back({"V", n.inputs[2]});
    args.push_back({"Y", n.outputs[0]});
    return generated_kernel("copy", name, text, shape_text(shape), args);
}

// Y = X with every element repeated R_k times along axis k: Y viewed as [R0, D0, R1, D1, ...]
// (Tile: whole copies side by side) or as [D0, R0, D1, R1, ...] (`inner`: each element repeated
// in place, a nearest upsampling), the same row-major bytes as [R0*D0, ...], reading X[i0, i1,
// ...] whatever the repeat.
SubgraphKernel repeat_copy(const GraphNode &n, const std::string &name, const std::string &doc,
                           const Dims &d, const Dims &repeats, bool inner) {
    const AxisNames a = axis_names(d);
    std::vector<std::string> params = a.dims, out_dims, out_vars;
    std::vector<std::pair<std::string, int64_t>> shape = a.shape;
    for (size_t k = 0; k < d.size(); k++) {
        const std::string R = "R" + std::to_string(k), t = "t" + std::to_string(k);
        params.push_back(R);
        shape.push_back({R, repeats[k]});
        out_dims.insert(out_dims.end(), {inner ? a.dims[k] : R, inner ? R : a.dims[k]});
        out_vars.insert(out_vars.end(), {inner ? a.vars[k] : t, inner ? t : a.vars[k]});
    }
    std::string text = std::string(kGeneratedHeader) + "# " + doc + "\n";
    text += "op " + name + "\nparam " + join(params, ", ") + "\ninput  X: f32[" +
            join(a.dims, ", ") + "]\n";
    text += "output Y: f32[" + join(out_dims, ", ") + "]\nY[" + join(out_vars, ", ") + "] = X[" +
            join(a.vars, ", ") + "]\n";
    return generated_kernel("copy", name, text, shape_text(shape),
                            {{"X", n.inputs[0]}, {"Y", n.outputs[0]}});
}

// ONNX Tile, its repeats a constant input.
SubgraphKernel tile(const ModelGraph &g, const GraphNode &n) {
    const Dims &d = g.tensor(n.inputs[0]).dims;
    const Dims repeats = int_input(g, n, 1, "repeats");
    if (repeats.size() != d.size())
        throw Unsupported{"repeats not one per axis"};
    return repeat_copy(n, "tile_r" + std::to_string(d.size()),
                       "X repeated R_k times along every axis k, the output viewed as [R0, D0, R1, "
                       "D1, ...].",
                       d, repeats, false);
}

// ONNX Resize in nearest mode by a whole factor per axis, from constant scales or sizes: output
// index o reads o / R_k, which is what the coordinate modes below give for a whole factor (the
// default half_pixel with either rounding, pytorch_half_pixel, asymmetric with floor).
SubgraphKernel resize_nearest(const ModelGraph &g, const GraphNode &n) {
    const std::string &x = n.inputs[0];
    for (size_t i = 1; i < n.inputs.size(); i++)
        if (!n.inputs[i].empty() && !g.is_weight(n.inputs[i]))
            throw Unsupported{"roi, scales or sizes computed at run time"};
    auto text_attr = [&](const char *attr, const char *fallback) {
        return n.has(attr) ? n.attrs.at(attr).s : std::string(fallback);
    };
    const std::string mode = text_attr("mode", "nearest");
    const std::string coordinates = text_attr("coordinate_transformation_mode", "half_pixel");
    const std::string rounding = text_attr("nearest_mode", "round_prefer_floor");
    if (mode != "nearest")
        throw Unsupported{"mode " + mode};
    const bool centred = (coordinates == "half_pixel" || coordinates == "pytorch_half_pixel") &&
                         (rounding == "round_prefer_floor" || rounding == "round_prefer_ceil");
    if (!centred && !(coordinates == "asymmetric" && rounding == "floor"))
        throw Unsupported{"coordinates " + coordinates + " with rounding " + rounding};
    const Dims &d = g.tensor(x).dims, &out = g.tensor(n.outputs[0]).dims;
    const std::vector<double> scales = n.inputs.size() > 2 && !n.inputs[2].empty()
                                           ? constant_values(g, n.inputs[2], "scales")
                                           : std::vector<double>{};
    Dims factors;
    std::string pattern;
    for (size_t k = 0; k < d.size(); k++) {
        if (d[k] <= 0 || out[k] % d[k] != 0)
            throw Unsupported{"a scale that is not a whole number"};
        factors.push_back(out[k] / d[k]);
        if (!scales.empty() && scales[k] != double(factors.back()))
            throw Unsupported{"a scale that is not a whole number"};
        pattern += factors.back() > 1 ? 'r' : 'k';
    }
    return repeat_copy(n, "resize_nearest_" + pattern,
                       "Nearest-neighbour resize by a whole factor R_k per axis: each element of X "
                       "repeated in place, the output viewed as [D0, R0, D1, R1, ...].",
                       d, factors, true);
}

// DepthToSpace (DCR or CRD) and SpaceToDepth on NCHW with block size B, the spatial side viewed
// as [N, C, H, B, W, B] (DepthToSpace's output, SpaceToDepth's input) so every read is affine.
SubgraphKernel block_rearrange(const ModelGraph &g, const GraphNode &n) {
    const std::string &x = n.inputs[0];
    const Dims &d = g.tensor(x).dims;
    if (d.size() != 4)
        throw Unsupported{"not NCHW"};
    const int64_t b = n.int_attr("blocksize", 0);
    if (b <= 0)
        throw Unsupported{"no block size"};
    std::string name, doc, body, decls;
    std::vector<std::pair<std::string, int64_t>> shape = {{"N", d[0]}, {"B", b}};
    if (n.op_type == "DepthToSpace") {
        const std::string mode = n.has("mode") ? n.attrs.at("mode").s : "DCR";
        if (mode != "DCR" && mode != "CRD")
            throw Unsupported{"mode " + mode};
        const bool dcr = mode == "DCR";
        name = dcr ? "depth_to_space_dcr" : "depth_to_space_crd";
        doc = "# DepthToSpace (" + mode +
              ") of X [N, C*B*B, H, W], the output viewed as [N, C, H, B, W, B].\n";
        shape.insert(shape.end(), {{"C", d[1] / (b * b)}, {"H", d[2]}, {"W", d[3]}});
        decls = "let BB = B * B\nlet BC = B * C\nlet CI = B * B * C\ninput  X: f32[N, CI, H, W]\n"
                "output Y: f32[N, C, H, B, W, B]\n";
        body = std::string("Y[n, c, h, i, w, j] = X[n, ") +
               (dcr ? "i*BC + j*C + c" : "c*BB + i*B + j") + ", h, w]\n";
    } else {
        name = "space_to_depth";
        doc = "# SpaceToDepth of X [N, C, H*B, W*B], the input viewed as [N, C, H, B, W, B].\n";
        shape.insert(shape.end(), {{"C", d[1]}, {"H", d[2] / b}, {"W", d[3] / b}});
        decls = "let HB = H * B\nlet WB = W * B\ninput  X: f32[N, C, HB, WB]\noutput Y: f32[N, B, "
                "B, C, H, W]\n";
        body = "Y[n, i, j, c, h, w] = X[n, c, h*B + i, w*B + j]\n";
    }
    std::string text = std::string(kGeneratedHeader) + doc + "op " + name +
                       "\nparam N, B, C, H, W\n" + decls + body;
    return generated_kernel("copy", name, text, shape_text(shape), {{"X", x}, {"Y", n.outputs[0]}});
}

// Every element moves as it is, so a kernel written for float32 serves any type: its tensors
// retyped to `type` and its op renamed with the type, so ops of each type stay apart.
SubgraphKernel retyped(SubgraphKernel k, const std::string &type) {
    auto replace_all = [&](const std::string &from, const std::string &to) {
        for (size_t at = k.text.find(from); at != std::string::npos; at = k.text.find(from, at + to.size()))
            k.text.replace(at, from.size(), to);
    };
    replace_all(": f32[", ": " + type + "[");
    replace_all("op " + k.op + "\n", "op " + k.op + "_" + type + "\n");
    k.op += "_" + type;
    return k;
}

std::vector<SubgraphKernel> float_layout_kernels(const ModelGraph &g, const GraphNode &n) {
    if (n.op_type == "Split")
        return split(g, n);
    if (n.op_type == "Concat")
        return {concat(g, n)};
    if (n.op_type == "Pad")
        return {pad(g, n)};
    if (n.op_type == "Tile")
        return {tile(g, n)};
    if (n.op_type == "Resize")
        return {resize_nearest(g, n)};
    if (n.op_type == "DepthToSpace" || n.op_type == "SpaceToDepth")
        return {block_rearrange(g, n)};
    return {slice(g, n)};
}

} // namespace

bool is_layout(const std::string &t) {
    return t == "Concat" || t == "Split" || t == "Slice" || t == "Pad" || t == "Tile" ||
           t == "DepthToSpace" || t == "SpaceToDepth" || t == "Resize";
}

std::vector<SubgraphKernel> layout_kernels(const ModelGraph &g, const GraphNode &n) {
    std::vector<SubgraphKernel> kernels = float_layout_kernels(g, n);
    const std::string type = type_name(g, n.inputs[0]);
    if (type != "f32")
        for (SubgraphKernel &k : kernels) k = retyped(std::move(k), type);
    return kernels;
}

} // namespace opgen::onnx_import
