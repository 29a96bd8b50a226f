#include "tuner/CarriedPoints.h"

#include "tuner/ColdInputs.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <string>

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

}  // namespace

std::vector<std::string> donor_targets(const db::KernelKey &own, const std::vector<db::KernelKey> &plain) {
    std::vector<std::string> siblings;
    for (const db::KernelKey &k : plain) {
        siblings.push_back(k.target);
        siblings.push_back(cold_key(k).target);
    }
    std::vector<std::string> out = {own.target};
    if (std::find(siblings.begin(), siblings.end(), own.target) == siblings.end()) return out;
    for (const std::string &t : siblings) {
        if (t != own.target) out.push_back(t);
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
