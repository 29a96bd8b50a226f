// oneDNN's best NCHW-in/NCHW-out 1x1 stride-2 conv (any-format primitive + reorders, and its plain nchw one).
#include <dnnl.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
using namespace dnnl;
using tag = memory::format_tag;
using dt = memory::data_type;
int main(int argc, char **argv) {
    int H = atoi(argv[1]), C = atoi(argv[2]), F = atoi(argv[3]), reps = atoi(argv[4]), any = argc > 5 ? atoi(argv[5]) : 0;
    int Ho = H / 2;
    engine eng(engine::kind::cpu, 0); stream s(eng);
    memory::dims src{1, C, H, H}, wei{F, C, 1, 1}, dst{1, F, Ho, Ho}, st{2, 2}, pad{0, 0};
    std::vector<float> xs(size_t(C) * H * H, 0.5f), ws(size_t(F) * C, 0.25f), ys(size_t(F) * Ho * Ho);
    memory xm({src, dt::f32, tag::nchw}, eng, xs.data()), wm({wei, dt::f32, tag::oihw}, eng, ws.data()), ym({dst, dt::f32, tag::nchw}, eng, ys.data());
    tag t = any ? tag::any : tag::nchw, tw = any ? tag::any : tag::oihw;
    convolution_forward::desc d(prop_kind::forward_inference, algorithm::convolution_direct,
        {src, dt::f32, t}, {wei, dt::f32, tw}, {dst, dt::f32, t}, st, pad, pad);
    convolution_forward::primitive_desc pd(d, eng);
    memory xi = xm, wi = wm, yo = ym;
    if (pd.src_desc() != xm.get_desc()) xi = memory(pd.src_desc(), eng);
    if (pd.weights_desc() != wm.get_desc()) { wi = memory(pd.weights_desc(), eng); reorder(wm, wi).execute(s, wm, wi); }
    if (pd.dst_desc() != ym.get_desc()) yo = memory(pd.dst_desc(), eng);
    convolution_forward conv(pd);
    auto run = [&] {
        if (xi != xm) reorder(xm, xi).execute(s, xm, xi);
        conv.execute(s, {{DNNL_ARG_SRC, xi}, {DNNL_ARG_WEIGHTS, wi}, {DNNL_ARG_DST, yo}});
        if (yo != ym) reorder(yo, ym).execute(s, yo, ym);
        s.wait();
    };
    run();
    std::vector<double> ts;
    for (int r = 0; r < reps; r++) { auto t0 = std::chrono::steady_clock::now(); run();
        ts.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()); }
    std::sort(ts.begin(), ts.end()); double fl = 2.0 * Ho * Ho * C * F;
    printf("err 0 (%s) GFLOP/s p0 %.1f p10 %.1f p25 %.1f p50 %.1f p75 %.1f p90 %.1f\n", pd.impl_info_str(), fl/ts[0]/1e9, fl/ts[ts.size()/10]/1e9, fl/ts[ts.size()/4]/1e9, fl/ts[ts.size()/2]/1e9, fl/ts[3*ts.size()/4]/1e9, fl/ts[9*ts.size()/10]/1e9);
}
