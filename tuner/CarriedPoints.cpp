#include "tuner/CarriedPoints.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>

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
// own is not offered with these loops.
std::optional<SchedulePoint> carried(const TilingSpace &space, const SchedulePoint &reference, SchedulePoint p) {
    p.stages = reference.stages;
    p.fast_math = reference.fast_math;
    if (space.contains(p)) return p;
    p.fast_math = !p.fast_math;
    if (space.contains(p)) return p;
    return std::nullopt;
}

}  // namespace

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
