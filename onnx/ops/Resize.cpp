#include "onnx/ops/Resize.h"

#include "onnx/OpText.h"

#include <algorithm>
#include <cmath>

namespace opgen::onnx_import {

namespace {

// The largest interpolation matrix a kernel carries (64 MiB of float32): a 4096 x 4096 axis.
constexpr int64_t kMaxMatrixElements = int64_t(1) << 24;

// The input coordinate output index `o` maps to.
double source_coordinate(double o, const ResizeAxis &a, const std::string &coordinates) {
    const double out_width = a.scale * double(a.in);
    if (coordinates == "align_corners") return out_width == 1 ? 0.0 : o * double(a.in - 1) / (out_width - 1);
    if (coordinates == "asymmetric") return o / a.scale;
    if (coordinates == "pytorch_half_pixel") return out_width == 1 ? -0.5 : (o + 0.5) / a.scale - 0.5;
    if (coordinates == "tf_half_pixel_for_nn") return (o + 0.5) / a.scale;
    if (coordinates == "half_pixel") return (o + 0.5) / a.scale - 0.5;
    throw Unsupported{"coordinate_transformation_mode " + coordinates};
}

// The weights of the points around x: `ratio` is x's distance past the point before it, in (0, 1].
std::vector<double> coefficients(double ratio, const ResizeMode &m) {
    if (m.mode == "linear") return {1 - ratio, ratio};
    if (m.mode == "cubic") {
        const double A = m.cubic_a, r = ratio, s = 1 - ratio;
        return {((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A,
                ((A + 2) * r - (A + 3)) * r * r + 1, ((A + 2) * s - (A + 3)) * s * s + 1,
                ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A};
    }
    if (m.mode != "nearest") throw Unsupported{"mode " + m.mode};
    if (ratio == 1) return {0, 1};
    if (m.rounding == "round_prefer_floor") return {double(ratio <= 0.5), double(ratio > 0.5)};
    if (m.rounding == "round_prefer_ceil") return {double(ratio < 0.5), double(ratio >= 0.5)};
    if (m.rounding == "floor") return {1, 0};
    if (m.rounding == "ceil") return {0, 1};
    throw Unsupported{"nearest_mode " + m.rounding};
}

// The n points nearest x among [0, limit), the smaller first on a tie, in increasing order.
std::vector<int64_t> nearest_points(double x, size_t n, int64_t limit) {
    std::vector<int64_t> all(size_t(std::max<int64_t>(limit, 0)));
    for (int64_t i = 0; i < limit; i++) all[size_t(i)] = i;
    std::stable_sort(all.begin(), all.end(),
                     [x](int64_t a, int64_t b) { return std::fabs(x - double(a)) < std::fabs(x - double(b)); });
    all.resize(std::min(n, all.size()));
    std::sort(all.begin(), all.end());
    return all;
}

// Row o of the matrix, as ONNX's reference interpolates one output: the input padded at both ends
// by repeating its edge, the coefficients' points nearest x, and with exclude_outside the weights
// of points outside the input dropped and the rest renormalized.
void add_row(std::vector<double> &w, int64_t o, const ResizeAxis &a, const ResizeMode &m) {
    const double x = source_coordinate(double(o), a, m.coordinates);
    const double ratio = x == std::floor(x) ? 1.0 : x - std::floor(x);
    std::vector<double> c = coefficients(ratio, m);
    const int64_t pad = int64_t(std::ceil(double(c.size()) / 2));
    std::vector<int64_t> points = nearest_points(x + double(pad), c.size(), a.in + 2 * pad);
    if (m.exclude_outside) {
        double total = 0;
        for (size_t i = 0; i < points.size(); i++) {
            const int64_t p = points[i] - pad;
            if (p < 0 || p >= a.in) c[i] = 0;
            total += c[i];
        }
        for (double &v : c) v = total != 0 ? v / total : 0;
    }
    for (size_t i = 0; i < points.size(); i++) {
        const int64_t p = std::clamp<int64_t>(points[i] - pad, 0, a.in - 1);
        w[size_t(o * a.in + p)] += c[i];
    }
}

std::string attr_text(const GraphNode &n, const char *attr, const char *fallback) {
    return n.has(attr) ? n.attrs.at(attr).s : std::string(fallback);
}

ResizeMode mode_of(const GraphNode &n) {
    ResizeMode m;
    m.mode = attr_text(n, "mode", "nearest");
    m.coordinates = attr_text(n, "coordinate_transformation_mode", "half_pixel");
    m.rounding = attr_text(n, "nearest_mode", "round_prefer_floor");
    m.cubic_a = n.float_attr("cubic_coeff_a", -0.75);
    m.exclude_outside = n.int_attr("exclude_outside", 0) != 0;
    if (m.coordinates == "tf_crop_and_resize") throw Unsupported{"coordinates tf_crop_and_resize"};
    return m;
}

// The scale of each axis: the scales input, or out / in when sizes are given instead.
std::vector<double> axis_scales(const ModelGraph &g, const GraphNode &n, const Dims &in, const Dims &out) {
    for (size_t i = 1; i < n.inputs.size(); i++)
        if (!n.inputs[i].empty() && !g.is_weight(n.inputs[i])) throw Unsupported{"roi, scales or sizes computed at run time"};
    std::vector<double> scales;
    if (n.inputs.size() > 2 && !n.inputs[2].empty()) scales = constant_values(g, n.inputs[2], "scales");
    if (scales.size() == in.size()) return scales;
    scales.clear();
    for (size_t k = 0; k < in.size(); k++) scales.push_back(double(out[k]) / double(in[k]));
    return scales;
}

} // namespace

std::vector<double> resize_matrix(const ResizeAxis &axis, const ResizeMode &m) {
    if (axis.in <= 0 || axis.out <= 0 || axis.in > kMaxMatrixElements / axis.out)
        throw Unsupported{"an interpolation matrix of more than " + std::to_string(kMaxMatrixElements) + " elements"};
    if (!(axis.scale > 0) || !std::isfinite(axis.scale)) throw Unsupported{"a scale that is not positive"};
    std::vector<double> w(size_t(axis.out * axis.in), 0.0);
    for (int64_t o = 0; o < axis.out; o++) add_row(w, o, axis, m);
    return w;
}

namespace {

// The weight tensor of axis k: W_k as a constant the kernel reads.
GraphTensor axis_matrix(const std::string &y, size_t k, const ResizeAxis &axis, const ResizeMode &m) {
    GraphTensor t;
    t.name = y + "#resize_w" + std::to_string(k);
    t.dims = {axis.out, axis.in};
    t.kind = TensorKind::Weight;
    const std::vector<double> w = resize_matrix(axis, m);
    t.data.assign(w.begin(), w.end());
    return t;
}

} // namespace

std::vector<SubgraphKernel> resize_kernels(const ModelGraph &g, const GraphNode &n) {
    const std::string &x = n.inputs[0], &y = n.outputs[0];
    require_float(g, x);
    const ResizeMode m = mode_of(n);
    const Dims &in = g.tensor(x).dims, &out = g.tensor(y).dims;
    const std::vector<double> scales = axis_scales(g, n, in, out);
    std::vector<size_t> resized;  // innermost first
    std::string pattern;
    for (size_t k = 0; k < in.size(); k++) {
        const bool same = in[k] == out[k] && scales[k] == 1;
        pattern += same ? 'k' : 'r';
        if (!same) resized.insert(resized.begin(), k);
    }
    if (resized.empty()) throw Unsupported{"a resize that changes nothing"};
    const AxisNames a = axis_names(in);
    std::vector<std::string> dims = a.dims;
    std::vector<std::pair<std::string, int64_t>> shape = a.shape;
    std::string params = join(a.dims, ", "), inputs = "input  X: f32[" + join(a.dims, ", ") + "]\n", stages, statements;
    std::vector<std::pair<std::string, std::string>> args = {{"X", x}};
    std::vector<GraphTensor> constants;
    std::string previous = "X";
    for (size_t j = 0; j < resized.size(); j++) {
        const size_t k = resized[j];
        const std::string O = "O" + std::to_string(k), W = "W" + std::to_string(k);
        const std::string stage = j + 1 == resized.size() ? "Y" : "T" + std::to_string(k);
        shape.push_back({O, out[k]});
        params += ", " + O;
        dims[k] = O;
        std::vector<std::string> read = a.vars;
        read[k] = "q";
        inputs += "input  " + W + ": f32[" + O + ", " + a.dims[k] + "]\n";
        stages += std::string(stage == "Y" ? "output " : "local  ") + stage + ": f32[" + join(dims, ", ") + "]\n";
        statements += stage + "[" + join(a.vars, ", ") + "] = sum(q: " + a.dims[k] + ") " + W + "[" + a.vars[k] +
                      ", q] * " + previous + "[" + join(read, ", ") + "]\n";
        constants.push_back(axis_matrix(y, k, {in[k], out[k], scales[k]}, m));
        args.push_back({W, constants.back().name});
        previous = stage;
    }
    args.push_back({"Y", y});
    const std::string name = "resize_" + m.mode + "_" + pattern;
    std::string text = std::string(kGeneratedHeader) + "# ONNX Resize (" + m.mode + ", " + m.coordinates +
                       ") as a product with a compile-time matrix W_k[O_k, D_k] per resized axis k, innermost first.\n";
    text += "op " + name + "\nparam " + params + "\n" + inputs + stages + statements;
    SubgraphKernel kernel = generated_kernel("copy", name, text, shape_text(shape), args);
    kernel.constants = constants;
    return {kernel};
}

} // namespace opgen::onnx_import
