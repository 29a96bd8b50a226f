#include "runtime/GenericFit.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

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

std::vector<int64_t> register_tiles(const std::string &schedule_json) {
    nlohmann::json point = nlohmann::json::parse(schedule_json, nullptr, false);
    if (point.is_discarded() || !point.is_object() || !point.contains("axes") || !point["axes"].is_array()) {
        return {};
    }
    std::vector<int64_t> tiles;
    for (const nlohmann::json &axis : point["axes"]) {
        bool has_reg = axis.is_object() && axis.contains("reg") && axis["reg"].is_number_integer();
        tiles.push_back(has_reg ? std::max<int64_t>(1, axis["reg"].get<int64_t>()) : 1);
    }
    return tiles;
}

double register_tile_overwork(const std::vector<int64_t> &tiles, const std::vector<int64_t> &output_dims) {
    double log_overwork = 0;
    for (size_t i = 0; i < tiles.size() && i < output_dims.size(); i++) {
        const int64_t e = output_dims[i], reg = tiles[i];
        if (e < 1 || reg <= 1) continue;
        // In doubles: a row's tile may be any number, and ceil(e / reg) * reg would overflow.
        const double tiles_needed = std::ceil(double(e) / double(reg));
        log_overwork += std::log(tiles_needed * double(reg) / double(e));
    }
    return log_overwork;
}

bool register_tiles_fit_dims(const std::vector<int64_t> &tiles, const std::vector<int64_t> &output_dims) {
    for (size_t i = 0; i < tiles.size() && i < output_dims.size(); i++) {
        if (tiles[i] > output_dims[i]) return false;
    }
    return true;
}

} // namespace opgen::db
