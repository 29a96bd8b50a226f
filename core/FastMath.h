// Fast math (a choice of the schedule point, SchedulePoint::fast_math): transcendental functions
// as short polynomials around Halide's fast_exp, for epilogues that run once per output element
// next to a register tile (docs/design.md §2.5: a fused GELU should cost almost nothing over the
// matmul).
// Halide 14's erf is accurate to the last three bits but spends about 40 vector instructions per
// vector (two polynomials, a division and a select); its tanh is a scalar call per lane. Used by
// lower_to_halide only when the point asks for fast math.
#ifndef OPGEN_CORE_FAST_MATH_H
#define OPGEN_CORE_FAST_MATH_H

#include <Halide.h>

namespace opgen {

// erf of a float32 expression: Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7) with
// exp as Halide's fast_exp; |x| is clamped at 6, beyond which erf is 1 in float32 and fast_exp's
// argument would leave its range. About 25 vector instructions, one division.
Halide::Expr fast_erf(const Halide::Expr &x);

// tanh of a float32 expression: 1 - 2 / (fast_exp(2x) + 1), x clamped to [-9, 9] (tanh is +-1 in
// float32 beyond). Absolute error a few float32 ulps of 1.
Halide::Expr fast_tanh(const Halide::Expr &x);

}  // namespace opgen

#endif
