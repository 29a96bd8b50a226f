// A schedule is one point of the legal tiling space, made concrete: split factors per loop axis at
// each buffer level, the order of the outer loops, the parallel loops, and which inputs are packed
// into contiguous panels. apply_schedule turns it into Halide schedule primitives (docs/design.md
// §2.5: split, reorder, compute_at, ...) on freshly lowered Funcs and records every call,
// so the schedule prints as compilable Halide C++.
//
// The loop structure for an op whose output is (a pointwise epilogue of) a reduction, per pure
// variable v of the output: v_o (cache tile, buffer L2), v_r (register tile inside it), v_i
// (inside the register tile, vectorized on the innermost variable). The accumulator is computed
// per register tile (its registers are the cache_write buffer) when no reduction axis is blocked,
// or per cache tile with the reduction split into blocks when one is (Goto's kc blocking).
#ifndef OPGEN_CORE_SCHEDULE_H
#define OPGEN_CORE_SCHEDULE_H

#include "core/Lower.h"
#include "core/Target.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace opgen {

struct AxisTiling {
    std::string var;   // a pure variable of the output, by its name in the op file
    int64_t tile = 1;  // cache-tile extent (multiple of reg, at most the axis extent)
    int64_t reg = 1;   // register-tile extent

    bool operator==(const AxisTiling &o) const { return var == o.var && tile == o.tile && reg == o.reg; }
};

struct ReduceTiling {
    std::string var;    // a reduction variable of the main statement
    int64_t block = 1;  // reduction block (the axis extent: not blocked)

    bool operator==(const ReduceTiling &o) const { return var == o.var && block == o.block; }
};

// Where a statement other than the output and its fused main reduction is computed
// (docs/design.md §2.4): "root" (its own parallel, vectorized loop nest before the output's),
// "tile" (inside the output's cache tile, at the loop OutputTiles' cache level: the rows it needs
// stay in cache and it runs inside the output's parallel loop), "row" (further in, per register
// tile of the rows inside the cache tile, where the loops between are over its own variables or run
// once: a row's intermediates stay in L1 however many rows a core's tile holds; as "tile" where
// there is no such loop) or "inline" (recomputed by every consumer; pointwise statements only). A
// reduction with lanes > 1 keeps that many partial results (a multiple of the vector width dividing
// its innermost reduction extent), rfactored and vectorized (Halide tutorial lesson 18), combined
// at the end.
struct StageChoice {
    std::string tensor;
    std::string at = "root";
    int lanes = 1;

    bool operator==(const StageChoice &o) const { return tensor == o.tensor && at == o.at && lanes == o.lanes; }
};

struct SchedulePoint {
    std::vector<AxisTiling> axes;       // output variables, innermost first
    std::vector<ReduceTiling> reduce;   // main reduction variables, innermost first
    std::vector<std::string> outer_order;  // outer (cache-tile) loops, innermost first
    std::vector<std::string> tile_order;   // register-tile loops inside a cache tile, innermost
                                           // first; empty means the axes' own order
    int parallel_loops = 1;             // outermost tile loops (in outer_order) fused into one
                                        // parallel loop; the order picks which loops they are
                                        // (core/ParallelLoops.h counts their iterations)
    std::vector<std::string> packed;    // inputs copied into contiguous panels (cache_read)
    int vector_width = 1;               // lanes on axes[vector_axis]
    int vector_axis = 0;                // index in axes of the vectorized axis: 0, the innermost, or an
                                        // outer one (output channels of a convolution whose rows are
                                        // short); its register tile holds whole vectors, the other
                                        // axes' register tiles are unrolled around them
    bool unroll = true;                 // unroll the register tile
    bool channels_innermost = false;    // the outermost reduction loop (a convolution's input
                                        // channels) runs innermost inside a reduction block, the
                                        // window loops around it, not unrolled (oneDNN's order):
                                        // with the window unrolled inside the channel loop the
                                        // compiler keeps input broadcasts alive across window
                                        // steps and spills them
    int prefetch = 0;                   // prefetch unpacked inputs this many reduction steps
                                        // ahead (0: no prefetch)
    // Every other statement's placement, in statement order; empty: reductions at root (today's
    // schedule_root_reduction), pointwise statements inlined.
    std::vector<StageChoice> stages;
    bool fast_math = false;             // exp as Halide's fast_exp (vectorizes), divisions by a
                                        // variable as products with its reciprocal (core/Lower.h)
    int dot_product = 0;                // the innermost reduction loop, of this extent, summed
                                        // inside each vector lane (atomic, vectorized: a
                                        // VectorReduce) so that the target's dot-product
                                        // instruction does it: 4 for u8 x s8 (vpdpbusd), 2 for bf16
                                        // (vdpbf16ps); 0: none (core/DotProduct.h)
    bool amx_tile = false;              // the accumulator is one AMX tile (16 x 16 i32, tdpbusd:
                                        // core/AmxTile.h) per register tile of 16 x 16, with
                                        // dot_product 4 and the reduction unblocked; prefetch
                                        // and unroll do not apply to it

