// Stages and stage groups (docs/design.md §7.1; the flow in §2.3).
//
// build_stages expands the main statement into the stages that move each tensor through the
// target's buffers: for every input, a copy stage into each buffer on the input path (a
// cache_read), the compute stage in the innermost buffer of the output path (a cache_write), and
// copy stages that carry the result out. group_stages puts the stages of the same tensor in the
// same buffer into one group whose first stage is its lead; the lead's loops are the group's
// tiling axes. footprints() then says how many bytes each group holds in its buffer under a
// schedule point, which is what the legal space is built from.
#ifndef OPGEN_CORE_STAGE_GRAPH_H
#define OPGEN_CORE_STAGE_GRAPH_H

#include "core/ComputeDef.h"
#include "core/Schedule.h"
#include "core/Shape.h"
#include "core/Target.h"

#include <string>
#include <vector>

namespace opgen {

enum class StageKind { Source, CopyIn, Compute, CopyOut };
const char *stage_kind_name(StageKind k);

struct Stage {
    std::string name;    // "A_L2"
    std::string tensor;  // the data it holds ("A"; the output's accumulator holds the output)
    std::string buffer;  // "L2"
    StageKind kind = StageKind::Compute;
    std::string primitive;  // "cache_read", "cache_write", "compute", "set_scope"
    std::vector<std::string> loop_vars;  // its nested loops, outermost first
    int producer = -1;   // index of the stage it reads from, -1 for sources
    int broadcast_inputs = 0;  // operands it reads with fewer indices than its loops (a broadcast)
};

struct StageGraph {
    std::vector<Stage> stages;
};

struct StageGroup {
    std::string tensor;
    std::string buffer;
    std::vector<int> stages;  // indices into StageGraph::stages, in order; stages[0] is the lead
    std::vector<std::string> axes;  // the lead's loops
    // 0 for a whole group; k >= 1 for the k-th subgroup of a group split because its stages could
    // not fit their buffer together (docs/design.md §7.1). Subgroups of one tensor and buffer
    // are resident one after another, so the largest of them counts against the capacity.
    int subgroup = 0;
    // Whether a pointwise epilogue stage is among its stages, and how many operands that stage
    // reads broadcast (bias[n] in C[m, n]).
    bool has_epilogue = false;
    int broadcast_inputs = 0;
};

StageGraph build_stages(const ComputeDef &def, const Target &target);
std::vector<StageGroup> group_stages(const StageGraph &graph);

struct Footprint {
    std::string tensor;
    std::string buffer;
    int64_t bytes = 0;  // doubled where the buffer is double-buffered
    int subgroup = 0;   // the group's subgroup index (0: a whole group)
};

// Bytes each group (other than main-memory ones) occupies in its buffer under `point`.
std::vector<Footprint> footprints(const ComputeDef &def, const BoundShape &shape, const Target &target,
                                  const std::vector<StageGroup> &groups, const SchedulePoint &point);
// True when, for every bounded buffer, the footprints in it add up to at most its capacity
// (subgroups of one tensor counting with their largest member).
bool fits_buffers(const Target &target, const std::vector<Footprint> &fp);

// A register tile reads its slice of an operand without a sliding window once, step by step of
// the reduction, so on a cache (not an explicit buffer) the hardware prefetcher streams it from
// the cache-tile buffer: L1 holds this many reduction steps of the slice, not the whole reduction
// block, which therefore need not fit L1. The same holds one level out for a cache tile that is one
// register tile wide along every axis the operand is not read along (no register tile reuses the
// slice: A of A B in a cache tile one register tile wide in n streams from L3). How well it
// streams (a packed panel in order, rows in place with a stride) is for the measurements to rank,
// not a capacity. Measured at 1 thread on an Intel Xeon host (AVX-512): matmul
// 128x784x512 with its vector operand packed into 48-wide panels over the whole K (96 KiB a
// panel, twice L1) 149 GFLOP/s against 142 for the best point blocked to fit L1 (k 256) and 112
// for the old starting point; 2048^3 at 160 with all 2048 rows of A (16 MiB) in one cache tile,
// against 134-147 for the tiles that fit L2.
constexpr int64_t kStreamedSteps = 16;

// footprints() and fits_buffers() made ready for many points of one op, shape, target and set of
// groups, whose tiled variables are `axis_vars` (innermost first) and `reduce_vars`: every name,
// index expression and buffer is resolved once, so a point costs a few multiplications per group.
// footprints() itself is a plan made for its one point. Holds no reference to its arguments.
class FootprintPlan {
public:
    FootprintPlan(const ComputeDef &def, const BoundShape &shape, const Target &target,
                  const std::vector<StageGroup> &groups, const std::vector<std::string> &axis_vars,
                  const std::vector<std::string> &reduce_vars);
    // Whether `p` tiles exactly the plan's variables, in its order; the other calls require it.
    bool matches(const SchedulePoint &p) const;
    std::vector<Footprint> footprints(const SchedulePoint &p) const;
    // fits_buffers(target, footprints(p)), without building the footprints.
    bool fits(const SchedulePoint &p) const;

private:
    friend struct FootprintPlanBuilder;  // resolves the op, shape and target into groups_

