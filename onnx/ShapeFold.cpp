#include "onnx/ShapeFold.h"

#include <cmath>
#include <cstring>
#include <optional>
#include <set>
#include <vector>

namespace opgen::onnx_import {

namespace {

using Dims = std::vector<int64_t>;

// Folded values stay small: shape vectors, scalars, a ConstantOfShape of a modest size.
constexpr int64_t kMaxFoldedElements = 1 << 16;

// A constant being folded: its ONNX element type, dimensions and elements (integers are exact up
// to 2^53, far beyond any extent).
struct Value {
    int type = onnx::TensorProto::FLOAT;
    Dims dims;
    std::vector<double> v;
    // The element count; -1 for a negative dimension or a count past any folded value's (an
    // untrusted file may claim dimensions whose product overflows).
    int64_t count() const {
        int64_t n = 1;
        for (int64_t d : dims) {
            if (d < 0 || (d > 0 && n > kMaxFoldedElements * 2 / d))
                return -1;
            n *= d;
        }
        return n;
    }
    bool integral() const {
        return type != onnx::TensorProto::FLOAT && type != onnx::TensorProto::DOUBLE;
    }
};

template <typename T>
void from_raw(const std::string &raw, int64_t count, std::vector<double> &out) {
    if (raw.size() != size_t(count) * sizeof(T))
        return;
    for (int64_t i = 0; i < count; i++) {
        T x;
        std::memcpy(&x, raw.data() + i * sizeof(T), sizeof(T));
        out.push_back(double(x));
    }
}

std::optional<Value> read_tensor(const onnx::TensorProto &t) {
    Value out;
    out.type = t.data_type();
    out.dims.assign(t.dims().begin(), t.dims().end());
    const int64_t count = out.count();
    if (count < 0 || count > kMaxFoldedElements || t.data_location() == onnx::TensorProto::EXTERNAL)
        return std::nullopt;
    const std::string &raw = t.raw_data();
    switch (t.data_type()) {
    case onnx::TensorProto::FLOAT:
        if (!raw.empty())
            from_raw<float>(raw, count, out.v);
        else
            out.v.assign(t.float_data().begin(), t.float_data().end());
        break;
    case onnx::TensorProto::INT64:
        if (!raw.empty())
            from_raw<int64_t>(raw, count, out.v);
        else
            out.v.assign(t.int64_data().begin(), t.int64_data().end());
        break;
    case onnx::TensorProto::INT32:
        if (!raw.empty())
            from_raw<int32_t>(raw, count, out.v);
        else
            out.v.assign(t.int32_data().begin(), t.int32_data().end());
        break;
    case onnx::TensorProto::BOOL:
        if (!raw.empty())
            from_raw<uint8_t>(raw, count, out.v);
        else
            out.v.assign(t.int32_data().begin(), t.int32_data().end());
        break;
    default:
        return std::nullopt;
    }
    if (int64_t(out.v.size()) != count)
        return std::nullopt;
    return out;
}

template <typename T> std::string to_raw(const std::vector<double> &v) {
    std::string raw(v.size() * sizeof(T), '\0');
    for (size_t i = 0; i < v.size(); i++) {
        T x = T(v[i]);
        std::memcpy(&raw[i * sizeof(T)], &x, sizeof(T));
    }
    return raw;
}

onnx::TensorProto write_tensor(const Value &value, const std::string &name) {
    onnx::TensorProto t;
    t.set_name(name);
    t.set_data_type(value.type);
    for (int64_t d : value.dims)
        t.add_dims(d);
    switch (value.type) {
    case onnx::TensorProto::FLOAT:
        t.set_raw_data(to_raw<float>(value.v));
        break;
    case onnx::TensorProto::INT64:
        t.set_raw_data(to_raw<int64_t>(value.v));
        break;
    case onnx::TensorProto::INT32:
        t.set_raw_data(to_raw<int32_t>(value.v));
        break;
    default:
        t.set_raw_data(to_raw<uint8_t>(value.v));
        break;
    }
    return t;
}

// A value converted to ONNX type `type` (Cast's rules: truncation toward zero, non-zero is true).
Value cast_to(Value v, int type) {
    const bool integral = type != onnx::TensorProto::FLOAT && type != onnx::TensorProto::DOUBLE;
    for (double &x : v.v)
        x = type == onnx::TensorProto::BOOL ? double(x != 0)
            : integral                      ? std::trunc(x)
                                            : double(float(x));
    v.type = type;
    return v;
}

Value scalar_of(int type, double x) {
    return {type, {}, {x}};
}

Value vector_of(int type, const std::vector<double> &v) {
    return {type, {int64_t(v.size())}, v};
}

const onnx::AttributeProto *attribute(const onnx::NodeProto &n, const std::string &name) {
    for (const auto &a : n.attribute())
        if (a.name() == name)
            return &a;
    return nullptr;
}

int64_t int_attribute(const onnx::NodeProto &n, const std::string &name, int64_t fallback) {
    const onnx::AttributeProto *a = attribute(n, name);
    return a ? a->i() : fallback;
}

class Folder {
public:
    explicit Folder(onnx::ModelProto &model) : g_(*model.mutable_graph()) {
        for (const auto &t : g_.initializer()) {
            initializer_names_.insert(t.name());
            if (std::optional<Value> v = read_tensor(t))
                consts_[t.name()] = *v;
        }
        auto note = [&](const onnx::ValueInfoProto &v) {
            if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape())
                return;
            Dims d;
            for (const auto &dim : v.type().tensor_type().shape().dim()) {
                if (!dim.has_dim_value())
                    return;
                d.push_back(dim.dim_value());
            }
            shapes_[v.name()] = d;
        };
        for (const auto &v : g_.input())
            note(v);
        for (const auto &v : g_.value_info())
            note(v);
        for (const auto &v : g_.output())
            note(v);
        for (const auto &v : g_.output())
            outputs_.insert(v.name());
    }

