#include "onnx/DynamicDims.h"

#include "base/Error.h"

#include <algorithm>
#include <set>

namespace opgen::onnx_import {

namespace {

int64_t whole_number(const std::string &text, const std::string &context) {
    size_t used = 0;
    long long v = 0;
    try {
        v = std::stoll(text, &used);
    } catch (const std::exception &) {
        used = 0;
    }
    user_check(used == text.size() && !text.empty()) << context << ": '" << text << "' is not a whole number";
    return v;
}

// Where a size of a compiled model goes: a kernel's parameter or attribute, a dim of one of its op
// tensors (call order) or a dim of a graph input or output; with a label for messages.
struct SizeSlot {
    size_t kernel = 0;
    std::string param;  // a kernel's parameter or attribute; empty for a dim
    size_t tensor = 0;  // the op tensor's place in kernel_call_tensors, for a kernel's dim
    std::string io;     // the graph input or output, for its dim
    std::string label;
};

// Every size a library reads, in one order for models of one structure: per kernel its
// parameters and attributes (canonical), then its tensors' dims; then the graph inputs' and
// outputs' dims.
struct SizeList {
    std::vector<int64_t> values;
    std::vector<SizeSlot> slots;  // where each goes
};

std::string kernel_label(const CompiledModel &m, size_t k) {
    return "kernel " + std::to_string(k) + " (" + m.partition.kernels[k].op + ")";
}

SizeList sizes_of(const CompiledModel &m) {
    SizeList s;
    auto add = [&](int64_t v, SizeSlot slot) {
        s.values.push_back(v);
        s.slots.push_back(std::move(slot));
    };
    for (size_t k = 0; k < m.partition.kernels.size(); k++) {
        for (const auto &[name, v] : parse_shape_text(m.canonical[k]))
            add(v, {k, name, 0, "", kernel_label(m, k) + " " + name});
        std::vector<const TensorDecl *> tensors = kernel_call_tensors(m, k);
        for (size_t t = 0; t < tensors.size(); t++) {
            const std::vector<int64_t> &d = m.bounds[k].dims.at(tensors[t]->name);
            for (size_t i = 0; i < d.size(); i++)
                add(d[i], {k, "", t, "", kernel_label(m, k) + " tensor " + tensors[t]->name + " dim " + std::to_string(i)});
        }
    }
    for (const auto *list : {&m.graph.inputs, &m.graph.outputs})
        for (const std::string &name : *list) {
            const std::vector<int64_t> &d = m.graph.tensor(name).dims;
            for (size_t i = 0; i < d.size(); i++) add(d[i], {0, "", 0, name, "tensor '" + name + "' dim " + std::to_string(i)});
        }
    return s;
}

std::string values_text(const std::vector<DimRange> &ranges, const std::vector<int64_t> &values) {
    std::string t;
    for (size_t i = 0; i < ranges.size(); i++) t += (i ? "," : "") + ranges[i].name + "=" + std::to_string(values[i]);
    return t;
}

// The first way `b`'s kernels differ from `a`'s: ops and their texts, nodes, arguments and the
// constants they compute; "" when none.
std::string kernel_difference(const CompiledModel &a, const CompiledModel &b) {
    if (a.partition.kernels.size() != b.partition.kernels.size())
        return std::to_string(a.partition.kernels.size()) + " kernels against " +
               std::to_string(b.partition.kernels.size());
    for (size_t k = 0; k < a.partition.kernels.size(); k++) {
        const SubgraphKernel &x = a.partition.kernels[k], &y = b.partition.kernels[k];
        if (x.op != y.op || x.text != y.text || x.args != y.args || x.nodes != y.nodes)
            return kernel_label(a, k) + " is " + y.op + " or covers other nodes or tensors";
        for (size_t c = 0; c < x.constants.size() && c < y.constants.size(); c++)
            if (x.constants[c].data != y.constants[c].data || x.constants[c].raw != y.constants[c].raw ||
                x.constants[c].dims != y.constants[c].dims)
                return kernel_label(a, k) + " computes constant '" + x.constants[c].name + "' from the dims";
        if (x.constants.size() != y.constants.size()) return kernel_label(a, k) + " computes other constants";
    }
    return "";
}

// The first way `b` differs from `a` in what a library's tables hold apart from sizes: its kernels
// (kernel_difference), views, re-laid weights, tensors and weights' dims; "" when none.
std::string structure_difference(const CompiledModel &a, const CompiledModel &b) {
    if (std::string why = kernel_difference(a, b); !why.empty()) return why;
    if (a.partition.views.size() != b.partition.views.size()) return "the views differ";
    for (size_t v = 0; v < a.partition.views.size(); v++)
        if (a.partition.views[v].tensor != b.partition.views[v].tensor ||
            a.partition.views[v].source != b.partition.views[v].source)
            return "view '" + a.partition.views[v].tensor + "' differs";
    if (a.partition.relayouts.size() != b.partition.relayouts.size()) return "the re-laid weights differ";
    if (a.graph.inputs != b.graph.inputs || a.graph.outputs != b.graph.outputs) return "the inputs or outputs differ";
    if (a.graph.tensors.size() != b.graph.tensors.size()) return "the tensors differ";
    for (const auto &[name, t] : a.graph.tensors) {
        auto it = b.graph.tensors.find(name);
        if (it == b.graph.tensors.end() || it->second.kind != t.kind || it->second.elem_type != t.elem_type ||
            it->second.layout != t.layout)
            return "tensor '" + name + "' differs";
        if (t.kind == TensorKind::Weight && it->second.dims != t.dims)
            return "weight '" + name + "' has a shape that depends on the dims";
        if (t.dims.size() != it->second.dims.size()) return "tensor '" + name + "' has another rank";
    }
    return "";
}

// The probes: every range at hi (the first), each range alone one below hi, then every range at
// lo and every range half way, where those differ from the probes before.
std::vector<std::vector<int64_t>> probe_points(const std::vector<DimRange> &ranges) {
    std::vector<int64_t> top;
    for (const DimRange &r : ranges) top.push_back(r.hi);
    std::vector<std::vector<int64_t>> points = {top};
    for (size_t i = 0; i < ranges.size(); i++) {
        points.push_back(top);
        points.back()[i] = ranges[i].hi - 1;
    }
    for (bool mid : {false, true}) {
        std::vector<int64_t> p;
        for (const DimRange &r : ranges) p.push_back(mid ? (r.lo + r.hi) / 2 : r.lo);
        if (std::find(points.begin(), points.end(), p) == points.end()) points.push_back(p);
    }
    return points;
}

// Each size's affine form from the probes' sizes (probe 0 at hi, probe 1+i with range i one
// below), checked at every later probe.
std::vector<AffineSize> affine_sizes(const std::vector<DimRange> &ranges,
                                     const std::vector<std::vector<int64_t>> &points,
                                     const std::vector<SizeList> &sizes) {
    const SizeList &top = sizes[0];
    std::vector<AffineSize> out(top.values.size());
    for (size_t s = 0; s < out.size(); s++) {
        AffineSize &a = out[s];
        a.base = top.values[s];
        for (size_t i = 0; i < ranges.size(); i++) {
            a.per.push_back(top.values[s] - sizes[1 + i].values[s]);  // one step of range i
            a.base -= a.per.back() * ranges[i].hi;
        }
        for (size_t p = 1 + ranges.size(); p < points.size(); p++)
            user_check(a.at(points[p]) == sizes[p].values[s])
                << top.slots[s].label << " is " << sizes[p].values[s] << " at " << values_text(ranges, points[p])
                << " but " << a.at(points[p]) << " on the line through " << values_text(ranges, points[0])
                << ": a size that is not affine in the ranged dims cannot be computed at run time";
        for (size_t i = 0; i < ranges.size(); i++)
            user_check(a.per[i] >= 0) << top.slots[s].label << " shrinks as " << ranges[i].name
                                      << " grows; the library's memory is planned at the largest values";
    }
    return out;
}

// Which of each kernel's parameters vary (d.varying, d.varies), each checked to be a parameter its
// generic kernel takes; every kernel's and graph tensor's dims as rules (d.arg_dims, d.io_dims).
void place_sizes(DynamicModel &d, const SizeList &sizes, const std::vector<AffineSize> &affine) {
    const CompiledModel &m = d.top;
    d.varying.assign(m.partition.kernels.size(), {});
    d.arg_dims.resize(m.partition.kernels.size());
    for (size_t k = 0; k < m.partition.kernels.size(); k++) d.arg_dims[k].resize(kernel_call_tensors(m, k).size());
    for (size_t s = 0; s < affine.size(); s++) {
        const SizeSlot &slot = sizes.slots[s];
        if (!slot.io.empty()) {
            d.io_dims[slot.io].push_back(affine[s]);
        } else if (slot.param.empty()) {
            d.arg_dims[slot.kernel][slot.tensor].push_back(affine[s]);
        } else if (affine[s].varies()) {
            std::vector<std::string> symbols = m.defs[slot.kernel].symbolic_params();
            user_check(std::count(symbols.begin(), symbols.end(), slot.param))
                << kernel_label(m, slot.kernel) << " at " << m.canonical[slot.kernel] << ": its '" << slot.param
                << "' depends on the ranged dims, but its op's generic kernel fixes it";
            d.varying[slot.kernel].insert(slot.param);
        }
    }
    for (const std::set<std::string> &v : d.varying) d.varies.push_back(!v.empty());
}

// Each range must be one input dim's value alone (scaled and shifted), which the program reads it
// from (`<model>_infer_dims`).
void check_ranges_read(const DynamicModel &d, const std::string &path) {
    for (size_t i = 0; i < d.ranges.size(); i++) {
        bool told = false;
        for (const std::string &input : d.top.graph.inputs)
            for (const AffineSize &a : d.io_dims.at(input)) {
                bool alone = a.per[i] != 0;
                for (size_t j = 0; j < a.per.size(); j++) alone &= j == i || a.per[j] == 0;
                told |= alone;
            }
        user_check(told) << "--dim " << d.ranges[i].name << "=" << d.ranges[i].lo << ".." << d.ranges[i].hi
                         << ": no input of model '" << path << "' has a dim that is this range's value alone";
    }
}

std::vector<std::vector<int64_t>> specialization_points(const std::vector<DimRange> &ranges) {
    std::vector<std::vector<int64_t>> points = {{}};
    for (const DimRange &r : ranges) {
        std::vector<std::vector<int64_t>> next;
        for (const auto &p : points)
            for (int64_t v : r.specialized) {
                next.push_back(p);
                next.back().push_back(v);
            }
        points = next;
    }
    user_check(points.size() <= 64) << "the ranges' specializations make " << points.size()
                                    << " combinations; at most 64 are compiled";
    return points;
}

}  // namespace

int64_t AffineSize::at(const std::vector<int64_t> &values) const {
    int64_t v = base;
    for (size_t i = 0; i < per.size() && i < values.size(); i++) v += per[i] * values[i];
    return v;
}

bool AffineSize::varies() const {
    return std::any_of(per.begin(), per.end(), [](int64_t p) { return p != 0; });
}

std::optional<DimRange> parse_dim_range(const std::string &text) {
    size_t eq = text.find('='), dots = text.find("..");
    if (dots == std::string::npos) return std::nullopt;
    const std::string context = "--dim " + text;
    user_check(eq != std::string::npos && eq > 0 && dots > eq) << context << ": expected NAME=LO..HI";
    DimRange r;
    r.name = text.substr(0, eq);
    r.lo = whole_number(text.substr(eq + 1, dots - eq - 1), context);
    r.hi = whole_number(text.substr(dots + 2), context);
    user_check(r.lo >= 1 && r.lo < r.hi) << context << ": a range needs 1 <= LO < HI";
    r.specialized = {r.hi};
    return r;
}

void add_specializations(std::vector<DimRange> &ranges, const std::string &text) {
    const std::string context = "--specialize " + text;
    size_t eq = text.find('=');
    user_check(eq != std::string::npos && eq > 0) << context << ": expected NAME=V[,V...]";
    auto r = std::find_if(ranges.begin(), ranges.end(), [&](const DimRange &d) { return d.name == text.substr(0, eq); });
    user_check(r != ranges.end()) << context << ": no --dim " << text.substr(0, eq) << "=LO..HI names that range";
    std::string rest = text.substr(eq + 1);
    for (size_t at = 0; at <= rest.size();) {
        size_t comma = std::min(rest.find(',', at), rest.size());
        int64_t v = whole_number(rest.substr(at, comma - at), context);
        user_check(v >= r->lo && v <= r->hi) << context << ": " << v << " lies outside " << r->lo << ".." << r->hi;
        r->specialized.push_back(v);
        at = comma + 1;
    }
    std::sort(r->specialized.begin(), r->specialized.end());
    r->specialized.erase(std::unique(r->specialized.begin(), r->specialized.end()), r->specialized.end());
}

DynamicModel compile_dynamic_model(const std::string &path, const std::map<std::string, int64_t> &fixed,
                                   const std::vector<DimRange> &ranges, const OpLibrary &lib, int64_t max_bytes,
                                   bool blocked, const FixedInputs &fixed_inputs) {
    auto at = [&](const std::vector<int64_t> &values, bool weights) {
        std::map<std::string, int64_t> dims = fixed;
        for (size_t i = 0; i < ranges.size(); i++) dims[ranges[i].name] = values[i];
        // Winograd's kernels depend on the dims' values (one image, even sizes), so a library of
        // ranges keeps the direct convolutions, whose kernels every value shares.
        return compile_model(path, dims, lib, max_bytes, weights, Layouts{blocked, false}, fixed_inputs);
    };
    DynamicModel d;
    d.ranges = ranges;
    std::vector<std::vector<int64_t>> probes = probe_points(ranges);
    d.top = at(probes[0], true);
    std::vector<SizeList> sizes = {sizes_of(d.top)};
    auto same = [&](const CompiledModel &m, const std::vector<int64_t> &values) {
        std::string why = structure_difference(d.top, m);
        user_check(why.empty()) << "model '" << path << "' at " << values_text(ranges, values)
                                << " is not the graph it is at " << values_text(ranges, probes[0]) << ": " << why
                                << "; one library cannot serve both";
    };
    for (size_t p = 1; p < probes.size(); p++) {
        CompiledModel m = at(probes[p], false);
        same(m, probes[p]);
        sizes.push_back(sizes_of(m));
    }
    std::vector<AffineSize> affine = affine_sizes(ranges, probes, sizes);
    place_sizes(d, sizes[0], affine);
    check_ranges_read(d, path);
    d.points = specialization_points(ranges);
    for (const auto &p : d.points) {
        d.specialized.push_back(at(p, false));
        same(d.specialized.back(), p);
    }
    return d;
}

std::string generic_op_text(const DynamicModel &d, size_t k) {
    const ComputeDef &def = d.top.defs[k];
    std::string params;
    for (const ParamDecl &p : def.params) {
        if (p.is_attr) continue;
        params += params.empty() ? "param " : ", ";
        params += p.name;
        if (!d.varying[k].count(p.name)) params += " = " + std::to_string(d.top.bounds[k].values.at(p.name));
    }
    std::string out;
    bool placed = false;
    for (size_t at = 0; at < def.source.size();) {
        size_t end = std::min(def.source.find('\n', at), def.source.size());
        std::string line = def.source.substr(at, end - at);
        at = end + 1;
        if (line.rfind("param ", 0) == 0) {
            if (!placed) out += params + "\n";
            placed = true;
            continue;
        }
        out += line + "\n";
    }
    internal_check(placed) << "op '" << def.name << "' has no param line";
    return out;
}

}  // namespace opgen::onnx_import