    // Where a tile extent comes from: a constant, or a factor of the point.
    enum class Factor { Const, Reg, Tile, Block };
    struct Term {
        Factor factor = Factor::Const;
        int64_t value = 1;  // the constant, or the axis (Reg, Tile) or reduction (Block) index
        int64_t coefficient = 1;  // of the index variable in an input's index (inputs only)
    };
    struct Group {
        std::string tensor, buffer;
        int subgroup = 0;
        bool input = false;
        std::vector<std::vector<Term>> dims;  // input: per dimension, the terms of its span
        std::vector<int64_t> dim_extents;     // input: each dimension's extent (the span's cap)
        std::vector<Term> accumulator[2];     // output: per variable, [0] unblocked, [1] blocked
        int64_t multiplier = 1;               // output: tile copies a scratchpad epilogue holds
        int64_t element_bytes = 4;
        bool in_registers = false;            // level 0: whole registers per vector
        bool streams = false;                 // levels 1-2 of a cache, no sliding window (kStreamedSteps)
        std::vector<int64_t> reused_along;    // level 2: axes it is not read along (reused across them)
        int64_t buffer_factor = 1;            // 2 when double-buffered
        int buffer_index = 0;                 // into the target's buffers
        int slot = -1;                        // subgroups: the (buffer, tensor) they share; -1 else
    };

    int64_t bytes(const Group &g, const SchedulePoint &p, bool blocked) const;
    // Whether `g` streams under `p`: it may (Group::streams) and no register tile reuses it.
    bool streamed(const Group &g, const SchedulePoint &p) const;
    bool blocked(const SchedulePoint &p) const;

    std::vector<std::string> axis_vars_, reduce_vars_;
    std::vector<int64_t> reduce_extents_;
    std::vector<Group> groups_;
    bool has_blocked_tile_ = false;  // a blocked reduction also holds the cache tile in `blocked_tile_`
    Group blocked_tile_;
    std::vector<int64_t> capacities_;  // per target buffer; 0 unbounded
    int slots_ = 0;
    int64_t reg_bytes_ = 16;
};

// Splits every group of several stages that cannot fit its buffer even under `smallest` (the
// space's smallest tiling) into one subgroup per stage, each stage its own lead (docs/design.md
// §7.1: a broadcast that expands its data). Groups that fit are returned unchanged.
std::vector<StageGroup> split_oversized_groups(const ComputeDef &def, const BoundShape &shape, const Target &target,
                                               const StageGraph &graph, std::vector<StageGroup> groups,
                                               const SchedulePoint &smallest);

// Coefficient of each index variable in an affine index expression, and the constant term (key "").
std::map<std::string, int64_t> affine_coefficients(const Expr &e, const BoundShape &shape);

// The first read of `tensor` met walking `body` depth-first, last argument first; nullptr if none.
const ExprNode *first_access(const Expr &body, const std::string &tensor);

}  // namespace opgen

#endif