    // Folds every node it can; true when one was.
    bool fold() {
        std::vector<int> folded;
        bool changed = false;
        for (int i = 0; i < g_.node_size(); i++) {
            const onnx::NodeProto &n = g_.node(i);
            if (!n.domain().empty() && n.domain() != "ai.onnx")
                continue;
            if (n.output_size() != 1 || (outputs_.count(n.output(0)) && n.op_type() == "Constant"))
                continue;
            std::optional<Value> v;
            try {
                v = evaluate(n);
            } catch (const std::exception &) {
                v.reset(); // an input it cannot evaluate: the node stays
            }
            if (!v || v->count() > kMaxFoldedElements || int64_t(v->v.size()) != v->count())
                continue;
            consts_[n.output(0)] = *v;
            if (outputs_.count(n.output(0))) {
                // A graph output keeps a node writing it: the Constant a model would have had.
                onnx::NodeProto c;
                c.set_name(n.name());
                c.set_op_type("Constant");
                c.add_output(n.output(0));
                onnx::AttributeProto *value = c.add_attribute();
                value->set_name("value");
                value->set_type(onnx::AttributeProto::TENSOR);
                *value->mutable_t() = write_tensor(*v, n.output(0));
                *g_.mutable_node(i) = c;
                changed = true;
                continue;
            }
            *g_.add_initializer() = write_tensor(*v, n.output(0));
            folded.push_back(i);
        }
        for (auto it = folded.rbegin(); it != folded.rend(); ++it)
            g_.mutable_node()->DeleteSubrange(*it, 1);
        return changed || !folded.empty();
    }

private:
    onnx::GraphProto &g_;
    std::map<std::string, Value> consts_;
    std::map<std::string, Dims> shapes_;
    std::set<std::string> outputs_, initializer_names_;

    const Value &in(const onnx::NodeProto &n, int i) const {
        if (i >= n.input_size() || n.input(i).empty())
            throw std::out_of_range("absent input");
        return consts_.at(n.input(i));
    }
    bool has(const onnx::NodeProto &n, int i) const {
        return i < n.input_size() && !n.input(i).empty();
    }

    std::vector<int64_t> ints(const Value &v) const {
        return std::vector<int64_t>(v.v.begin(), v.v.end());
    }

    // The axes of Unsqueeze or Squeeze: the attribute before opset 13, the input from 13.
    Dims axes_of(const onnx::NodeProto &n) const {
        if (const onnx::AttributeProto *a = attribute(n, "axes"))
            return Dims(a->ints().begin(), a->ints().end());
        return has(n, 1) ? ints(in(n, 1)) : Dims{};
    }

