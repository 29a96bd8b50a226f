#include "onnx/WeightLayout.h"

#include "base/Error.h"
#include "onnx/ModelGraph.h"

namespace opgen::onnx_import {

namespace {

constexpr int64_t kBlock = 16;

}  // namespace

WeightRelayout make_relayout(const std::string &source, const std::vector<int64_t> &dims, const std::string &layout) {
    WeightRelayout r{source + "@" + layout, source, layout, {}};
    if (layout == "transpose") {
        internal_check(dims.size() == 2) << "transpose of '" << source << "': rank " << dims.size();
        r.dims = {dims[1], dims[0]};
        return r;
    }
    internal_check(dims.size() == 4) << layout << " of '" << source << "': rank " << dims.size();
    int64_t f = dims[0], c = dims[1], kh = dims[2], kw = dims[3];
    if (layout == "winograd_f23") {
        internal_check(kh == 3 && kw == 3) << layout << " of '" << source << "': a " << kh << "x" << kw << " window";
        r.dims = {16, c, f};
        return r;
    }
    internal_check(f % kBlock == 0) << layout << " of '" << source << "': " << f << " output channels";
    if (layout == "OIhw16i16o") {
        internal_check(c % kBlock == 0) << layout << " of '" << source << "': " << c << " input channels";
        r.dims = {f / kBlock, c / kBlock, kh, kw, kBlock, kBlock};
    } else if (layout == "Oihw16o") {
        r.dims = {f / kBlock, c, kh, kw, kBlock};
    } else if (layout == "Ghw16g") {
        internal_check(c == 1) << layout << " of '" << source << "': " << c << " input channels per group";
        r.dims = {f / kBlock, kh, kw, kBlock};
    } else {
        internal_check(false) << "unknown weight layout '" << layout << "'";
    }
    return r;
}

namespace {

// Winograd F(2x2, 3x3)'s transformed weights (docs/design.md §3.2): U[a, b, c, f] = (G g G^T)[a, b]
// of the 3 x 3 window g of output channel f and input channel c, as 16 C x F matrices.
std::vector<float> winograd_f23_weights(const std::vector<int64_t> &src_dims, const std::vector<float> &source) {
    static const double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
    const int64_t f = src_dims[0], c = src_dims[1];
    std::vector<float> out(size_t(16 * c * f));
    for (int64_t o = 0; o < f; o++)
        for (int64_t i = 0; i < c; i++) {
            const float *g = &source[size_t((o * c + i) * 9)];
            for (int a = 0; a < 4; a++)
                for (int b = 0; b < 4; b++) {
                    double u = 0;
                    for (int y = 0; y < 3; y++)
                        for (int x = 0; x < 3; x++) u += G[a][y] * g[y * 3 + x] * G[b][x];
                    out[size_t(((a * 4 + b) * c + i) * f + o)] = float(u);
                }
        }
    return out;
}

}  // namespace

std::vector<float> relaid_elements(const WeightRelayout &r, const std::vector<int64_t> &src_dims,
                                   const std::vector<float> &source) {
    if (r.layout == "winograd_f23") return winograd_f23_weights(src_dims, source);
    std::vector<float> out(source.size());
    if (r.layout == "transpose") {
        int64_t rows = src_dims[0], cols = src_dims[1];
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++) out[size_t(j * rows + i)] = source[size_t(i * cols + j)];
        return out;
    }
    int64_t f = src_dims[0], c = src_dims[1], kh = src_dims[2], kw = src_dims[3];
    for (int64_t o = 0; o < f; o++)
        for (int64_t i = 0; i < c; i++)
            for (int64_t y = 0; y < kh; y++)
                for (int64_t x = 0; x < kw; x++) {
                    int64_t fo = o / kBlock, fi = o % kBlock, at = 0;
                    if (r.layout == "OIhw16i16o")
                        at = ((((fo * (c / kBlock) + i / kBlock) * kh + y) * kw + x) * kBlock + i % kBlock) * kBlock + fi;
                    else if (r.layout == "Oihw16o")
                        at = (((fo * c + i) * kh + y) * kw + x) * kBlock + fi;
                    else
                        at = ((fo * kh + y) * kw + x) * kBlock + fi;
                    out[size_t(at)] = source[size_t(((o * c + i) * kh + y) * kw + x)];
                }
    return out;
}

void add_relaid_weights(ModelGraph &g, const std::vector<WeightRelayout> &relayouts) {
    for (const WeightRelayout &r : relayouts) {
        const GraphTensor &src = g.tensor(r.source);
        GraphTensor t;
        t.name = r.tensor;
        t.dims = r.dims;
        t.kind = TensorKind::Weight;
        t.elem_type = src.elem_type;
        if (!src.data.empty()) t.data = relaid_elements(r, src.dims, src.data);
        g.tensors[r.tensor] = std::move(t);
    }
}

}  // namespace opgen::onnx_import
