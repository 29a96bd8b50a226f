// The legal tiling space of one shape given by its rules rather than by its points (docs/design.md
// §7.2, the flow in §2.4): per loop axis the (register tile, cache tile) pairs on offer, the
// reduction blocks, the vector widths, the knobs, and the stage groups whose footprints must fit
// the target's buffers. make_tiling_space (core/TilingSpace.h) enumerates these rules; the
// functions here answer questions about single points without enumerating anything, which is
// what an online lookup needs (a convolution's space has millions of points):
//
//   is_legal_point       is this point one of the space's points?
//   repair_point         the legal point nearest to a point that is not one
//   sample_legal_points  random legal points, uniform over the space, by rejection
//
// Each of them checks legality with the same code the enumeration uses (offered_tiling,
// offered_knobs, and footprints/fits_buffers from core/StageGraph.h), so "legal" means one thing.
#ifndef OPGEN_CORE_TILING_RULES_H
#define OPGEN_CORE_TILING_RULES_H

#include "core/ComputeDef.h"
#include "core/Schedule.h"
#include "core/Shape.h"
#include "core/StageGraph.h"
#include "core/Target.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace opgen {

// The options of one output axis, innermost axis first.
struct AxisOptions {
    std::string var;
    int64_t extent = 1;
    std::vector<int64_t> regs;   // register-tile extents
    std::vector<int64_t> tiles;  // cache-tile extents (each used with the regs that fit in it)
};

struct ReduceOptions {
    std::string var;
    int64_t extent = 1;
    std::vector<int64_t> blocks;  // divisors of the extent; the extent itself means "not blocked"
};

// One choice of the stage knob: the point's `stages` and `fast_math`.
struct StagePlan {
    std::vector<StageChoice> stages;
    bool fast_math = false;

    bool operator==(const StagePlan &o) const { return stages == o.stages && fast_math == o.fast_math; }
};

// The knob choices every tiling multiplies by (tile orders apply only where they differ).
struct KnobChoices {
    std::vector<std::vector<std::string>> outer_orders;  // innermost first
    std::vector<std::vector<std::string>> tile_orders;   // [0] is the natural order (stored empty)
    // The parallel loops depend on the tiling and the outer order: the outermost cache-tile loops
    // fused until their iterations reach `cores` (core/ParallelLoops.h), so the order picks which
    // loops carry the threads. `extents`: the axes' extents, innermost first, for the trip counts.
    int cores = 1;
    std::vector<int64_t> extents;
    // (packed inputs, prefetch distance) pairs: prefetching is offered only while an input is
    // read unpacked.
    std::vector<std::pair<std::vector<std::string>, int>> pack_prefetch;
    std::vector<bool> unroll_choices;
    // Placements of the op's other statements (core/StagePlacement.h) with fast_math: [0] is
    // today's (none placed, exact math); a single choice, so the same space, for ops with no other
    // statement and nothing fast math changes (matmul, convolutions).
    std::vector<StagePlan> stage_plans;
    // SchedulePoint::channels_innermost: {false, true} where the main reduction is a window inside
    // a channel loop (conv2d_nchw's rx, ry inside c), else {false}: the same space as before.
    std::vector<bool> channel_orders{false};
    // SchedulePoint::dot_product, one choice for the whole space: the dot-product group of the
    // main reduction where the target has the instruction (core/DotProduct.h), else 0. A widening
    // dot product does the group's products in one instruction per vector; the same loop without
    // it takes several, so the space does not offer both.
    int dot_product = 0;
    // SchedulePoint::amx_tile: {false, true} where amx_tile_offered (core/AmxTile.h: the target has
    // amx_int8), else {false}: the same space as before. The choice exists only for the tilings an
    // AMX tile can take (amx_tile_fits); the others have {false} alone.
    std::vector<bool> amx_tiles{false};
    std::vector<int64_t> reduce_extents;  // the main reduction's extents, innermost first
};

struct TilingRules {
    StageGraph graph;
    std::vector<StageGroup> groups;
    std::vector<AxisOptions> axes;
    std::vector<ReduceOptions> reduce;
    std::vector<int> vector_widths;  // vector widths offered, each on the axis vector_axes names
    std::vector<int> vector_axes;    // per vector width: the axis (index in axes) it vectorizes
    KnobChoices knobs;
    int vector_width = 1;            // the target's lanes for the output's type (or 1)
    // An operand of the main reduction does not depend on the fourth output axis (innermost
    // first), which may then join the register tile (a channel-blocked convolution's output-channel
    // blocks, sharing each broadcast input value).
    bool shared_fourth = false;
    // The (register tile, cache tile) pairs offered per vector width (as vector_widths, with the
    // axis of vector_axes) and axis.
    std::vector<std::vector<std::vector<std::pair<int64_t, int64_t>>>> pairs;
    // The most cache tiles an offered tiling has. On several cores only tilings of at least a tile
    // per core are offered, where the shape has that many.
    int64_t most_tiles = 1;
    // The groups' footprints, ready for the points of these rules (core/StageGraph.h); made for
    // `groups` as they are here, so whoever changes the groups must make it again.
    std::shared_ptr<const FootprintPlan> footprint_plan;
};

