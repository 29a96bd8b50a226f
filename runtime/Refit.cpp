// refit_schedule (declared in Lookup.h): a neighbour's schedule point made to fit new extents.
//
// The choices come from the legality rules' one table (base/TilingTable.h), which the space's rules
// enumerate from too: register tiles per axis position, cache tiles as power-of-two multiples of
// the register tile or the whole axis, reduction blocks as multiples of 16 dividing the extent.
// Only the schedule's JSON is edited: the runtime knows no op definitions.
#include "runtime/Lookup.h"

#include "base/TilingTable.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <nlohmann/json.hpp>

namespace opgen::db {

namespace {

// The largest of `choices` (in increasing order) at most `limit`; the first when none is.
int64_t largest_at_most(const std::vector<int64_t> &choices, int64_t limit) {
    int64_t best = choices.front();
    for (int64_t c : choices) {
        if (c <= limit) best = c;
    }
    return best;
}

bool is_power_of_two(int64_t v) {
    return v > 0 && (v & (v - 1)) == 0;
}

// The cache tile for register tile `reg` on an axis of `extent`, keeping the neighbour's ratio.
int64_t fit_tile(int64_t old_tile, int64_t old_reg, int64_t reg, int64_t extent) {
    if (old_tile % old_reg != 0 || !is_power_of_two(old_tile / old_reg)) {
        return extent; // the neighbour tiled the whole axis
    }
    int64_t tile = reg * (old_tile / old_reg);
    return tile >= extent ? extent : tile;
}

// The largest dividing block of the table at most the old block; the extent (not blocked) when the
// old block was the whole loop or no dividing block is that small.
int64_t fit_block(int64_t old_block, int64_t extent) {
    if (old_block >= extent) {
        return extent;
    }
    int64_t best = extent;
    for (int64_t d : tiling::dividing_blocks(extent)) {
        if (d <= old_block) best = d;
    }
    return best;
}

// An AMX point (core/AmxTile.h) keeps its tiles where the refitted tiling is still one an AMX tile
// takes: two axes of whole tiles, a register tile of one tile on its lanes, the reduction whole;
// elsewhere it becomes the same tiling on vpdpbusd.
void fit_amx_tile(nlohmann::json &point, const std::map<std::string, int64_t> &extents, bool blocked) {
    if (!point.value("amx_tile", false)) {
        return;
    }
    const nlohmann::json &axes = point["axes"];
    bool fits = !blocked && axes.size() == 2 && point.value("vector_width", int64_t(1)) == tiling::kAmxTileColumns;
    for (size_t i = 0; fits && i < axes.size(); i++) {
        const int64_t tile = i == 0 ? tiling::kAmxTileColumns : tiling::kAmxTileRows;
        fits = axes[i].at("reg").get<int64_t>() == tile && extents.at(axes[i].at("var").get<std::string>()) % tile == 0;
    }
    if (!fits) {
        point.erase("amx_tile");
    }
}

} // namespace

std::optional<std::string> refit_schedule(const std::string &schedule_json,
                                          const std::map<std::string, int64_t> &extents) {
    nlohmann::json point = nlohmann::json::parse(schedule_json, nullptr, false);
    if (point.is_discarded() || !point.is_object() || !point.contains("axes") ||
        !point["axes"].is_array()) {
        return std::nullopt;
    }
    try {
        // A point that vectorized an outer axis is refitted onto the innermost one, whose register
        // tile the rules below rebuild in whole vectors.
        point.erase("vector_axis");
        int64_t vector_width = point.value("vector_width", int64_t(1));
        nlohmann::json &axes = point["axes"];
        for (size_t i = 0; i < axes.size(); i++) {
            nlohmann::json &axis = axes[i];
            auto found = extents.find(axis.at("var").get<std::string>());
            if (found == extents.end() || found->second < 1) {
                return std::nullopt;
            }
            int64_t extent = found->second;
            int64_t old_reg = std::max<int64_t>(1, axis.at("reg").get<int64_t>());
            int64_t old_tile = std::max<int64_t>(1, axis.at("tile").get<int64_t>());
            int64_t reg = 1;
            if (i == 0) {
                if (vector_width > 1 && extent < vector_width) {
                    vector_width = 1; // too narrow for one vector: scalar, whole axis
                }
                reg = largest_at_most(tiling::innermost_regs(int(vector_width), extent), old_reg);
            } else if (i == 1) {
                reg = largest_at_most(tiling::kRowRegs, std::min(old_reg, extent));
            } else if (i == 2) {
                reg = largest_at_most(tiling::kThirdAxisRegs, std::min(old_reg, extent));
            }
            int64_t tile = i < 3 ? fit_tile(old_tile, old_reg, reg, extent) : 1;
            axis["reg"] = reg;
            axis["tile"] = tile;
        }
        point["vector_width"] = vector_width;
        bool blocked = false;
        if (point.contains("reduce")) {
            for (nlohmann::json &r : point["reduce"]) {
                auto found = extents.find(r.at("var").get<std::string>());
                if (found == extents.end() || found->second < 1) {
                    return std::nullopt;
                }
                int64_t block = fit_block(r.at("block").get<int64_t>(), found->second);
                blocked |= block < found->second;
                r["block"] = block;
            }
        }
        // A blocked reduction computes the accumulator per cache tile: tiles must hold whole
        // register tiles.
        if (blocked) {
            for (nlohmann::json &axis : axes) {
                int64_t reg = axis["reg"].get<int64_t>();
                int64_t tile = axis["tile"].get<int64_t>();
                if (tile % reg != 0) {
                    int64_t whole = reg;
                    while (whole * 2 <= tile) {
                        whole *= 2;
                    }
                    axis["tile"] = whole;
                }
            }
        }
        fit_amx_tile(point, extents, blocked);
    } catch (const nlohmann::json::exception &) {
        return std::nullopt;
    }
    return point.dump();
}

} // namespace opgen::db
