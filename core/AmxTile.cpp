#include "core/AmxTile.h"

#include "core/DotProduct.h"

#include <algorithm>
#include <vector>

namespace opgen {

namespace HI = Halide::Internal;

bool amx_tile_offered(const ComputeDef &def, const BoundShape &shape, const Target &target) {
    if (!target.has_feature("amx_int8") || target.vector_lanes(4) != kAmxTileColumns ||
        !main_is_fusable(def)) {
        return false;
    }
    if (dot_product_group(def, shape, target) != 4)
        return false;
    const Statement &out = *def.statement_for(def.output().name);
    if (out.vars.size() != 2)
        return false;
    return shape.var_extent(out, out.vars[1]) % kAmxTileColumns == 0 &&
           shape.var_extent(out, out.vars[0]) % kAmxTileRows == 0;
}

bool amx_register_tile(const SchedulePoint &p) {
    return p.vector_width == kAmxTileColumns && p.vector_axis == 0 && p.axes.size() == 2 &&
           p.axes[0].reg == kAmxTileColumns && p.axes[1].reg == kAmxTileRows;
}

bool amx_tile_point(const ComputeDef &def, const BoundShape &shape, const Target &target,
                    SchedulePoint &p) {
    if (!amx_tile_offered(def, shape, target) || p.axes.size() != 2)
        return false;
    const Statement &out = *def.statement_for(def.output().name);
    p.vector_width = kAmxTileColumns;
    p.vector_axis = 0;
    p.axes[0].reg = kAmxTileColumns;
    p.axes[0].tile = std::min<int64_t>(shape.var_extent(out, p.axes[0].var), 4 * kAmxTileColumns);
    p.axes[1].reg = kAmxTileRows;
    p.axes[1].tile = std::min<int64_t>(shape.var_extent(out, p.axes[1].var), 4 * kAmxTileRows);
    for (ReduceTiling &r : p.reduce)
        r.block = shape.var_extent(main_statement(def), r.var);
    p.dot_product = 4;
    p.amx_tile = true;
    p.packed.clear();
    p.prefetch = 0;
    return true;
}

} // namespace opgen
