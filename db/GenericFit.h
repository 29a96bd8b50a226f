// Whether a generic kernel's register tiles fit a shape (issue 20). A generic kernel keeps the
// register tile of the shape it was tuned at, and its accumulators cover that whole tile even at
// a ragged edge (opgen/GenericCode.h): on an axis shorter than the tile every register block
// computes the tile's width and keeps the axis's. The C=32 28x28 convolution's x tile of 16 on a
// 7-wide plane ran 2.74x a full tune (docs/bench/2026-11-25-s10-cache.md), where its timings at
// the tuned shapes nearest the request, all at least 10 wide, estimated 1.48x. Such a kernel is
// not offered for the shape while another generic kernel that fits serves it.
// Used only inside db/, by GenericKernels.cpp.
#ifndef OPGEN_DB_GENERIC_FIT_H
#define OPGEN_DB_GENERIC_FIT_H

#include <cstdint>
#include <map>
#include <string>

namespace opgen::db {

// True when every output axis of the schedule point `schedule_json` (its "axes": var, reg) has a
// register tile no wider than that variable's loop extent in `extents`. An axis whose variable
// `extents` lacks, and a schedule that is not such a point, count as fitting: nothing is known
// against them.
bool register_tiles_fit(const std::string &schedule_json, const std::map<std::string, int64_t> &extents);

} // namespace opgen::db

#endif
