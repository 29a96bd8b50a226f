// Gathered reads: a strided input read without a window, such as a 1x1 convolution of stride 2
// (X[n, c, 2y, 2x]), is lowered through a Func over the reading statement's own variables,
// X_gathered(n, c, y, x) = X(n, c, 2y, 2x), that the statement reads in its place (core/Lower.cpp).
// Inlined it is the same read. Packed (Func::in at a cache tile, core/Schedule.cpp) it becomes
// the panel oneDNN calls "reduce to unit stride": only the pixels the stride reads, dense, so the
// update loads whole vectors of them. Packing the input itself copies the bounding box instead
// (every other row and column too, 4x the pixels at stride 2) and loads it at stride 2.
// Measured on an Intel Xeon host (AVX-512), conv 56x56x256->512 1x1 stride 2, 1 thread, rows of 28
// in two vectors: 112-133 GFLOP/s gathered against 49-61 with the bounding-box panel.
#ifndef OPGEN_CORE_GATHER_H
#define OPGEN_CORE_GATHER_H

#include "core/ComputeDef.h"
#include "core/Shape.h"

#include <optional>
#include <string>
#include <vector>

namespace opgen {

// How statement `s` of `def` reads `access` (an Access node of its body) through a gather at
// `shape`: per dimension of the input, outermost first, the variable of `s` its index moves with,
// or "" where the index is constant. Nullopt unless `access` reads an input, every index is one
// variable's multiple plus constants and reduction variables of extent 1 (no window), no variable
// indexes two dimensions, and some multiple is above 1 (a stride): an unstrided read gains nothing.
std::optional<std::vector<std::string>> gather_dims(const ComputeDef &def, const Statement &s, const ExprNode &access,
                                                    const BoundShape &shape);

// The reduction variables of `s` whose extent is 1 at `shape` (a 1x1 window's rx and ry): a
// gathered read sets them to 0.
std::vector<std::string> unit_reduction_vars(const Statement &s, const BoundShape &shape);

// The name generated source gives the gathered Func of input `tensor`, and its variable `k`
// (0 the innermost, as Halide orders them).
std::string gathered_name(const std::string &tensor);
std::string gathered_var_name(const std::string &tensor, size_t k);

}  // namespace opgen

#endif
