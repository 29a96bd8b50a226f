#include "Halide.h"
using namespace Halide;
// Stride-2 1x1 conv as a gathered, flattened GEMM (prototype). Params via generator params.
class G : public Generator<G> {
public:
    GeneratorParam<int> HI{"HI", 56}, CI{"CI", 256}, FO{"FO", 512}, PT{"PT", 224}, XR{"XR", 32}, FR{"FR", 8}, CB{"CB", 0};
    Input<Buffer<float>> X{"X", 4};
    Input<Buffer<float>> Wt{"Wt", 4};
    Output<Buffer<float>> Y{"Y", 4};
    void generate() {
        const int Hi = HI, Wo = Hi / 2, P = Wo * Wo, C = CI, F = FO, Pt = PT, Xr = XR, Fr = FR;
        X.dim(0).set_bounds(0, Hi).set_stride(1); X.dim(1).set_bounds(0, Hi).set_stride(Hi);
        X.dim(2).set_bounds(0, C).set_stride(Hi * Hi); X.dim(3).set_bounds(0, 1);
        Wt.dim(0).set_bounds(0, 1); Wt.dim(1).set_bounds(0, 1); Wt.dim(2).set_bounds(0, C).set_stride(1); Wt.dim(3).set_bounds(0, F).set_stride(C);
        Var p("p"), c("c"), f("f"), x("x"), y("y"), n("n");
        Func Xg("Xg"); Xg(p, c) = X(2 * (p % Wo), 2 * (p / Wo), c, 0);
        RDom r(0, C, "r");
        Func acc("acc"); acc(p, f) = 0.f; acc(p, f) += Xg(p, r) * Wt(0, 0, r, f);
        Func Yf("Yf"); Yf(p, f) = acc(p, f);
        Y(x, y, f, n) = Yf(x + Wo * y, f);
        Y.dim(0).set_bounds(0, Wo).set_stride(1); Y.dim(1).set_bounds(0, Wo).set_stride(Wo); Y.dim(2).set_bounds(0, F).set_stride(P); Y.dim(3).set_bounds(0, 1);
        Var po("po"), pt("pt"), pr("pr"), pi("pi"), fo("fo"), fi("fi"), py("py"), px("px");
        Yf.compute_root().split(p, po, pt, Pt, TailStrategy::GuardWithIf).split(pt, pr, pi, Xr, TailStrategy::GuardWithIf)
          .split(f, fo, fi, Fr).reorder(pi, fi, pr, fo, po).vectorize(pi, 16).unroll(pi).unroll(fi);
        acc.compute_at(Yf, pr).vectorize(p, 16).unroll(p).unroll(f);
        acc.update().reorder(p, f, r).vectorize(p, 16, TailStrategy::GuardWithIf).unroll(p).unroll(f);
        Xg.compute_at(Yf, po).split(p, py, px, Wo, TailStrategy::GuardWithIf).reorder(px, py, c).vectorize(px, 16, TailStrategy::GuardWithIf);
        Y.reorder(x, y, f, n).vectorize(x, 16, TailStrategy::GuardWithIf);
    }
};
HALIDE_REGISTER_GENERATOR(G, g1)
