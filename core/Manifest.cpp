#include "core/Manifest.h"

#include "base/Error.h"
#include "core/Shape.h"
#include "core/Target.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

namespace opgen {

namespace {

using nlohmann::json;

// A product of more shapes than this is almost certainly a typo in a range.
constexpr size_t max_tasks = 100000;

// Where a message points: `manifest 'f' entry 3 field "shapes[1].N"`.
struct Place {
    const std::string &path;
    size_t entry;
    std::string at(const std::string &field) const {
        return "manifest '" + path + "' entry " + std::to_string(entry) + " field \"" + field + "\"";
    }
};

int64_t as_int(const json &v, const Place &p, const std::string &field) {
    user_check(v.is_number_integer()) << p.at(field) << ": expected an integer, got " << v.dump();
    return v.get<int64_t>();
}

// The values one parameter takes in a shape object.
std::vector<int64_t> param_values(const json &v, const Place &p, const std::string &field) {
    if (v.is_number_integer()) return {v.get<int64_t>()};
    std::vector<int64_t> out;
    if (v.is_array()) {
        user_check(!v.empty()) << p.at(field) << ": the list of values is empty";
        for (size_t i = 0; i < v.size(); i++) out.push_back(as_int(v[i], p, field + "[" + std::to_string(i) + "]"));
        return out;
    }
    user_check(v.is_object()) << p.at(field)
                              << ": expected an integer, a list of integers or a range {\"from\", \"to\", \"step\"|\"times\"}";
    for (const auto &[k, _] : v.items())
        user_check(k == "from" || k == "to" || k == "step" || k == "times")
            << p.at(field + "." + k) << ": unknown range field (expected from, to, step or times)";
    user_check(v.contains("from") && v.contains("to")) << p.at(field) << ": a range needs \"from\" and \"to\"";
    user_check(v.contains("step") != v.contains("times"))
        << p.at(field) << ": a range needs exactly one of \"step\" (arithmetic) or \"times\" (geometric)";
    int64_t from = as_int(v["from"], p, field + ".from");
    int64_t to = as_int(v["to"], p, field + ".to");
    user_check(from <= to) << p.at(field) << ": \"from\" " << from << " is larger than \"to\" " << to;
    if (v.contains("step")) {
        int64_t step = as_int(v["step"], p, field + ".step");
        user_check(step > 0) << p.at(field + ".step") << ": must be positive, got " << step;
        user_check((to - from) / step < int64_t(max_tasks)) << p.at(field) << ": the range has more than " << max_tasks << " values";
        for (int64_t x = from; x <= to; x += step) out.push_back(x);
        return out;
    }
    int64_t times = as_int(v["times"], p, field + ".times");
    user_check(times >= 2) << p.at(field + ".times") << ": must be at least 2, got " << times;
    user_check(from > 0) << p.at(field + ".from") << ": a geometric range must start above 0, got " << from;
    for (int64_t x = from; x <= to; x *= times) out.push_back(x);
    return out;
}

// Shape texts of one item of "shapes": the string itself, or the product of an object's values.
std::vector<std::string> shape_texts(const json &s, const Place &p, const std::string &field) {
    if (s.is_string()) return {s.get<std::string>()};
    user_check(s.is_object() && !s.empty())
        << p.at(field) << ": expected a shape string like \"M=512,N=512,K=512\" or an object {\"M\": [..], ...}";
    std::vector<std::string> out{""};
    for (const auto &[name, v] : s.items()) {
        std::vector<int64_t> values = param_values(v, p, field + "." + name);
        user_check(out.size() * values.size() <= max_tasks)
            << p.at(field) << ": the product has more than " << max_tasks << " shapes";
        std::vector<std::string> next;
        for (const auto &prefix : out)
            for (int64_t x : values) next.push_back(prefix + (prefix.empty() ? "" : ",") + name + "=" + std::to_string(x));
        out = std::move(next);
    }
    return out;
}

std::string string_field(const json &e, const char *name, const std::string &fallback, const Place &p) {
    if (!e.contains(name)) return fallback;
    user_check(e[name].is_string() && !e[name].get<std::string>().empty())
        << p.at(name) << ": expected a non-empty string, got " << e[name].dump();
    return e[name].get<std::string>();
}

ManifestDefaults read_defaults(const json &e, const ManifestDefaults &d, const Place &p) {
    ManifestDefaults out = d;
    out.dtype = string_field(e, "dtype", d.dtype, p);
    out.target = string_field(e, "target", d.target, p);
    if (e.contains("trials")) {
        int64_t t = as_int(e["trials"], p, "trials");
        user_check(t >= 1 && t <= 100000) << p.at("trials") << ": must be between 1 and 100000, got " << t;
        out.trials = int(t);
    }
    if (e.contains("seed")) {
        user_check(e["seed"].is_number_unsigned() || (e["seed"].is_number_integer() && e["seed"].get<int64_t>() >= 0))
            << p.at("seed") << ": expected a non-negative integer, got " << e["seed"].dump();
        out.seed = e["seed"].get<uint64_t>();
    }
    return out;
}

size_t edit_distance(const std::string &a, const std::string &b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); j++) row[j] = j;
    for (size_t i = 1; i <= a.size(); i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); j++) {
            size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

// Fields other tools keep in the same file (the benchmark suite's "labels") are left alone; a
// field that looks like a misspelt known one is an error, so a typo does not silently drop a
// setting.
void check_fields(const json &e, const std::set<std::string> &known, const std::string &where) {
    for (const auto &[k, _] : e.items()) {
        if (known.count(k)) continue;
        for (const auto &n : known)
            user_check(edit_distance(k, n) > std::min<size_t>(2, (n.size() - 1) / 2)) << where << k << "\": unknown field (did you mean \"" << n << "\"?)";
    }
}

// The manifest's top-level object, its fields checked and its "entries" a non-empty array.
json manifest_object(const std::string &text, const std::string &path) {
    json m;
    try {
        m = json::parse(text);
    } catch (const json::exception &e) {
        user_check(false) << "manifest '" << path << "': not valid JSON: " << e.what();
    }
    user_check(m.is_object()) << "manifest '" << path << "': expected an object with an array \"entries\"";
    check_fields(m, {"entries", "defaults", "name", "comment", "source"}, "manifest '" + path + "' field \"");
    user_check(m.contains("entries") && m["entries"].is_array() && !m["entries"].empty())
        << "manifest '" << path << "': expected a non-empty array \"entries\"";
    return m;
}

// The command line's defaults overridden by the manifest's "defaults" object, if it has one.
ManifestDefaults manifest_defaults(const json &m, const std::string &path, const ManifestDefaults &cli_defaults) {
    if (!m.contains("defaults")) return cli_defaults;
    const json &d = m["defaults"];
    user_check(d.is_object()) << "manifest '" << path << "' field \"defaults\": expected an object";
    check_fields(d, {"dtype", "target", "trials", "seed"}, "manifest '" + path + "' field \"defaults.");
    // Reported as entry 0's place would mislead; a bad default names the defaults object.
    try {
        return read_defaults(d, cli_defaults, Place{path, 0});
    } catch (const UserError &e) {
        std::string msg = e.what();
        std::string from = "entry 0 field \"";
        auto at = msg.find(from);
        if (at != std::string::npos) msg.replace(at, from.size(), "field \"defaults.");
        throw UserError(msg);
    }
}

// The op an entry names, loaded from `lib`, after checking the entry's fields.
ComputeDef entry_op(const json &e, const Place &p, const OpLibrary &lib) {
    static const std::set<std::string> known{"op", "shapes", "dtype", "target", "trials", "seed", "name", "comment"};
    user_check(e.is_object()) << "manifest '" << p.path << "' entry " << p.entry << ": expected an object";
    check_fields(e, known, "manifest '" + p.path + "' entry " + std::to_string(p.entry) + " field \"");
    user_check(e.contains("op") && e["op"].is_string()) << p.at("op") << ": expected the op's name as a string";
    ComputeDef def;
    try {
        def = lib.load(e["op"].get<std::string>());
    } catch (const UserError &err) {
        user_check(false) << p.at("op") << ": " << err.what();
    }
    return def;
}

// An entry's settings over the manifest's defaults: the dtype must be the op's (the op's when
// none is given) and the target one that loads (each target is loaded once, then in `loaded`).
ManifestDefaults entry_settings(const json &e, const ComputeDef &def, const ManifestDefaults &defaults,
                                const Place &p, std::set<std::string> &loaded) {
    ManifestDefaults d = read_defaults(e, defaults, p);
    std::string op_types = op_dtype(def);
    if (d.dtype.empty()) d.dtype = op_types;
    user_check(d.dtype == op_types) << p.at("dtype") << ": op '" << def.name << "' computes " << op_types
                                    << ", not " << d.dtype;
    if (!loaded.count(d.target)) {
        try {
            load_target(d.target);
        } catch (const UserError &err) {
            user_check(false) << p.at("target") << ": " << err.what();
        }
        loaded.insert(d.target);
    }
    return d;
}

// Adds the entry's tasks, one per shape of its "shapes", to `out`; a task whose (op, shape,
// target) an earlier one has (in `seen`) is counted as a duplicate instead.
void add_entry_tasks(const json &e, const Place &p, const ComputeDef &def, const ManifestDefaults &d,
                     std::set<std::string> &seen, Manifest &out) {
    user_check(e.contains("shapes") && e["shapes"].is_array() && !e["shapes"].empty())
        << p.at("shapes") << ": expected a non-empty array of shapes";
    for (size_t s = 0; s < e["shapes"].size(); s++) {
        std::string field = "shapes[" + std::to_string(s) + "]";
        for (const std::string &text : shape_texts(e["shapes"][s], p, field)) {
            BoundShape shape;
            try {
                shape = bind_shape(def, text);
            } catch (const UserError &err) {
                user_check(false) << p.at(field) << ": " << err.what();
            }
            BatchTask t{p.entry, def.name, shape.canonical, d.dtype, d.target, d.trials, d.seed, {}};
            if (!seen.insert(t.op + "|" + t.shape + "|" + t.target).second) {
                out.duplicates++;
                continue;
            }
            out.tasks.push_back(std::move(t));
            user_check(out.tasks.size() <= max_tasks)
                << "manifest '" << p.path << "': more than " << max_tasks << " tasks";
        }
    }
}

}  // namespace

