// Whether a generic kernel's register tiles fit a shape (docs/design.md §2.9). A generic kernel
// keeps the register tile of the shape it was tuned at, and its accumulators cover that whole tile
// even at a ragged edge (codegen/GenericCode.h): on an axis shorter than the tile every register
// block computes the tile's width and keeps the axis's. The C=32 28x28 convolution's x tile of 16
// on a 7-wide plane ran 2.74x a full tune (measured on an AMD EPYC host), where its timings at the
// tuned shapes nearest the request, all at least 10 wide, estimated 1.48x. Such a kernel is not
// offered for the shape while another generic kernel that fits serves it.
//
// The same ragged edge makes a generic kernel do more work at some shapes than at others: each
// axis computes ceil(e / reg) whole register tiles for its e points. register_tile_overwork gives
// that factor, so that a ratio measured at one shape can be carried to another (GenericKernels.cpp).
// Used only inside runtime/, by GenericKernels.cpp.
#ifndef OPGEN_RUNTIME_GENERIC_FIT_H
#define OPGEN_RUNTIME_GENERIC_FIT_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace opgen::db {

// True when every output axis of the schedule point `schedule_json` (its "axes": var, reg) has a
// register tile no wider than that variable's loop extent in `extents`. An axis whose variable
// `extents` lacks, and a schedule that is not such a point, count as fitting: nothing is known
// against them.
bool register_tiles_fit(const std::string &schedule_json, const std::map<std::string, int64_t> &extents);

// The register tile of each output axis of the schedule point `schedule_json`, innermost first as
// its "axes" are (1 for an axis without one); empty when it is not such a point.
std::vector<int64_t> register_tiles(const std::string &schedule_json);

// The work a kernel with register tiles `tiles` does over the work a shape needs, as a log: the sum
// over axes of log(ceil(e / reg) * reg / e), where e is the output's extent along the axis
// (`output_dims`, innermost first, as a kernel's arguments are not: reverse them). 0 where every
// tile divides its extent; an axis missing from either side counts as dividing.
double register_tile_overwork(const std::vector<int64_t> &tiles, const std::vector<int64_t> &output_dims);

// Whether no tile of `tiles` is wider than the extent of its axis in `output_dims` (both innermost
// first): register_tiles_fit for a shape given by its output's dims.
bool register_tiles_fit_dims(const std::vector<int64_t> &tiles, const std::vector<int64_t> &output_dims);

} // namespace opgen::db

#endif
