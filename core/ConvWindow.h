// Convolution windows (docs/design.md §2.5): which reduction loops of a statement slide a window
// over the output (rx, ry of a convolution: an input is indexed by x*stride + rx - pad) and which
// step over channels (c), and the starting points for a convolution whose rows are shorter than a
// vector and for a channel-blocked one.
// An NCHW convolution reduces a window inside a channel loop; run as written, with the short
// window loops unrolled inside each channel step, the compiler reuses a broadcast input value across
// window steps and spills; the channel loop innermost (SchedulePoint::channels_innermost) is
// oneDNN's order, without spills.
#ifndef OPGEN_CORE_CONV_WINDOW_H
#define OPGEN_CORE_CONV_WINDOW_H

#include "core/ComputeDef.h"
#include "core/Schedule.h"
#include "core/Shape.h"
#include "core/Target.h"

#include <string>

namespace opgen {

// Whether reduction variable `r` of `ms` slides a window: some input index combines it with one of
// the statement's own variables.
bool slides_window(const Statement &ms, const std::string &r);

// True when the reduction of `ms` is a convolution's window inside its channel loop: the outermost
// loop has more than `window_steps` steps and slides no window, every loop inside it slides one
// (conv2d_nchw's c around ry, rx, a 1x1 window included; not conv2d_nchwc, whose innermost loop
// ci steps over channels).
bool reduces_window_in_channels(const Statement &ms, const BoundShape &shape, int64_t window_steps);
// The same with a window of more than one step (not 1x1): where the order of the channel and
// window loops makes a difference.
bool window_inside_channels(const Statement &ms, const BoundShape &shape, int64_t window_steps);

// Whether vectors of output channels should be offered (and started from) where output rows of
// `row` pixels leave a partial vector of `lanes` (28 and 56 on 16 lanes): for a window in channels
// (reduces_window_in_channels) of more than one step (a 3x3), or a 1x1 window over 256 channels or
// more. Measured at 1 thread on an AMD EPYC host, 7 pixels x 2 rows x 2 channel vectors against
// the tuned row-vector winners: 3x3 1.05-1.19x; 1x1 over 256 channels 1.10-1.18x, over 512
// 1.25-1.30x; over 128 0.93x, over 64 0.66-0.84x.
// False for rows shorter than a vector (short_row_conv_point's own case) or of whole vectors.
bool channel_vectors_for_tail_rows(const Statement &ms, const BoundShape &shape, int64_t row, int lanes);

// For the main statement of `def` a window in channels (reduces_window_in_channels), with output rows (the innermost axis)
// shorter than a vector (or leaving a partial vector where channel_vectors_for_tail_rows says so)
// and output channels (the third innermost axis) of whole vectors: `p` set to
// the kernel of oneDNN's direct convolution. A register tile of about 7 pixels of a row x rows
// dividing the column (up to 28 accumulators at two vectors) x the most vectors of output
// channels (up to four) that fit the registers beside their weight vectors and one broadcast input
// (7 x 2 x 2 at 14x14, 7 x 1 x 2 at 7x7 on AVX-512), whole rows and columns per cache tile,
// channels in blocks of 16, the channel loop innermost (a 3x3 window around it), input and weights
// packed (the weights re-laid out channel-contiguous). A 1x1 window is a GEMM over pixels: the
// channels reduced whole in each register tile and only the weights packed; the input, read as
// broadcasts, stays in place (packed, it was copied once per tile of output channels, and at
// stride 2 with the skipped pixels). Measured at 1 thread on an AMD EPYC host, ResNet-50's 1x1
// shapes with rows of 14 and 7: 1.26-1.93x the old point's GFLOP/s.
// Returns false, `p` unchanged, for any other op or shape.
bool short_row_conv_point(const ComputeDef &def, const BoundShape &shape, const Target &target, SchedulePoint &p);

// For the main statement of `def` a 1x1 window in channels (reduces_window_in_channels, one step)
// over one row of output pixels (a 1x1 convolution's flattened plane, the view of the bundled
// convolutions, ComputeDef::views) of at least two vectors, and at least 8 output channels (the
// third innermost axis): `p` set to the packed-panel GEMM over pixels (core/GemmPanel.h,
// stream_vector_panels over the output channels): register tiles of 2 vectors of pixels x 8
// output channels, each cache tile one register tile of pixels by every channel, the input
// channels whole, the input's pixels packed into panels. Measured at 1 thread on an Intel Xeon
// host (AVX-512): ResNet-50's 1x1 shapes over 512+ channels 0.86-0.93x oneDNN against 0.56-0.80x
// for the tuned winners before. Returns false, `p` unchanged, for any other op or shape.
bool pixel_gemm_point(const ComputeDef &def, const BoundShape &shape, const Target &target, SchedulePoint &p);
// For the main statement of `def` a 1x1 window in channels that reads its input at a stride (a
// gathered read, core/Gather.h: ResNet-50's 1x1 convolutions of stride 2) over output rows of at
// least half a vector, and at least 8 output channels: `p` set to a GEMM over whole output rows
// whose input panel is the gather, dense. Register tiles of one row of pixels rounded up to whole
// vectors (28 as two vectors; 14 as one, two rows) x 8 output channels, every output channel in a
// cache tile (shared out over the cores where the rows are one tile), the input channels whole,
// the rows of a cache tile by strided_row_tile, the input packed (gathered). Measured at 1 thread
// on an Intel Xeon host (AVX-512), against the tuned winners before: 56x56x256->512 /2 0.9-1.07x
// oneDNN against 0.5x, 28x28x512->1024 /2 0.85-1.4x against 0.7-0.8x.
// Returns false, `p` unchanged, for any other op or shape (rows of 7 stay with
// short_row_conv_point's vectors of output channels).
bool strided_row_gemm_point(const ComputeDef &def, const BoundShape &shape, const Target &target, SchedulePoint &p);

// For a channel-blocked convolution (conv2d_nchwc: output [n, fo, y, x, fi] with fi one vector of
// output channels; reduction co, ry, rx, ci with the window inside the channel-block loop and the
// channels of one block innermost): `p` set to oneDNN's blocked direct kernel. A register tile of
// about 7 pixels of one row x 2 vectors of output channels where the output blocks pair up (14
// accumulators: the embedded broadcast of each input value serves 2 weight vectors; else 7 pixels
// x up to 2 rows of one vector), whole rows and columns per cache tile (on several cores the row
// split across them, else the column, else one register tile of rows per tile; a flattened 1x1's
// one row: 8 pixels x 2 vectors of output channels), all output-channel blocks in one tile,
// input-channel blocks reduced as many at a time as keep the paired weights within 3/4 of the L1
// (4 at a time for one vector; fewer when that does not divide their count), the input packed.
// Returns false, `p` unchanged, for any
// other op or shape (a depthwise convolution, whose reduction has no channel loop, included).
// Measured on an AMD EPYC host (AVX-512): 13-14% faster than the 24-trial winner at
// 14x14x256->256 on one thread, within 4% of the winners at 28x28, 56x56 and the 1x1.
bool blocked_conv_point(const ComputeDef &def, const BoundShape &shape, const Target &target, SchedulePoint &p);

}  // namespace opgen

#endif