    nlohmann::json to_json() const;
    static SchedulePoint from_json(const nlohmann::json &j);
    // Reads a point from a JSON file; UserError naming the file when it cannot.
    static SchedulePoint read_file(const std::string &path);
    // Compact one-line description: "m:64/8 n:256/32 k:256 order=n,m par=1 pack=B vw=16".
    std::string summary() const;
    bool operator==(const SchedulePoint &o) const {
        return axes == o.axes && reduce == o.reduce && outer_order == o.outer_order &&
               parallel_loops == o.parallel_loops && packed == o.packed && vector_width == o.vector_width &&
               unroll == o.unroll && tile_order == o.tile_order && prefetch == o.prefetch && stages == o.stages &&
               fast_math == o.fast_math && vector_axis == o.vector_axis &&
               channels_innermost == o.channels_innermost && dot_product == o.dot_product &&
               amx_tile == o.amx_tile;
    }
};

// The statement whose loops the schedule tiles: the reduction that the output is (a pointwise
// epilogue of, directly or through pure locals each read pointwise), or the output itself when the
// op has no such reduction.
const Statement &main_statement(const ComputeDef &def);
// True when the output reads the main statement's tensor at exactly its own index variables (or
// reads it only through such pure locals), so the reduction can be computed inside the output's
// tiles.
bool main_is_fusable(const ComputeDef &def);
// The pure locals between the output and a main reduction it reads only through them (int8
// requantization: i32 sums -> f32 scaling -> u8); empty otherwise. Inlined into the output, so no
// point places them (docs/design.md §2.4).
std::vector<const Statement *> fused_epilogue(const ComputeDef &def);
// Lanes of one vector for the op's loops: of the wider of the output's type and, where the output
// is an epilogue of a reduction, the reduction's (u8 outputs of i32 sums vectorize as the sums do).
int op_vector_lanes(const ComputeDef &def, const Target &target);

// The Halide dimension of `input` that the main statement `ms` indexes by exactly the variable
// `var` (Wt[f, c, ry, rx] by f: dimension 3, dimension 0 being the contiguous one), or -1.
int dimension_indexed_by(const Statement &ms, const std::string &input, const std::string &var);

struct AppliedSchedule {
    std::vector<std::string> lines;  // Halide C++, one primitive per line
    std::string source() const;
};

// lower_to_halide with the point's lowering choices (fast_math): every caller that applies a
// point lowers through this, so the algorithm a point is measured with is the one it names.
LoweredOp lower_for_point(const ComputeDef &def, const BoundShape &shape, const SchedulePoint *point);

// Applies `point` to freshly lowered Funcs. Raises UserError when the point does not fit the op
// (unknown variable, factor out of range): tuner-made points always fit.
AppliedSchedule apply_schedule(LoweredOp &op, const SchedulePoint &point, const Target &target);

// What an untuned user gets: Halide's default schedule (reductions computed at root, everything
// else inlined, serial, scalar). The baseline of every speedup.
AppliedSchedule apply_default_schedule(LoweredOp &op, const Target &target);

// A reasonable hand-written starting point: register tile of 4 vectors x 4 rows (clamped to the
// shape), 64-row cache tiles, no reduction blocking, parallel over the fewest outer loops whose
// tiles reach the target's cores; row operations by whole rows (place_rows), bandwidth-bound
// reductions streamed (core/Streaming.h, place_streaming), operands read across their rows
// (B of A B^T) packed into panels; an NCHW convolution whose rows are shorter than a vector as
// oneDNN's direct convolution (core/ConvWindow.h short_row_conv_point), a 1x1 one over its
// flattened pixels as a GEMM over them (pixel_gemm_point), a channel-blocked one as
// oneDNN's blocked direct kernel (blocked_conv_point).
SchedulePoint heuristic_point(const ComputeDef &def, const BoundShape &shape, const Target &target);

}  // namespace opgen

#endif