Manifest parse_manifest(const std::string &text, const std::string &path, const OpLibrary &lib,
                        const ManifestDefaults &cli_defaults) {
    const json m = manifest_object(text, path);
    const ManifestDefaults defaults = manifest_defaults(m, path, cli_defaults);
    Manifest out;
    out.path = path;
    out.entries = m["entries"].size();
    std::set<std::string> seen;
    std::set<std::string> loaded_targets;
    for (size_t i = 0; i < m["entries"].size(); i++) {
        const json &e = m["entries"][i];
        const Place p{path, i};
        const ComputeDef def = entry_op(e, p, lib);
        const ManifestDefaults d = entry_settings(e, def, defaults, p, loaded_targets);
        add_entry_tasks(e, p, def, d, seen, out);
    }
    return out;
}

Manifest load_manifest(const std::string &path, const OpLibrary &lib, const ManifestDefaults &defaults) {
    std::ifstream in(path);
    user_check(in.good()) << "cannot read manifest '" << path << "'";
    std::ostringstream text;
    text << in.rdbuf();
    return parse_manifest(text.str(), path, lib, defaults);
}

Shard parse_shard(const std::string &text) {
    Shard s;
    auto slash = text.find('/');
    bool ok = slash != std::string::npos && slash > 0 && slash + 1 < text.size();
    try {
        size_t used = 0;
        if (ok) s.index = std::stoi(text.substr(0, slash), &used);
        ok = ok && used == slash;
        if (ok) s.count = std::stoi(text.substr(slash + 1), &used);
        ok = ok && used == text.size() - slash - 1;
    } catch (const std::exception &) {
        ok = false;
    }
    user_check(ok) << "--shard '" << text << "': expected i/N, e.g. 0/4";
    user_check(s.count >= 1 && s.index >= 0 && s.index < s.count)
        << "--shard '" << text << "': need 0 <= i < N, got i=" << s.index << " N=" << s.count;
    return s;
}

std::vector<BatchTask> shard_tasks(const std::vector<BatchTask> &tasks, const Shard &shard) {
    std::vector<BatchTask> out;
    for (size_t j = 0; j < tasks.size(); j++)
        if (j % size_t(shard.count) == size_t(shard.index)) out.push_back(tasks[j]);
    return out;
}

}  // namespace opgen
