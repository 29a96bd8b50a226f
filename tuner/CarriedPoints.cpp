#include "tuner/CarriedPoints.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

namespace opgen::tuner {
namespace {

std::optional<SchedulePoint> parsed(const std::string &schedule_json) {
    try {
        return SchedulePoint::from_json(nlohmann::json::parse(schedule_json));
    } catch (const std::exception &) {
        return std::nullopt;  // another version's schedule: not a candidate
    }
}

bool same_key(const db::KernelKey &a, const db::KernelKey &b) {
    return a.op_name == b.op_name && a.op_hash == b.op_hash && a.shape == b.shape && a.dtype == b.dtype &&
           a.target == b.target;
}

// The donor's loop choices with the task's stage plan; with the other exp form where the task's
// own is not offered with these loops; with the reference's parallel loops where the donor's (of
// another thread count) are not offered.
std::optional<SchedulePoint> carried(const TilingSpace &space, const SchedulePoint &reference, SchedulePoint p) {
    p.stages = reference.stages;
    for (int parallel : {p.parallel_loops, reference.parallel_loops}) {
        p.parallel_loops = parallel;
        p.fast_math = reference.fast_math;
        if (space.contains(p)) return p;
        p.fast_math = !p.fast_math;
        if (space.contains(p)) return p;
    }
    return std::nullopt;
}

// "<name>:tN[:cold]" -> ("<name>", N); N = 0 when the target has no thread count.
std::pair<std::string, int> split_target(const std::string &target) {
    std::string base = target;
    const std::string cold = ":cold";
    if (base.size() > cold.size() && base.compare(base.size() - cold.size(), cold.size(), cold) == 0)
        base.resize(base.size() - cold.size());
    size_t at = base.rfind(":t");
    if (at == std::string::npos || at + 2 >= base.size() ||
        base.find_first_not_of("0123456789", at + 2) != std::string::npos)
        return {base, 0};
    return {base.substr(0, at), std::stoi(base.substr(at + 2))};
}

}  // namespace

std::vector<std::string> donor_targets(const std::string &target, int cores) {
    std::vector<std::string> out = {target};
    auto [name, threads] = split_target(target);
    if (threads == 0) return out;
    for (int n = 1; n <= std::max(cores, threads); n++) {
        for (const char *suffix : {"", ":cold"}) {
            std::string t = name + ":t" + std::to_string(n) + suffix;
            if (t != target) out.push_back(t);
        }
    }
    return out;
}

std::vector<SchedulePoint> carried_points(const TilingSpace &space, const SchedulePoint &reference,
                                          const db::KernelKey &own, const std::vector<db::KernelRecord> &donors,
                                          size_t limit) {
    std::vector<SchedulePoint> out;
    for (const auto &donor : donors) {
        if (out.size() >= limit) break;
        if (same_key(donor.key, own)) continue;
        std::optional<SchedulePoint> p = parsed(donor.schedule_json);
        if (!p) continue;
        std::optional<SchedulePoint> c = carried(space, reference, *p);
        if (!c || *c == reference || std::find(out.begin(), out.end(), *c) != out.end()) continue;
        out.push_back(*c);
    }
    return out;
}

}  // namespace opgen::tuner
