// The rules of where an op's other statements go (docs/design.md §2.4, knobs in §6.3): which
// statements a schedule point places with a StageChoice (core/Schedule.h), which placements are
// realisable together, how many partial-result lanes a reduction may keep, and the placements the
// space offers and the heuristic point picks. apply_schedule realises a placement; the tiling
// space (core/TilingRules.h) enumerates the offered ones as one knob.
#ifndef OPGEN_CORE_STAGE_PLACEMENT_H
#define OPGEN_CORE_STAGE_PLACEMENT_H

#include "core/ComputeDef.h"
#include "core/Schedule.h"
#include "core/Shape.h"
#include "core/Target.h"

#include <string>
#include <vector>

namespace opgen {

// The statements a point places with StageChoice, in statement order: all but the output and a
// fused main reduction (main_statement, main_is_fusable) with the epilogue inlined between them
// (fused_epilogue).
std::vector<const Statement *> placeable_statements(const ComputeDef &def);

// Whether fast math changes the op: a statement calls exp, erf or tanh, or divides a
// floating-point value by something other than a constant (lower_to_halide).
bool fast_math_applies(const ComputeDef &def);

// How deep in the output's loops a placement computes a statement: root 0, tile 1 (the output's
// cache tile), row 2 (the register tile of rows inside it); -1 for anything else (inline).
int placement_depth(const std::string &at);

// Why `stages` cannot be realised for `def`, or "" when it can: every choice names a placeable
// statement at most once, at root, tile, row or inline (inline for pointwise statements only); and
// no statement reads, directly or through inlined statements, one placed deeper
// (placement_depth): a root statement runs before any tile of the output, a tile statement before
// the rows of its tile. Lanes are checked by apply_schedule.
std::string stage_placement_error(const ComputeDef &def, const std::vector<StageChoice> &stages);

// Partial-result lane counts offered for reduction statement `s` at `shape` with `vector_lanes`
// lanes per vector: 1, and 2, 4 and 8 vectors' worth, or else one vector's worth, where that many
// divides the innermost reduction extent and leaves a loop. Ascending.
std::vector<int> reduction_lanes(const Statement &s, const BoundShape &shape, int vector_lanes);

// Every realisable placement of the placeable statements from these options, in a fixed order:
// reductions at root, tile or row with each of reduction_lanes; pointwise statements inlined, at
// tile, at root or at row. Empty when the op has no placeable statement.
std::vector<std::vector<StageChoice>> offered_placements(const ComputeDef &def, const BoundShape &shape,
                                                         const Target &target);

// The placement an untuned user gets: reductions at `at` ("tile" or "row") with the most lanes
// offered; pointwise statements read by two or more statements at `at` (computed once, kept in
// cache), others inlined. Empty when the op has no placeable statement.
std::vector<StageChoice> heuristic_placement(const ComputeDef &def, const BoundShape &shape, const Target &target,
                                             const std::string &at = "tile");

}  // namespace opgen

#endif
