#include "core/FastMath.h"

namespace opgen {

Halide::Expr fast_erf(const Halide::Expr &x) {
    // Abramowitz and Stegun, Handbook of Mathematical Functions, 7.1.26.
    const float p = 0.3275911f;
    const float a1 = 0.254829592f, a2 = -0.284496736f, a3 = 1.421413741f, a4 = -1.453152027f, a5 = 1.061405429f;
    Halide::Expr a = Halide::min(Halide::abs(x), 6.0f);
    Halide::Expr t = 1.0f / (1.0f + p * a);
    Halide::Expr poly = t * (a1 + t * (a2 + t * (a3 + t * (a4 + t * a5))));
    Halide::Expr y = 1.0f - poly * Halide::fast_exp(-(a * a));
    return Halide::select(x < 0.0f, -y, y);
}

Halide::Expr fast_tanh(const Halide::Expr &x) {
    Halide::Expr c = Halide::clamp(x, -9.0f, 9.0f);
    return 1.0f - 2.0f / (Halide::fast_exp(2.0f * c) + 1.0f);
}

}  // namespace opgen
