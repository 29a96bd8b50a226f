#include "core/StagePlacement.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace opgen {

namespace {

bool calls(const Expr &e, const std::string &fn) {
    if (e->kind == ExprKind::Call && e->name == fn) return true;
    return std::any_of(e->args.begin(), e->args.end(), [&](const Expr &a) { return calls(a, fn); });
}

bool divides_by_variable(const Expr &e) {
    if (e->kind == ExprKind::Binary && e->name == "/") {
        ExprKind k = e->args[1]->kind;
        if (k != ExprKind::FloatConst && k != ExprKind::IntConst && k != ExprKind::Param) return true;
    }
    return std::any_of(e->args.begin(), e->args.end(), [](const Expr &a) { return divides_by_variable(a); });
}

void collect_reads(const Expr &e, std::set<std::string> &out) {
    if (e->kind == ExprKind::Access) out.insert(e->name);
    for (const auto &a : e->args) collect_reads(a, out);
}

// Lanes for one vector of the statement's type on `target`.
int stage_vector_lanes(const ComputeDef &def, const Statement &s, const Target &target) {
    return target.vector_lanes(dtype_bytes(def.find_tensor(s.tensor)->dtype));
}

}  // namespace

int placement_depth(const std::string &at) {
    if (at == "root") return 0;
    if (at == "tile") return 1;
    if (at == "row") return 2;
    return -1;
}

std::vector<const Statement *> placeable_statements(const ComputeDef &def) {
    const Statement &out = *def.statement_for(def.output().name);
    const Statement &ms = main_statement(def);
    bool fused = ms.reduce != ReduceKind::None && main_is_fusable(def);
    std::vector<const Statement *> epilogue =
        fused ? fused_epilogue(def) : std::vector<const Statement *>{};
    std::vector<const Statement *> r;
    for (const auto &s : def.statements) {
        if (&s == &out || (fused && &s == &ms)) continue;
        if (std::find(epilogue.begin(), epilogue.end(), &s) != epilogue.end())
            continue; // inlined in the output
        r.push_back(&s);
    }
    return r;
}

bool fast_math_applies(const ComputeDef &def) {
    return std::any_of(def.statements.begin(), def.statements.end(), [&](const Statement &s) {
        DType t = def.find_tensor(s.tensor)->dtype;
        bool is_float = !dtype_is_integer(t);
        return calls(s.body, "exp") || calls(s.body, "erf") || calls(s.body, "tanh") ||
               (is_float && divides_by_variable(s.body));
    });
}

std::string stage_placement_error(const ComputeDef &def, const std::vector<StageChoice> &stages) {
    std::vector<const Statement *> placeable = placeable_statements(def);
    std::map<std::string, std::string> at;  // tensor -> placement
    for (const StageChoice &c : stages) {
        auto it = std::find_if(placeable.begin(), placeable.end(), [&](const Statement *s) { return s->tensor == c.tensor; });
        if (it == placeable.end()) return "'" + c.tensor + "' is not a statement a point places";
        if (at.count(c.tensor)) return "'" + c.tensor + "' is placed twice";
        if (placement_depth(c.at) < 0 && c.at != "inline") {
            return "'" + c.tensor + "' placed at '" + c.at + "' (root, tile, row or inline)";
        }
        if (c.at == "inline" && (*it)->reduce != ReduceKind::None) return "reduction '" + c.tensor + "' cannot be inlined";
        if (c.lanes < 1 || (c.lanes > 1 && (*it)->reduce == ReduceKind::None)) {
            return "'" + c.tensor + "' has lanes " + std::to_string(c.lanes) + " (1, or more for a reduction)";
        }
        at[c.tensor] = c.at;
    }
    // A statement not named is at root when it is a reduction, inlined otherwise (today's).
    auto place = [&](const Statement &s) {
        auto it = at.find(s.tensor);
        if (it != at.end()) return it->second;
        return std::string(s.reduce != ReduceKind::None ? "root" : "inline");
    };
    // What a statement reads once inlined statements are expanded into it.
    std::function<void(const Statement &, std::set<std::string> &)> reads = [&](const Statement &s, std::set<std::string> &out) {
        std::set<std::string> direct;
        collect_reads(s.body, direct);
        for (const auto &t : direct) {
            if (!out.insert(t).second) continue;
            const Statement *p = def.statement_for(t);
            if (p && p != &s && place(*p) == "inline" && p->tensor != def.output().name) reads(*p, out);
        }
    };
    // A producer must be computed at its consumer's loop or outside it: one placed deeper in the
    // output's loops is not yet computed when the consumer runs.
    for (const Statement *s : placeable) {
        int depth = placement_depth(place(*s));
        if (depth < 0) continue;  // inlined: its reads count in its consumers
        std::set<std::string> r;
        reads(*s, r);
        for (const auto &t : r) {
            const Statement *p = def.statement_for(t);
            if (p && at.count(t) && placement_depth(at[t]) > depth) {
                return "'" + s->tensor + "' at " + place(*s) + " reads '" + t + "', placed at " + at[t];
            }
        }
    }
    return "";
}