    std::optional<Value> evaluate(const onnx::NodeProto &n) const {
        const std::string &t = n.op_type();
        if (t == "Constant")
            return constant(n);
        if (t == "Shape" || t == "Size") {
            const Dims &d = shapes_.at(n.input(0));
            if (t == "Size") {
                // In double: an untrusted file's dimensions may overflow an integer product.
                double c = 1;
                for (int64_t x : d)
                    c *= double(x);
                return scalar_of(onnx::TensorProto::INT64, c);
            }
            const int64_t r = int64_t(d.size());
            int64_t start = int_attribute(n, "start", 0), end = int_attribute(n, "end", r);
            start = std::clamp<int64_t>(start < 0 ? start + r : start, 0, r);
            end = std::clamp<int64_t>(end < 0 ? end + r : end, 0, r);
            std::vector<double> v;
            for (int64_t i = start; i < end; i++)
                v.push_back(double(d[size_t(i)]));
            return vector_of(onnx::TensorProto::INT64, v);
        }
        for (int i = 0; i < n.input_size(); i++)
            if (!n.input(i).empty() && !consts_.count(n.input(i)))
                return std::nullopt;
        if (t == "Identity")
            return in(n, 0);
        if (t == "Cast")
            return cast_to(in(n, 0), int(int_attribute(n, "to", 1)));
        if (t == "Neg" || t == "Not") {
            Value v = in(n, 0);
            for (double &x : v.v)
                x = t == "Neg" ? -x : double(x == 0);
            return v;
        }
        if (t == "Add" || t == "Sub" || t == "Mul" || t == "Div" || t == "Equal" || t == "Less" ||
            t == "Greater" || t == "Max" || t == "Min")
            return binary(t, in(n, 0), in(n, 1));
        if (t == "Where")
            return where(in(n, 0), in(n, 1), in(n, 2));
        if (t == "Unsqueeze" || t == "Squeeze")
            return reshaped(in(n, 0), t == "Unsqueeze", axes_of(n));
        if (t == "Reshape")
            return reshape(in(n, 0), ints(in(n, 1)), int_attribute(n, "allowzero", 0) != 0);
        if (t == "Concat")
            return concat(n);
        if (t == "Gather")
            return gather(in(n, 0), in(n, 1), int_attribute(n, "axis", 0));
        if (t == "Slice")
            return slice(n);
        if (t == "ConstantOfShape")
            return constant_of_shape(n);
        if (t == "Range")
            return range(in(n, 0), in(n, 1), in(n, 2));
        return std::nullopt;
    }

    std::optional<Value> constant(const onnx::NodeProto &n) const {
        for (const auto &a : n.attribute()) {
            if (a.name() == "value" && a.has_t())
                return read_tensor(a.t());
            if (a.name() == "value_float")
                return scalar_of(onnx::TensorProto::FLOAT, a.f());
            if (a.name() == "value_int")
                return scalar_of(onnx::TensorProto::INT64, double(a.i()));
            if (a.name() == "value_floats")
                return vector_of(onnx::TensorProto::FLOAT,
                                 std::vector<double>(a.floats().begin(), a.floats().end()));
            if (a.name() == "value_ints")
                return vector_of(onnx::TensorProto::INT64,
                                 std::vector<double>(a.ints().begin(), a.ints().end()));
        }
        return std::nullopt;
    }

    // Elementwise with numpy broadcasting where one side is a single element or both have the
    // same dimensions (what shape arithmetic needs).
    static std::optional<Value> binary(const std::string &t, const Value &a, const Value &b) {
        if (a.dims != b.dims && a.count() != 1 && b.count() != 1)
            return std::nullopt;
        Value out = a.count() >= b.count() ? a : b;
        if (a.count() == b.count() && a.dims.size() < b.dims.size())
            out.dims = b.dims;
        out.type = a.type;
        for (size_t i = 0; i < out.v.size(); i++) {
            const double x = a.v[a.count() == 1 ? 0 : i], y = b.v[b.count() == 1 ? 0 : i];
            double r = 0;
            if (t == "Add")
                r = x + y;
            else if (t == "Sub")
                r = x - y;
            else if (t == "Mul")
                r = x * y;
            else if (t == "Div")
                r = a.integral() ? (y == 0 ? 0 : std::trunc(x / y)) : double(float(x) / float(y));
            else if (t == "Max")
                r = std::max(x, y);
            else if (t == "Min")
                r = std::min(x, y);
            else
                r = t == "Equal" ? x == y : t == "Less" ? x < y : x > y;
            out.v[i] = r;
        }
        if (t == "Equal" || t == "Less" || t == "Greater")
            out.type = onnx::TensorProto::BOOL;
        return out;
    }

