#include "db/GenericFit.h"

#include <nlohmann/json.hpp>

namespace opgen::db {

bool register_tiles_fit(const std::string &schedule_json, const std::map<std::string, int64_t> &extents) {
    nlohmann::json point = nlohmann::json::parse(schedule_json, nullptr, false);
    if (point.is_discarded() || !point.is_object() || !point.contains("axes") || !point["axes"].is_array()) {
        return true;
    }
    for (const nlohmann::json &axis : point["axes"]) {
        if (!axis.is_object() || !axis.contains("var") || !axis["var"].is_string() || !axis.contains("reg") ||
            !axis["reg"].is_number_integer()) {
            continue;
        }
        auto extent = extents.find(axis["var"].get<std::string>());
        if (extent != extents.end() && axis["reg"].get<int64_t>() > extent->second) {
            return false;
        }
    }
    return true;
}

} // namespace opgen::db
