// Bandwidth-bound reductions (docs/design.md §2.5): a matmul with a few rows (M <= 4, a GEMV: the
// shape of LLM decoding) does about one multiply-add per 2 bytes of the operand it streams, far
// below any CPU's balance of FLOPs to memory bandwidth, so its speed is the rate at which it reads
// that operand. What sets the rate is how many rows of the operand the loop reads at once: the
// reduction block of a blocked accumulator (core/Schedule.h). Blocks of 16 rows and more, the
// cache blocking a compute-bound matmul wants, keep 16 or more streams going, each crossing a page
// per row; the hardware prefetchers follow only a few. Blocks of 4 or 8 rows stream at the triad
// bandwidth. Measured 2026-11-25, matmul 1x2048x8192, n register tile 64, 1 thread: blocks of 4
// and 8 at 102-105% of the run's triad bandwidth, 16 at 73%, 32 at 59%; unblocked (the old
// heuristic point, also serial: its one parallel loop ran over the single row) 31%.
//
// This file says which reductions stream, which blocks the space offers them on top of the cache
// blocks, and how the heuristic point streams them: blocks of a few rows, the register tile four
// vectors wide, the vectorized axis cut into one cache tile per core and made the outermost
// (parallel) loop.
#ifndef OPGEN_CORE_STREAMING_H
#define OPGEN_CORE_STREAMING_H

#include "core/ComputeDef.h"
#include "core/Schedule.h"
#include "core/Shape.h"
#include "core/Target.h"

#include <cstdint>
#include <vector>

namespace opgen {

// Below this many FLOPs per compulsory byte (inputs read once, output written once) a reduction is
// bandwidth-bound on every CPU target: their balance is tens of FLOPs per byte of DRAM bandwidth.
// A matmul with M rows does M/2 FLOPs per byte of B: M < 8.
constexpr double kStreamingIntensity = 4.0;

// Whether `def` at `shape` is a fused reduction (main_statement, main_is_fusable) whose arithmetic
// intensity is below kStreamingIntensity.
bool streams_operands(const ComputeDef &def, const BoundShape &shape);

// The reduction blocks offered for streaming a reduction loop of `extent` steps: 4 and 8 where
// they divide it and are shorter than it.
std::vector<int64_t> streaming_blocks(int64_t extent);

// The reduction loop that blocking applies to: the longest of the main statement's (the last of
// equal ones, the innermost). Null when it has none.
const ReduceVar *longest_reduction(const Statement &ms, const BoundShape &shape);

// Makes the heuristic point `p` (axes innermost first, the reduction unblocked) stream when
// streams_operands: the longest reduction in blocks of the largest streaming block, the vectorized
// axis' register tile four vectors (or as many as fit), its cache tile the axis cut into one tile
// per core of `target`, and that axis' tile loop outermost, so the parallel loop runs over it;
// every axis' cache tile whole register tiles (as a blocked reduction needs).
// Leaves `p` as it is otherwise.
void place_streaming(const ComputeDef &def, const BoundShape &shape, const Target &target, SchedulePoint &p);

}  // namespace opgen

#endif