    static std::optional<Value> where(const Value &c, const Value &a, const Value &b) {
        const int64_t n = std::max({c.count(), a.count(), b.count()});
        for (const Value *v : {&c, &a, &b})
            if (v->count() != 1 && v->count() != n)
                return std::nullopt;
        Value out = a.count() == n ? a : b.count() == n ? b : c;
        out.type = a.type;
        out.v.resize(size_t(n));
        for (int64_t i = 0; i < n; i++) {
            auto at = [&](const Value &v) { return v.v[v.count() == 1 ? 0 : size_t(i)]; };
            out.v[size_t(i)] = at(c) != 0 ? at(a) : at(b);
        }
        return out;
    }

    static std::optional<Value> reshaped(Value v, bool unsqueeze, Dims axes) {
        if (unsqueeze) {
            const int64_t r = int64_t(v.dims.size() + axes.size());
            for (int64_t &a : axes)
                a = a < 0 ? a + r : a;
            std::sort(axes.begin(), axes.end());
            for (int64_t a : axes) {
                if (a < 0 || a > int64_t(v.dims.size()))
                    return std::nullopt;
                v.dims.insert(v.dims.begin() + a, 1);
            }
            return v;
        }
        const int64_t r = int64_t(v.dims.size());
        Dims out;
        for (int64_t i = 0; i < r; i++) {
            const bool listed = axes.empty() ? v.dims[size_t(i)] == 1
                                             : std::count(axes.begin(), axes.end(), i) +
                                                       std::count(axes.begin(), axes.end(), i - r) >
                                                   0;
            if (!listed)
                out.push_back(v.dims[size_t(i)]);
        }
        v.dims = out;
        return v;
    }

    static std::optional<Value> reshape(Value v, Dims shape, bool allowzero) {
        int64_t known = 1, infer = -1;
        for (size_t i = 0; i < shape.size(); i++) {
            if (shape[i] == 0 && !allowzero) {
                if (i >= v.dims.size())
                    return std::nullopt;
                shape[i] = v.dims[i];
            }
            if (shape[i] == -1) {
                infer = int64_t(i);
            } else {
                // A target no folded value could have (negative, or a product past the limit) is
                // not folded; an untrusted file may hold any integers here.
                if (shape[i] < 0 || (shape[i] > 0 && known > kMaxFoldedElements * 2 / shape[i]))
                    return std::nullopt;
                known *= shape[i];
            }
        }
        if (infer >= 0) {
            if (known == 0)
                return std::nullopt;
            shape[size_t(infer)] = v.count() / known;
        }
        v.dims = shape;
        return v.count() == int64_t(v.v.size()) ? std::optional<Value>(v) : std::nullopt;
    }

    std::optional<Value> concat(const onnx::NodeProto &n) const {
        Value out = in(n, 0);
        if (out.dims.size() != 1)
            return std::nullopt;
        for (int i = 1; i < n.input_size(); i++) {
            const Value &v = in(n, i);
            if (v.dims.size() != 1)
                return std::nullopt;
            out.v.insert(out.v.end(), v.v.begin(), v.v.end());
        }
        out.dims = {int64_t(out.v.size())};
        return out;
    }

    static std::optional<Value> gather(const Value &data, const Value &indices, int64_t axis) {
        if (data.dims.size() != 1 || (axis != 0 && axis != -1))
            return std::nullopt;
        Value out = indices;
        out.type = data.type;
        const int64_t size = data.dims[0];
        for (double &i : out.v) {
            const int64_t k = int64_t(i) < 0 ? int64_t(i) + size : int64_t(i);
            if (k < 0 || k >= size)
                return std::nullopt;
            i = data.v[size_t(k)];
        }
        return out;
    }