// The rules of the space of an op at a shape on a target (`threads`: cores kernels may use).
// Costs the stage graph and one footprint check per stage group, never an enumeration.
TilingRules make_tiling_rules(const ComputeDef &def, const BoundShape &shape, const Target &target,
                              int threads);

// Whether an AMX accumulator can take `p`'s tiling: a register tile of 16 x 16 vectorized by 16 on
// the innermost axis (amx_register_tile) and every reduction unblocked.
bool amx_tile_fits(const KnobChoices &knobs, const SchedulePoint &p);
// The amx_tile choices offered for `tiling`: knobs.amx_tiles where amx_tile_fits, else {false}.
size_t amx_choice_count(const KnobChoices &knobs, const SchedulePoint &tiling);

// Whether swapping the register-tile loops of `p` makes a different schedule (both innermost
// axes hold several register tiles per cache tile); only then is a tile order offered.
bool tile_order_matters(const SchedulePoint &p);

// The parallel_loops values offered for `p`'s tiling and outer order (parallel_loop_choices of its
// cache-loop trips on the knobs' cores): {0} on one core.
std::vector<int> parallel_choices(const KnobChoices &knobs, const SchedulePoint &p);
// The (outer order, parallel loops) pairs offered for `tiling`'s tiling, counted, and the one of
// index `plan` (orders in the knobs' order, each with its parallel choices in order) set on `p`.
// Such a pair is one knob digit of the space: how many parallel choices an order has depends on it.
size_t loop_plan_count(const KnobChoices &knobs, const SchedulePoint &tiling);
void set_loop_plan(const KnobChoices &knobs, SchedulePoint &p, size_t plan);
// The first parallel choice offered for `p`'s tiling and order where `p`'s is not offered.
void snap_parallel_loops(const KnobChoices &knobs, SchedulePoint &p);

// Whether `p`'s tiling (vector width, every axis' pair, every reduction block) is one the rules
// offer, before the capacity check: a blocked reduction needs cache tiles of whole register tiles,
// and on several cores a tiling needs a cache tile per core where some tiling has that many.
// False for a point of another op (other variables, other rank).
bool offered_tiling(const TilingRules &rules, const SchedulePoint &p);
// Whether `p`'s knobs are among the choices for its tiling.
bool offered_knobs(const KnobChoices &knobs, const SchedulePoint &p);
// `p`'s footprints (core/StageGraph.h's footprints(), through the rules' plan where it applies).
std::vector<Footprint> footprints(const TilingRules &rules, const ComputeDef &def, const BoundShape &shape,
                                  const Target &target, const SchedulePoint &p);
// Whether `p`'s footprints fit every bounded buffer of `target` (knobs play no part).
bool fits(const TilingRules &rules, const ComputeDef &def, const BoundShape &shape, const Target &target,
          const SchedulePoint &p);
// All three: `p` is a point of the space make_tiling_space would enumerate.
bool is_legal_point(const TilingRules &rules, const ComputeDef &def, const BoundShape &shape,
                    const Target &target, const SchedulePoint &p);

// The legal point nearest to `p`: its tiling is the legal one at the least log-distance from `p`'s
// (sum over axes of |ln(tile/tile')| + |ln(reg/reg')|, over reductions of |ln(block/block')|, plus
// 1 for another vector width), found best-first from `p` without enumerating the space; its knobs
// are `p`'s where they are offered for that tiling, else the first choice of each. `p` itself
// when it is legal. nullopt when `p` does not name the space's variables (another op) or no legal
// tiling was found within `max_checks` capacity checks (an empty space).
std::optional<SchedulePoint> repair_point(const TilingRules &rules, const ComputeDef &def,
                                          const BoundShape &shape, const Target &target,
                                          const SchedulePoint &p, int max_checks = 20000);

// Up to `n` distinct legal points drawn uniformly from the space with `seed`, in draw order,
// without enumerating it: candidates are drawn uniformly from the offered (tiling, knobs) pairs
// and kept when legal, at most `max_draws` of them. Fewer than `n` when the space is smaller or
// mostly illegal.
std::vector<SchedulePoint> sample_legal_points(const TilingRules &rules, const ComputeDef &def,
                                               const BoundShape &shape, const Target &target, size_t n,
                                               uint64_t seed, size_t max_draws);

}  // namespace opgen

#endif