std::vector<int> reduction_lanes(const Statement &s, const BoundShape &shape, int vector_lanes) {
    std::vector<int> lanes{1};
    if (s.reduce == ReduceKind::None || s.reduce_vars.empty() || vector_lanes <= 1) return lanes;
    int64_t extent = shape.eval(s.reduce_vars.back().extent);  // the innermost reduction loop
    auto fits = [&](int l) { return extent % l == 0 && extent > l; };
    // Several vectors of partial results are independent add chains: a vector add's latency is
    // about four times its issue interval, so one or two chains leave the adder mostly idle.
    for (int vectors : {2, 4, 8}) {
        if (fits(vectors * vector_lanes)) lanes.push_back(vectors * vector_lanes);
    }
    if (lanes.size() == 1 && fits(vector_lanes)) lanes.push_back(vector_lanes);
    return lanes;
}

std::vector<std::vector<StageChoice>> offered_placements(const ComputeDef &def, const BoundShape &shape,
                                                         const Target &target) {
    std::vector<std::vector<StageChoice>> options;  // per placeable statement
    for (const Statement *s : placeable_statements(def)) {
        std::vector<StageChoice> o;
        if (s->reduce == ReduceKind::None) {
            for (const char *at : {"inline", "tile", "root", "row"}) o.push_back({s->tensor, at, 1});
        } else {
            for (const char *at : {"root", "tile", "row"}) {
                for (int l : reduction_lanes(*s, shape, stage_vector_lanes(def, *s, target))) o.push_back({s->tensor, at, l});
            }
        }
        options.push_back(o);
    }
    std::vector<std::vector<StageChoice>> out;
    if (options.empty()) return out;
    std::vector<size_t> idx(options.size(), 0);
    while (true) {
        std::vector<StageChoice> c;
        for (size_t i = 0; i < options.size(); i++) c.push_back(options[i][idx[i]]);
        if (stage_placement_error(def, c).empty()) out.push_back(std::move(c));
        size_t k = 0;
        while (k < idx.size() && ++idx[k] == options[k].size()) idx[k++] = 0;
        if (k == idx.size()) break;
    }
    return out;
}

std::vector<StageChoice> heuristic_placement(const ComputeDef &def, const BoundShape &shape, const Target &target,
                                             const std::string &at) {
    std::vector<StageChoice> out;
    for (const Statement *s : placeable_statements(def)) {
        if (s->reduce != ReduceKind::None) {
            out.push_back({s->tensor, at, reduction_lanes(*s, shape, stage_vector_lanes(def, *s, target)).back()});
            continue;
        }
        int readers = 0;
        for (const auto &t : def.statements) {
            std::set<std::string> r;
            collect_reads(t.body, r);
            readers += int(r.count(s->tensor));
        }
        out.push_back({s->tensor, readers >= 2 ? at : "inline", 1});
    }
    // One level everywhere is realisable unless a root statement remains; none does here.
    return out;
}

}  // namespace opgen
