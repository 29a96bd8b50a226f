// Generic kernels (codegen/GenericCode.h): the panel of a zero-padded input, filled in two steps.
//
// A schedule's panel of a zero-padded input (conv's X, packed by the schedule or by generic_point)
// is a copy of Halide's constant exterior: select(outside, 0, X[clamped]). Vectorized along the
// row, every vector that holds a border lane loads through clamped indices, which Halide emits as
// a gather (16 scalar loads and inserts). At a constant shape the borders sit at known lanes; at a
// symbolic row length a row of 16 + 2 is nothing but border vectors, and the gathers took 36% of a
// generic conv's time at 16 x 16 (measured on an Intel Xeon host). So the panel is defined as
// zeros, then its rows' interior copied from the input over the input's own row (dense vector
// loads, a masked last vector), with the other dimensions' bounds tested once per row. Only where
// the panel holds whole rows: the copy then writes nothing outside what the panel holds anyway.
#ifndef OPGEN_CODEGEN_GENERIC_BORDER_H
#define OPGEN_CODEGEN_GENERIC_BORDER_H

#include "core/Lower.h"
#include "core/Schedule.h"

#include <set>
#include <string>

namespace opgen {

// Redefines the panel of each zero-padded input of the scheduled generic `op` (after
// apply_schedule) as zeros and an update that copies the rows' interior, computed and stored where
// the schedule put the panel and vectorized as it was: for an input `point` packs, whose panel is
// laid out along the input's rows and computed outside every loop of the output axis that indexes
// those rows, except a loop over tiles of an axis in `followed` (GenericCode.cpp
// follow_whole_extent_tiles: it runs once), and is not double-buffered. Nothing for other points.
void fill_padded_panels(LoweredOp &op, const SchedulePoint &point, const std::set<std::string> &followed);

}  // namespace opgen

#endif
