// The packed-panel GEMM (docs/design.md §2.5): the starting point of a matrix multiply whose
// register tile loads one operand as vectors (B of A B, the pixels of a 1x1 convolution) and
// broadcasts the other, built as BLIS and oneDNN build theirs. Each cache tile is one register tile
// wide along the vectors and spans every row; it packs its slice of the vector operand over the
// whole reduction into one contiguous panel, and every register tile of rows streams that panel in
// order (the hardware prefetcher keeps ahead of it, kStreamedSteps in StageGraph.h) while the
// broadcast operand's rows come from L2. Measured at 1 thread on an Intel Xeon host (AVX-512):
// square sgemms 256-2048 at 0.99-1.13x oneDNN against 0.76-0.88x for the tuned winners, the deep
// 1x1 convolutions 0.86-0.93x against 0.56-0.80x.
#ifndef OPGEN_CORE_GEMM_PANEL_H
#define OPGEN_CORE_GEMM_PANEL_H

#include "core/ComputeDef.h"
#include "core/Schedule.h"
#include "core/Shape.h"
#include "core/Target.h"

#include <string>
#include <vector>

namespace opgen {

// The inputs that the main statement of `def` indexes by the vectorized axis of `p` in their
// contiguous dimension (and by no other moving variable there) and by a reduction loop of more
// than one step elsewhere: the operands a register tile loads as vectors, step by step of the
// reduction. Empty when `p` is not vectorized.
std::vector<std::string> vector_operands(const ComputeDef &def, const BoundShape &shape, const SchedulePoint &p);

// Sets `p` to the packed-panel GEMM: the vectorized axis in register and cache tiles of two
// vectors, axis `rows` (an index into p.axes) in register tiles of up to 8 rows and one cache tile
// of all of them (fewer where the panels alone leave a core without a tile), every other axis one
// step at a time, the reductions whole (the outermost one in blocks where one panel over it would
// take more than a quarter of the cache-tile buffer) and `operands` packed: vector_operands(def,
// shape, p), non-empty; `p` must be vectorized on its innermost axis. An uneven share of panels
// stays: cutting the rows of a 14x14 plane's 7 panels for 2 cores made each core pack every panel,
// and ResNet-50's 14x14 1x1s over 1024 channels ran slower.
void stream_vector_panels(const ComputeDef &def, const BoundShape &shape, const Target &target, SchedulePoint &p,
                          size_t rows, const std::vector<std::string> &operands);

// For a plain GEMM (a fusable sum, no sliding window, vectorized on its innermost axis of at least
// two vectors, a second axis of at least two rows, a vector operand and no operand read across its
// rows, no other statement placed, not bandwidth-bound as Streaming.h's streams_operands says):
// `p` set by stream_vector_panels over its second axis. Returns false, `p` unchanged, otherwise.
bool panel_gemm_point(const ComputeDef &def, const BoundShape &shape, const Target &target, SchedulePoint &p);

}  // namespace opgen

#endif
