#include "onnx/QdqPool.h"

#include "onnx/OpText.h"
#include "onnx/QdqOperands.h"

#include <algorithm>

namespace opgen::onnx_import {

const char *const kQuantizedMaxPool = "max_pool2d_nhwc_u8";

namespace {

std::string pool_text() {
    return std::string(kGeneratedHeader) +
           "# 2-D max pooling of a quantized u8 NHWC tensor, requantized from X's scale and zero point to\n"
           "# Y's (round half to even, saturation): padding reads 0, the smallest u8, so it never wins.\n"
           "op " + kQuantizedMaxPool + "\nparam N, H, W, C, KH = 2, KW = 2\nattr stride = 2, pad = 0\n"
           "let OH = (H + 2*pad - KH) / stride + 1\nlet OW = (W + 2*pad - KW) / stride + 1\n"
           "input  X: u8[N, H, W, C] zero_pad\ninput  XS: f32[1]\ninput  XZ: u8[1]\ninput  YS: f32[1]\ninput  YZ: u8[1]\n"
           "local  M: u8[N, OH, OW, C]\nlocal  R: f32[N, OH, OW, C]\noutput Y: u8[N, OH, OW, C]\n"
           "M[n, y, x, c] = max(ry: KH, rx: KW) X[n, y*stride + ry - pad, x*stride + rx - pad, c]\n"
           "R[n, y, x, c] = min(max(round((M[n, y, x, c] - XZ[0]) * XS[0] / YS[0]) + YZ[0], 0.0), 255.0)\n"
           "Y[n, y, x, c] = R[n, y, x, c]\n";
}

// The window of MaxPool `n`: false unless it is 2-D, even, undilated and floors its output size.
bool window_fits(const GraphNode &n, int64_t &kh, int64_t &kw, int64_t &stride, int64_t &pad) {
    const Dims k = n.ints_attr("kernel_shape", {});
    const std::string mode = n.has("auto_pad") ? n.attrs.at("auto_pad").s : "NOTSET";
    if (k.size() != 2 || n.int_attr("ceil_mode", 0) != 0 || n.int_attr("storage_order", 0) != 0) return false;
    if (mode != "NOTSET" && mode != "VALID") return false;
    int64_t dilation = 1;
    if (!one_value(n.ints_attr("dilations", {1, 1}), dilation) || dilation != 1) return false;
    if (!one_value(n.ints_attr("strides", {1, 1}), stride) || stride < 1) return false;
    pad = 0;
    if (mode == "NOTSET" && !one_value(n.ints_attr("pads", {0, 0, 0, 0}), pad)) return false;
    kh = k[0], kw = k[1];
    return pad >= 0 && pad < std::min(kh, kw);
}

}  // namespace

std::optional<SubgraphKernel> fuse_quantized_max_pool(const ModelGraph &g, const GraphNode &n,
                                                      const SoleReader &sole_reader) {
    int64_t kh = 0, kw = 0, stride = 1, pad = 0;
    if (n.op_type != "MaxPool" || n.inputs.empty() || (n.outputs.size() > 1 && !n.outputs[1].empty()) ||
        !window_fits(n, kh, kw, stride, pad))
        return std::nullopt;
    const GraphNode *dq = dequantize_of(g, n.inputs[0]);
    if (!dq || sole_reader(n.inputs[0]) != &n || g.tensor(dq->inputs[0]).elem_type != kOnnxUint8 || !present(*dq, 2))
        return std::nullopt;
    std::optional<PerTensor> x = per_tensor(g, dq->inputs[0], dq->inputs[1], dq->inputs[2]);
    const GraphNode *q = sole_reader(n.outputs[0]);
    if (!x || !q || q->op_type != "QuantizeLinear" || g.tensor(q->outputs[0]).elem_type != kOnnxUint8 || !present(*q, 2))
        return std::nullopt;
    if (!per_tensor(g, q->outputs[0], q->inputs[1], q->inputs[2])) return std::nullopt;
    const Dims &xd = g.tensor(x->tensor).dims, &yd = g.tensor(q->outputs[0]).dims;
    if (xd.size() != 4 || yd.size() != 4 || yd != Dims{xd[0], xd[1], (xd[2] + 2 * pad - kh) / stride + 1,
                                                       (xd[3] + 2 * pad - kw) / stride + 1})
        return std::nullopt;
    SubgraphKernel k = generated_kernel(
        "pool", kQuantizedMaxPool, pool_text(),
        shape_text({{"N", xd[0]}, {"H", xd[2]}, {"W", xd[3]}, {"C", xd[1]}, {"KH", kh}, {"KW", kw}, {"stride", stride}, {"pad", pad}}),
        {{"X", x->tensor}, {"XS", dq->inputs[1]}, {"XZ", dq->inputs[2]}, {"YS", q->inputs[1]}, {"YZ", q->inputs[2]},
         {"Y", q->outputs[0]}});
    k.nodes = {dq->index, n.index, q->index};
    return k;
}

}  // namespace opgen::onnx_import
