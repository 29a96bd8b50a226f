// parse_compute: the op language's text -> ComputeDef, with every name resolved and checked.
//
// The language (documented with examples in docs/op-language.md):
//
//     # C = A B
//     op matmul
//     param M, N, K
//     input  A: f32[M, K]
//     input  B: f32[K, N]
//     output C: f32[M, N]
//     C[m, n] = sum(k: K) A[m, k] * B[k, n]
//
// One declaration or statement per line (a line continues while a bracket is open); `#` starts a
// comment. Errors raise UserError located at file:line:col with what is wrong.
#ifndef OPGEN_CORE_PARSER_H
#define OPGEN_CORE_PARSER_H

#include "core/ComputeDef.h"

#include <string>

namespace opgen {

// Parses and checks one op. `filename` is used in error locations only.
ComputeDef parse_compute(const std::string &text, const std::string &filename);

} // namespace opgen

#endif