    std::optional<Value> slice(const onnx::NodeProto &n) const {
        const Value &data = in(n, 0);
        if (data.dims.size() != 1 || !has(n, 1))
            return std::nullopt;
        const Dims starts = ints(in(n, 1)), ends = ints(in(n, 2));
        const Dims steps = has(n, 4) ? ints(in(n, 4)) : Dims(starts.size(), 1);
        if (starts.size() != 1 || ends.size() != 1 || steps.size() != 1 || steps[0] == 0)
            return std::nullopt;
        const int64_t size = data.dims[0], step = steps[0];
        auto clamp = [&](int64_t v, int64_t lo, int64_t hi) {
            return std::clamp(v < 0 ? v + size : v, lo, hi);
        };
        int64_t s = step > 0 ? clamp(starts[0], 0, size) : clamp(starts[0], 0, size - 1);
        const int64_t e = step > 0 ? clamp(ends[0], 0, size) : clamp(ends[0], -1, size - 1);
        Value out = data;
        out.v.clear();
        for (; step > 0 ? s < e : s > e; s += step)
            out.v.push_back(data.v[size_t(s)]);
        out.dims = {int64_t(out.v.size())};
        return out;
    }

    std::optional<Value> constant_of_shape(const onnx::NodeProto &n) const {
        Value out = scalar_of(onnx::TensorProto::FLOAT, 0.0);
        if (const onnx::AttributeProto *a = attribute(n, "value")) {
            std::optional<Value> v = read_tensor(a->t());
            if (!v || v->v.size() != 1)
                return std::nullopt;
            out = *v;
        }
        out.dims = ints(in(n, 0));
        const int64_t count = out.count();
        if (count < 0 || count > kMaxFoldedElements)
            return std::nullopt;
        out.v.assign(size_t(count), out.v[0]);
        return out;
    }

    static std::optional<Value> range(const Value &start, const Value &limit, const Value &delta) {
        const double s = start.v.at(0), l = limit.v.at(0), d = delta.v.at(0);
        if (d == 0)
            return std::nullopt;
        const double count = std::max(0.0, std::ceil((l - s) / d));
        if (count > double(kMaxFoldedElements))
            return std::nullopt;
        std::vector<double> v;
        for (int64_t i = 0; i < int64_t(count); i++)
            v.push_back(start.integral() ? s + double(i) * d : double(float(s + double(i) * d)));
        return vector_of(start.type, v);
    }
};

// Whether a value's declared shape has a dimension without a value.
bool symbolic(const onnx::ValueInfoProto &v) {
    if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape())
        return false;
    for (const auto &d : v.type().tensor_type().shape().dim())
        if (!d.has_dim_value())
            return true;
    return false;
}

void bind_input_dims(onnx::GraphProto &g, const std::map<std::string, int64_t> &dims) {
    for (auto &v : *g.mutable_input()) {
        if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape())
            continue;
        for (auto &d : *v.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
            auto it = d.has_dim_param() ? dims.find(d.dim_param()) : dims.end();
            if (it != dims.end())
                d.set_dim_value(it->second);
        }
    }
}

// Drops the shapes written for intermediates and outputs that have dimensions without values:
// inference gives them again from the inputs.
void forget_symbolic_shapes(onnx::GraphProto &g) {
    auto *info = g.mutable_value_info();
    for (int i = info->size() - 1; i >= 0; i--)
        if (symbolic(info->Get(i)))
            info->DeleteSubrange(i, 1);
    for (auto &v : *g.mutable_output())
        if (symbolic(v))
            v.mutable_type()->mutable_tensor_type()->clear_shape();
}

} // namespace

void infer_and_fold(onnx::ModelProto &model, const std::map<std::string, int64_t> &dims,
                    const std::function<void(onnx::ModelProto &)> &infer) {
    onnx::GraphProto &g = *model.mutable_graph();
    bind_input_dims(g, dims);
    forget_symbolic_shapes(g);
    infer(model);
    // Each round folds at least one node, so this ends.
    while (Folder(model).fold()) {
        forget_symbolic_shapes(g);
        infer(model);
    }
}

} // namespace opgen::onnx_import
