#include "onnx/QuantizedLayout.h"

#include "onnx/HeldLayout.h"
#include "onnx/OpText.h"
#include "onnx/QdqConv.h"
#include "onnx/QdqPool.h"

namespace opgen::onnx_import {

namespace {

// The transpose of a `type` tensor between NCHW and NHWC.
std::string transpose_text(const std::string &name, const std::string &type, bool to_nhwc) {
    std::string text = std::string(kGeneratedHeader) + "# Transpose of a " + type + " tensor " +
                       (to_nhwc ? "from NCHW to NHWC" : "from NHWC to NCHW") + " (the int8 convolutions' layout).\nop " + name +
                       "\nparam N, C, H, W\n";
    text += to_nhwc ? "input  X: " + type + "[N, C, H, W]\noutput Y: " + type + "[N, H, W, C]\nY[n, y, x, c] = X[n, c, y, x]\n"
                    : "input  X: " + type + "[N, H, W, C]\noutput Y: " + type + "[N, C, H, W]\nY[n, c, y, x] = X[n, y, x, c]\n";
    return text;
}

SubgraphKernel transpose(const ModelGraph &g, const std::string &from, const std::string &to, bool to_nhwc) {
    const Dims &d = g.tensor(from).dims;
    const std::string type = type_name(g, from);
    const std::string name = "transpose_" + type + (to_nhwc ? "_nchw_nhwc" : "_nhwc_nchw");
    return generated_kernel("copy", name, transpose_text(name, type, to_nhwc),
                            shape_text({{"N", d[0]}, {"C", d[1]}, {"H", d[2]}, {"W", d[3]}}), {{"X", from}, {"Y", to}});
}

class NhwcHolder {
public:
    NhwcHolder(ModelGraph &g, Partition &p)
        : g_(g), held_(g, p, "nhwc", [&g](const std::string &from, const std::string &to, bool to_nhwc) {
              return transpose(g, from, to, to_nhwc);
          }, true) {}

    void run() {
        for (SubgraphKernel &k : held_.take_kernels()) {
            if (k.op == kQuantizedConv || k.op == kQuantizedMaxPool) {
                k.args[0].second = held_.in_layout(k.args[0].second, true);
                held_.push_held_output(std::move(k));
            } else if (layout_free(k) && reads_nhwc(k)) {
                for (size_t a = 0; a + 1 < k.args.size(); a++)
                    if (elementwise_input(k, a)) k.args[a].second = held_.in_layout(k.args[a].second, true);
                held_.push_held_output(std::move(k));
            } else {
                for (size_t a = 0; a + 1 < k.args.size(); a++) k.args[a].second = held_.in_layout(k.args[a].second, false);
                held_.push(std::move(k));
            }
        }
    }

private:
    const ModelGraph &g_;
    HeldLayout held_;

    // Argument `a` of a pointwise kernel is a 4-D tensor of its output's dims computed at run time.
    bool elementwise_input(const SubgraphKernel &k, size_t a) const {
        const GraphTensor &t = g_.tensor(k.args[a].second);
        return !g_.is_weight(t.name) && t.dims == g_.tensor(k.args.back().second).dims && t.dims.size() == 4;
    }

    // A pointwise kernel whose other inputs have one element (a scale, a zero point): it computes
    // the same on NHWC tensors. A per-channel parameter or a broadcast input ties it to NCHW.
    bool layout_free(const SubgraphKernel &k) const {
        if (!k.pointwise) return false;
        for (size_t a = 0; a + 1 < k.args.size(); a++)
            if (!elementwise_input(k, a) && g_.tensor(k.args[a].second).elements() != 1) return false;
        return true;
    }

    bool reads_nhwc(const SubgraphKernel &k) const {
        for (size_t a = 0; a + 1 < k.args.size(); a++)
            if (elementwise_input(k, a) && held_.held(k.args[a].second)) return true;
        return false;
    }
};

}  // namespace

void hold_quantized_nhwc(ModelGraph &g, Partition &p) {
    bool any = false;
    for (const SubgraphKernel &k : p.kernels) any |= k.op == kQuantizedConv;
    if (any) NhwcHolder(g, p).run();
}

}  // namespace opgen::onnx_import
