#include "Halide.h"
using namespace Halide;
// Stride-2 1x1 conv as a gathered GEMM over output rows (not flattened): vectors along a row of OW
// output pixels (two vectors, the second masked at OW = 28), register tile XR x YR pixels-rows x FR.
class G : public Generator<G> {
public:
    GeneratorParam<int> HI{"HI", 56}, CI{"CI", 256}, FO{"FO", 512}, YT{"YT", 4}, FR{"FR", 8}, YR{"YR", 1};
    Input<Buffer<float>> X{"X", 4};
    Input<Buffer<float>> Wt{"Wt", 4};
    Output<Buffer<float>> Y{"Y", 4};
    void generate() {
        const int Hi = HI, Wo = Hi / 2, C = CI, F = FO, Yt = YT, Fr = FR, Yr = YR;
        X.dim(0).set_bounds(0, Hi).set_stride(1); X.dim(1).set_bounds(0, Hi).set_stride(Hi);
        X.dim(2).set_bounds(0, C).set_stride(Hi * Hi); X.dim(3).set_bounds(0, 1);
        Wt.dim(0).set_bounds(0, 1); Wt.dim(1).set_bounds(0, 1); Wt.dim(2).set_bounds(0, C).set_stride(1); Wt.dim(3).set_bounds(0, F).set_stride(C);
        Var x("x"), y("y"), c("c"), f("f"), n("n");
        Func Xg("Xg"); Xg(x, y, c) = X(min(2 * x, Hi - 1), 2 * y, c, 0);
        RDom r(0, C, "r");
        Func acc("acc"); acc(x, y, f) = 0.f; acc(x, y, f) += Xg(x, y, r) * Wt(0, 0, r, f);
        Y(x, y, f, n) = acc(x, y, f);
        Y.dim(0).set_bounds(0, Wo).set_stride(1); Y.dim(1).set_bounds(0, Wo).set_stride(Wo); Y.dim(2).set_bounds(0, F).set_stride(Wo * Wo); Y.dim(3).set_bounds(0, 1);
        Var yo("yo"), yt("yt"), yr("yr"), yi("yi"), fo("fo"), fi("fi");
        Y.split(y, yo, yt, Yt, TailStrategy::GuardWithIf).split(yt, yr, yi, Yr).split(f, fo, fi, Fr)
         .reorder(x, yi, fi, yr, fo, yo, n).vectorize(x, 16, TailStrategy::GuardWithIf).unroll(yi).unroll(fi);
        acc.compute_at(Y, yr).vectorize(x, 16, TailStrategy::RoundUp).unroll(y).unroll(f);
        acc.update().reorder(x, y, f, r).vectorize(x, 16, TailStrategy::RoundUp).unroll(y).unroll(f);
        Xg.compute_at(Y, yo).reorder(x, y, c).vectorize(x, 16, TailStrategy::RoundUp);
    }
};
HALIDE_REGISTER_GENERATOR(G, g1)
