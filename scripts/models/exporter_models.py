#!/usr/bin/python3
"""Generates small models written the way real exporters write them (torch.onnx.export of
torchvision, timm and Hugging Face modules; tf2onnx's padding), with Debian's python3-onnx:
random weights from fixed seeds, nothing downloaded. scripts/models/make_models.py writes the
compiler's own test networks in the plainest ONNX; these carry the idioms a user's file has:
shape sub-graphs (Shape -> Gather -> Unsqueeze -> Concat -> Reshape), Constant nodes, ReLU6 as
Clip with its bounds as inputs, decomposed normalizations and activations, a symbolic batch.

  mobilenetv2   torchvision MobileNetV2 at width 0.5 on a 32x32 image, two stages (opset 13):
                Conv (batch norm folded) + Clip(x, 0, 6) with the bounds as Constant inputs,
                inverted residuals with Add, GlobalAveragePool and `.reshape(x.shape[0], -1)`
                (Shape, Gather, Unsqueeze, Concat, Reshape), Gemm. Input batch symbolic ("batch").
  efficientnet  an EfficientNet/MobileNetV3-style CNN (opset 14): normalization by broadcasting
                Sub and Div, a stride-2 stem with TensorFlow's SAME padding (pads 0,0,1,1, as
                tf2onnx writes it) and HardSwish, an MBConv block (1x1 expansion with SiLU written
                as x*Sigmoid(x), 5x5 depthwise with HardSwish, squeeze-excitation as
                ReduceMean(keepdims=1) -> Conv -> SiLU -> Conv -> HardSigmoid -> Mul broadcasting
                over H and W, 1x1 projection, residual Add), a SiLU head pooled by
                ReduceMean(keepdims=0), Gemm.
  gpt2          a Hugging Face GPT-2 decoder, 2 layers, 64 wide, 4 heads, sequence 17 (opset 13),
                exported from int64 `input_ids` and `attention_mask` as tokenizers give them:
                tokens by Gather of wte, positions by Shape -> Range -> Gather of wpe, LayerNorm
                decomposed (ReduceMean, Sub, Pow, Sqrt, Div), Conv1D as Reshape -> Gemm ->
                Reshape with the shapes computed from Shape/Slice/Concat, Split of q, k, v, heads
                split and merged by computed Reshapes and Transposes, the causal mask as a Slice
                of a constant bool buffer into Where(mask, scores, finfo.min), the padding mask
                as (1 - mask) * finfo.min Added to the scores, tanh GELU with Pow(x, 3), the tied
                lm_head.
  vit           a Hugging Face ViT encoder, 2 layers, 64 wide, 4 heads, MLP 256, a 32x32 image in
                8x8 patches: 17 tokens with the cls token, GPT-2's sequence and widths, so the two
                share kernels in one cache (opset 17): patch Conv, flatten(2) as a computed
                Reshape, Transpose, the cls token Expanded to the batch (Shape, Equal, Where,
                Expand as torch writes expand(b, -1, -1)), Concat, position Add, pre-norm
                LayerNormalization, attention, MLP with the exact (Erf) GELU, final
                LayerNormalization, the classifier on hidden[:, 0] (a Gather).

Each model NAME becomes OUTDIR/NAME.onnx and its seeded inputs OUTDIR/NAME.inputs/<input>.npy
(a symbolic dimension at the value --batch gives, 2 by default), ready for scripts/ort/run.js.
Every model passes onnx.checker with full shape inference.

usage: exporter_models.py OUTDIR [--only NAME[,NAME...]] [--batch N]
"""
import argparse
import math
import os
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_models import Graph  # noqa: E402  (the seeded graph builder the test networks use)

FLOAT_MIN = float(np.finfo(np.float32).min)  # torch.finfo(torch.float32).min, HF's mask value


class Exporter(Graph):
    """make_models.Graph plus what torch.onnx.export writes beside initializers: Constant nodes,
    nodes with several outputs, and the shape sub-graphs of `x.size()` arithmetic."""

    def __init__(self, seed, opset):
        super().__init__(seed)
        self.opset = opset

    def constant(self, prefix, array):
        """A Constant node, as torch writes scalars and shape pieces inside the graph."""
        name = self.name(prefix + "_Constant")
        out = name + "_output_0"
        self.nodes.append(helper.make_node("Constant", [], [out], name=name,
                                           value=numpy_helper.from_array(np.asarray(array))))
        return out

    def multi(self, op, inputs, count, prefix, **attrs):
        name = self.name(prefix)
        outs = ["%s_output_%d" % (name, i) for i in range(count)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=name, **attrs))
        return outs

    def op(self, op, inputs, prefix, **attrs):
        return self.node(op, inputs, self.name(prefix), **attrs)

    def size(self, x, index, prefix):
        """`x.size(index)`: Shape -> Gather of a scalar index (an int64 scalar)."""
        shape = self.op("Shape", [x], prefix + "_Shape")
        return self.op("Gather", [shape, self.constant(prefix, np.array(index, np.int64))],
                       prefix + "_Gather", axis=0)

    def sizes_but_last(self, x, drop, prefix):
        """`x.size()[:-drop]`: Shape -> Slice (a 1-D int64 shape)."""
        shape = self.op("Shape", [x], prefix + "_Shape")
        return self.op("Slice", [shape, self.constant(prefix, np.array([0], np.int64)),
                                 self.constant(prefix, np.array([-drop], np.int64)),
                                 self.constant(prefix, np.array([0], np.int64))],
                       prefix + "_Slice")

    def view(self, x, head, tail, prefix):
        """`x.view(head + tail)`: Concat of a computed head and constant tail -> Reshape."""
        shape = self.op("Concat", [head, self.constant(prefix, np.array(tail, np.int64))],
                        prefix + "_Concat", axis=0)
        return self.op("Reshape", [x, shape], prefix + "_Reshape")

    def unsqueeze(self, x, axes, prefix):
        # Opset 13 moved Unsqueeze's axes from an attribute to an input.
        if self.opset >= 13:
            return self.op("Unsqueeze", [x, self.constant(prefix, np.array(axes, np.int64))],
                           prefix + "_Unsqueeze")
        return self.op("Unsqueeze", [x], prefix + "_Unsqueeze", axes=axes)

    def rename(self, old, new):
        """Gives a tensor the name torch.onnx.export's output_names would (`logits`)."""
        for n in self.nodes:
            for names in (n.input, n.output):
                for i, t in enumerate(names):
                    if t == old:
                        names[i] = new
        return new

    def export(self, graph_name, inputs, outputs):
        model = self.model(graph_name, inputs, outputs)
        model.opset_import[0].version = self.opset
        model.producer_name = "pytorch"  # what the idioms imitate
        model.producer_version = "opgen scripts/models/exporter_models.py"
        return model


def conv(g, x, cin, cout, k, prefix, stride=1, group=1, pads=None, bias_std=0.05, gain=1.0):
    """Conv with bias: a batch norm folded in, as torch.onnx.export does in eval mode."""
    fan_in = (cin // group) * k * k
    name = g.name(prefix + "_Conv")
    w = g.weight(name + "_weight", [cout, cin // group, k, k], gain * math.sqrt(2.0 / fan_in))
    b = g.weight(name + "_bias", [cout], bias_std)
    return g.node("Conv", [x, w, b], name, kernel_shape=[k, k], strides=[stride, stride],
                  pads=pads if pads is not None else [k // 2] * 4, group=group,
                  dilations=[1, 1])


def relu6(g, x, prefix):
    """nn.ReLU6 at opset >= 11: Clip with min and max as (Constant) inputs."""
    lo = g.constant(prefix, np.array(0.0, np.float32))
    hi = g.constant(prefix, np.array(6.0, np.float32))
    return g.op("Clip", [x, lo, hi], prefix + "_Clip")


def silu(g, x, prefix):
    """nn.SiLU as torch writes it: x * Sigmoid(x)."""
    return g.op("Mul", [x, g.op("Sigmoid", [x], prefix + "_Sigmoid")], prefix + "_Mul")


def gemm(g, x, cin, cout, prefix, std=None):
    """nn.Linear on a 2-D input: Gemm with transB = 1 and the weight as [out, in]."""
    w = g.weight(prefix + "_weight", [cout, cin], std or math.sqrt(1.0 / cin))
    b = g.weight(prefix + "_bias", [cout], 0.01)
    return g.op("Gemm", [x, w, b], prefix + "_Gemm", alpha=1.0, beta=1.0, transB=1)


# --- MobileNetV2 (torchvision) -----------------------------------------------------------------

def make_divisible(v, divisor=8):
    """torchvision's _make_divisible: channels a multiple of 8, never 10% below v."""
    new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


def mobilenetv2(width=0.5, image=32, classes=10, last_channel=128):
    g = Exporter(seed=2, opset=13)
    x = "input"
    cin = make_divisible(32 * width)
    y = relu6(g, conv(g, x, 3, cin, 3, "features.0", stride=2), "features.0")
    # (expansion t, channels c, repeats n, first stride s): MobileNetV2's first two stages.
    index = 1
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2)]:
        cout = make_divisible(c * width)
        for i in range(n):
            stride = s if i == 0 else 1
            p = "features.%d" % index
            hidden = cin * t
            h = y
            if t != 1:
                h = relu6(g, conv(g, h, cin, hidden, 1, p + ".expand"), p + ".expand")
            h = relu6(g, conv(g, h, hidden, hidden, 3, p + ".dw", stride=stride, group=hidden),
                      p + ".dw")
            h = conv(g, h, hidden, cout, 1, p + ".project", gain=0.5)
            if stride == 1 and cin == cout:
                h = g.op("Add", [y, h], p + "_Add")
            y, cin = h, cout
            index += 1
    y = relu6(g, conv(g, y, cin, last_channel, 1, "features.%d" % index), "features.%d" % index)
    # torchvision's forward: adaptive_avg_pool2d(x, 1).reshape(x.shape[0], -1).
    pooled = g.op("GlobalAveragePool", [y], "GlobalAveragePool")
    batch = g.unsqueeze(g.size(y, 0, "flatten"), [0], "flatten")
    flat = g.view(pooled, batch, [-1], "flatten")
    logits = g.rename(gemm(g, flat, last_channel, classes, "classifier.1"), "logits")
    return g.export(
        "torch_jit",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["batch", 3, image, image])],
        [helper.make_tensor_value_info(logits, TensorProto.FLOAT, ["batch", classes])])


# --- EfficientNet / MobileNetV3 style -----------------------------------------------------------

def squeeze_excitation(g, x, channels, squeezed, prefix):
    """SE as torchvision's SqueezeExcitation exports: ReduceMean over H, W (keepdims) -> 1x1 Conv
    -> SiLU -> 1x1 Conv -> HardSigmoid (MobileNetV3's gate; EfficientNet's is a Sigmoid) -> Mul
    broadcasting the [N, C, 1, 1] scale over H and W."""
    s = g.op("ReduceMean", [x], prefix + "_ReduceMean", axes=[2, 3], keepdims=1)
    s = silu(g, conv(g, s, channels, squeezed, 1, prefix + ".fc1", pads=[0] * 4), prefix)
    s = conv(g, s, squeezed, channels, 1, prefix + ".fc2", pads=[0] * 4, bias_std=0.5)
    # F.hardsigmoid: HardSigmoid with PyTorch's alpha 1/6 (ONNX's default is 0.2).
    s = g.op("HardSigmoid", [s], prefix + "_HardSigmoid", alpha=1.0 / 6, beta=0.5)
    return g.op("Mul", [s, x], prefix + "_Mul")


def mbconv(g, x, cin, cout, expand, k, stride, prefix):
    hidden = cin * expand
    h = silu(g, conv(g, x, cin, hidden, 1, prefix + ".expand", pads=[0] * 4), prefix + ".expand")
    h = conv(g, h, hidden, hidden, k, prefix + ".dw", stride=stride, group=hidden)
    h = g.op("HardSwish", [h], prefix + ".dw_HardSwish")
    h = squeeze_excitation(g, h, hidden, max(1, cin // 4), prefix + ".se")
    h = conv(g, h, hidden, cout, 1, prefix + ".project", pads=[0] * 4, gain=0.5)
    if stride == 1 and cin == cout:
        # Stochastic depth is the identity in eval mode; only the Add remains.
        h = g.op("Add", [h, x], prefix + "_Add")
    return h


def efficientnet(image=32, classes=10):
    g = Exporter(seed=3, opset=14)  # HardSwish is an ONNX operator from opset 14
    x = "input"
    mean = g.const("normalize_mean", np.array([[[[0.485]], [[0.456]], [[0.406]]]], np.float32))
    std = g.const("normalize_std", np.array([[[[0.229]], [[0.224]], [[0.225]]]], np.float32))
    y = g.op("Div", [g.op("Sub", [x, mean], "normalize_Sub"), std], "normalize_Div")
    # TensorFlow's SAME at stride 2 on an even size pads only after: tf2onnx writes [0, 0, 1, 1].
    y = conv(g, y, 3, 16, 3, "stem", stride=2, pads=[0, 0, 1, 1])
    y = g.op("HardSwish", [y], "stem_HardSwish")                        # 16 x 16 x 16
    # One MBConv block, expanded 4x: SiLU after the expansion, HardSwish after the 5x5 depthwise
    # conv, SE with a SiLU inside and a HardSigmoid gate, a residual Add.
    y = mbconv(g, y, 16, 16, 4, 5, 1, "blocks.0")
    y = silu(g, conv(g, y, 16, 64, 1, "head", pads=[0] * 4), "head")
    y = g.op("ReduceMean", [y], "pool_ReduceMean", axes=[2, 3], keepdims=0)
    logits = g.rename(gemm(g, y, 64, classes, "classifier"), "logits")
    return g.export(
        "torch_jit",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 3, image, image])],
        [helper.make_tensor_value_info(logits, TensorProto.FLOAT, [1, classes])])


# --- GPT-2 (Hugging Face) -----------------------------------------------------------------------

class Gpt2Config:
    def __init__(self, layers=2, hidden=64, heads=4, seq=17, positions=32, vocab=96, std=0.15):
        self.layers, self.hidden, self.heads, self.seq = layers, hidden, heads, seq
        self.positions, self.vocab, self.std = positions, vocab, std


def norm_params(g, hidden, prefix):
    """A trained LayerNorm's scale and shift: near 1 and 0, not exactly (so both matter)."""
    gamma = (1.0 + 0.1 * g.rng.standard_normal(hidden)).astype(np.float32)
    beta = (0.1 * g.rng.standard_normal(hidden)).astype(np.float32)
    return g.const(prefix + ".weight", gamma), g.const(prefix + ".bias", beta)


def layer_norm_decomposed(g, x, hidden, prefix, eps=1e-5):
    """nn.LayerNorm before opset 17: mean, centred, Pow 2, variance, Sqrt, Div, scale, shift."""
    mean = g.op("ReduceMean", [x], prefix + "_ReduceMean", axes=[-1], keepdims=1)
    d = g.op("Sub", [x, mean], prefix + "_Sub")
    var = g.op("ReduceMean", [g.op("Pow", [d, g.constant(prefix, np.array(2.0, np.float32))],
                                   prefix + "_Pow")], prefix + "_ReduceMean", axes=[-1],
               keepdims=1)
    std = g.op("Sqrt", [g.op("Add", [var, g.constant(prefix, np.array(eps, np.float32))],
                             prefix + "_Add")], prefix + "_Sqrt")
    y = g.op("Div", [d, std], prefix + "_Div")
    gamma, beta = norm_params(g, hidden, prefix)
    return g.op("Add", [g.op("Mul", [y, gamma], prefix + "_Mul"), beta], prefix + "_Add")


def conv1d(g, x, nx, nf, prefix, std):
    """transformers' Conv1D: size_out = x.size()[:-1] + (nf,); addmm(b, x.view(-1, nx), W);
    .view(size_out). The weight is [nx, nf] (no transpose)."""
    head = g.sizes_but_last(x, 1, prefix)
    flat = g.op("Reshape", [x, g.constant(prefix, np.array([-1, nx], np.int64))],
                prefix + "_Reshape")
    w = g.weight(prefix + ".weight", [nx, nf], std)
    b = g.weight(prefix + ".bias", [nf], std)
    y = g.op("Gemm", [flat, w, b], prefix + "_Gemm", alpha=1.0, beta=1.0)
    return g.view(y, head, [nf], prefix)


def gelu_tanh(g, x, prefix):
    """transformers' NewGELUActivation:
    0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * pow(x, 3))))."""
    c = lambda v: g.constant(prefix, np.array(v, np.float32))  # noqa: E731
    cube = g.op("Pow", [x, c(3.0)], prefix + "_Pow")
    inner = g.op("Add", [x, g.op("Mul", [c(0.044715), cube], prefix + "_Mul")], prefix + "_Add")
    inner = g.op("Mul", [c(math.sqrt(2.0 / math.pi)), inner], prefix + "_Mul")
    t = g.op("Add", [c(1.0), g.op("Tanh", [inner], prefix + "_Tanh")], prefix + "_Add")
    return g.op("Mul", [g.op("Mul", [c(0.5), x], prefix + "_Mul"), t], prefix + "_Mul")


def gpt2_attention(g, x, mask, bias, c, prefix):
    head_dim = c.hidden // c.heads
    qkv = conv1d(g, x, c.hidden, 3 * c.hidden, prefix + ".c_attn", c.std)
    split = g.constant(prefix, np.array([c.hidden] * 3, np.int64))
    q, k, v = g.multi("Split", [qkv, split], 3, prefix + "_Split", axis=2)

    def split_heads(t, p):
        t = g.view(t, g.sizes_but_last(t, 1, p), [c.heads, head_dim], p)
        return g.op("Transpose", [t], p + "_Transpose", perm=[0, 2, 1, 3])

    q, k, v = (split_heads(t, prefix + "_" + n) for t, n in ((q, "q"), (k, "k"), (v, "v")))
    kt = g.op("Transpose", [k], prefix + "_Transpose", perm=[0, 1, 3, 2])
    w = g.op("MatMul", [q, kt], prefix + "_MatMul")
    w = g.op("Div", [w, g.constant(prefix, np.array(math.sqrt(head_dim), np.float32))],
             prefix + "_Div")
    # causal_mask = self.bias[:, :, key_length - query_length : key_length, :key_length]
    q_len = g.size(q, -2, prefix + "_qlen")
    k_len = g.size(k, -2, prefix + "_klen")
    start = g.unsqueeze(g.op("Sub", [k_len, q_len], prefix + "_Sub"), [0], prefix)
    end = g.unsqueeze(k_len, [0], prefix)
    causal = g.op("Slice", [bias, start, end, g.constant(prefix, np.array([2], np.int64)),
                            g.constant(prefix, np.array([1], np.int64))], prefix + "_Slice")
    causal = g.op("Slice", [causal, g.constant(prefix, np.array([0], np.int64)), end,
                            g.constant(prefix, np.array([3], np.int64)),
                            g.constant(prefix, np.array([1], np.int64))], prefix + "_Slice")
    w = g.op("Where", [causal, w, g.constant(prefix, np.array(FLOAT_MIN, np.float32))],
             prefix + "_Where")
    w = g.op("Add", [w, mask], prefix + "_Add")
    p = g.op("Softmax", [w], prefix + "_Softmax", axis=-1)
    a = g.op("MatMul", [p, v], prefix + "_MatMul")
    # _merge_heads: permute(0, 2, 1, 3), view(size()[:-2] + (heads * head_dim,))
    a = g.op("Transpose", [a], prefix + "_Transpose", perm=[0, 2, 1, 3])
    a = g.view(a, g.sizes_but_last(a, 2, prefix + "_merge"), [c.hidden], prefix + "_merge")
    return conv1d(g, a, c.hidden, c.hidden, prefix + ".c_proj", c.std)


def gpt2(c=Gpt2Config()):
    g = Exporter(seed=124, opset=13)
    ids_in, mask_in = "input_ids", "attention_mask"
    # inputs_embeds = wte(input_ids)
    wte = g.weight("transformer.wte.weight", [c.vocab, c.hidden], 0.5)
    x = g.op("Gather", [wte, ids_in], "transformer.wte_Gather", axis=0)
    # position_ids = arange(0, input_shape[-1]).unsqueeze(0); position_embeds = wpe(position_ids)
    seq = g.size(x, 1, "position")
    ids = g.op("Range", [g.constant("position", np.array(0, np.int64)), seq,
                         g.constant("position", np.array(1, np.int64))], "position_Range")
    ids = g.unsqueeze(ids, [0], "position")
    wpe = g.weight("transformer.wpe.weight", [c.positions, c.hidden], 0.5)
    pos = g.op("Gather", [wpe, ids], "transformer.wpe_Gather", axis=0)
    h = g.op("Add", [x, pos], "transformer_Add")
    # attention_mask.view(batch_size, -1)[:, None, None, :]; (1.0 - mask) * finfo.min
    batch = g.unsqueeze(g.size(x, 0, "mask"), [0], "mask")
    mask = g.view(mask_in, batch, [-1], "mask")
    mask = g.unsqueeze(g.unsqueeze(mask, [1], "mask"), [2], "mask")
    mask = g.op("Cast", [mask], "mask_Cast", to=TensorProto.FLOAT)
    mask = g.op("Sub", [g.constant("mask", np.array(1.0, np.float32)), mask], "mask_Sub")
    mask = g.op("Mul", [mask, g.constant("mask", np.array(FLOAT_MIN, np.float32))], "mask_Mul")
    tril = np.tril(np.ones([1, 1, c.positions, c.positions], bool))
    for i in range(c.layers):
        p = "transformer.h.%d" % i
        bias = g.const(p + ".attn.bias", tril)  # each layer's registered buffer
        a = gpt2_attention(g, layer_norm_decomposed(g, h, c.hidden, p + ".ln_1"), mask, bias, c,
                           p + ".attn")
        h = g.op("Add", [a, h], p + "_Add")
        m = conv1d(g, layer_norm_decomposed(g, h, c.hidden, p + ".ln_2"), c.hidden, 4 * c.hidden,
                   p + ".mlp.c_fc", c.std)
        m = conv1d(g, gelu_tanh(g, m, p + ".mlp.act"), 4 * c.hidden, c.hidden, p + ".mlp.c_proj",
                   c.std)
        h = g.op("Add", [h, m], p + "_Add")
    h = layer_norm_decomposed(g, h, c.hidden, "transformer.ln_f")
    # lm_head is tied to wte: the exporter folds wte's transpose into an initializer.
    wte_t = g.weight("lm_head.weight_transposed", [c.hidden, c.vocab], 0.1)
    logits = g.rename(g.op("MatMul", [h, wte_t], "lm_head_MatMul"), "logits")
    return g.export(
        "torch_jit",
        [helper.make_tensor_value_info(ids_in, TensorProto.INT64, [1, c.seq]),
         helper.make_tensor_value_info(mask_in, TensorProto.INT64, [1, c.seq])],
        [helper.make_tensor_value_info(logits, TensorProto.FLOAT, [1, c.seq, c.vocab])])


# --- ViT (Hugging Face) -------------------------------------------------------------------------

class VitConfig:
    def __init__(self, layers=2, hidden=64, heads=4, mlp=256, image=32, patch=8, classes=10,
                 std=0.1):
        self.layers, self.hidden, self.heads, self.mlp = layers, hidden, heads, mlp
        self.image, self.patch, self.classes, self.std = image, patch, classes, std


def linear3d(g, x, cin, cout, prefix, std):
    """nn.Linear on a 3-D input: MatMul by the transposed weight (folded) + Add of the bias."""
    w = g.weight(prefix + ".weight_transposed", [cin, cout], std)
    b = g.weight(prefix + ".bias", [cout], std)
    return g.op("Add", [b, g.op("MatMul", [x, w], prefix + "_MatMul")], prefix + "_Add")


def layer_norm(g, x, hidden, prefix, eps=1e-12):
    gamma, beta = norm_params(g, hidden, prefix)
    return g.op("LayerNormalization", [x, gamma, beta], prefix + "_LayerNormalization", axis=-1,
                epsilon=eps)


def gelu_erf(g, x, prefix):
    """nn.GELU(): x * 0.5 * (1 + erf(x / sqrt 2)), as torch writes it at opset < 20."""
    c = lambda v: g.constant(prefix, np.array(v, np.float32))  # noqa: E731
    e = g.op("Erf", [g.op("Div", [x, c(1.4142135381698608)], prefix + "_Div")], prefix + "_Erf")
    y = g.op("Mul", [x, g.op("Add", [e, c(1.0)], prefix + "_Add")], prefix + "_Mul")
    return g.op("Mul", [y, c(0.5)], prefix + "_Mul")


def vit_attention(g, x, c, prefix):
    head_dim = c.hidden // c.heads

    def scores_layout(name):
        t = linear3d(g, x, c.hidden, c.hidden, prefix + "." + name, c.std)
        p = prefix + "_" + name
        t = g.view(t, g.sizes_but_last(t, 1, p), [c.heads, head_dim], p)
        return g.op("Transpose", [t], p + "_Transpose", perm=[0, 2, 1, 3])

    q, k, v = scores_layout("query"), scores_layout("key"), scores_layout("value")
    kt = g.op("Transpose", [k], prefix + "_Transpose", perm=[0, 1, 3, 2])
    s = g.op("MatMul", [q, kt], prefix + "_MatMul")
    s = g.op("Div", [s, g.constant(prefix, np.array(math.sqrt(head_dim), np.float32))],
             prefix + "_Div")
    p = g.op("Softmax", [s], prefix + "_Softmax", axis=-1)
    ctx = g.op("Transpose", [g.op("MatMul", [p, v], prefix + "_MatMul")], prefix + "_Transpose",
               perm=[0, 2, 1, 3])
    ctx = g.view(ctx, g.sizes_but_last(ctx, 2, prefix + "_merge"), [c.hidden], prefix + "_merge")
    return linear3d(g, ctx, c.hidden, c.hidden, prefix + ".output.dense", c.std)


def vit(c=VitConfig()):
    g = Exporter(seed=16, opset=17)  # LayerNormalization is an ONNX operator from opset 17
    x = "pixel_values"
    fan_in = 3 * c.patch * c.patch
    w = g.weight("embeddings.patch_embeddings.projection.weight", [c.hidden, 3, c.patch, c.patch],
                 math.sqrt(1.0 / fan_in))
    b = g.weight("embeddings.patch_embeddings.projection.bias", [c.hidden], 0.02)
    y = g.op("Conv", [x, w, b], "embeddings.patch_embeddings.projection_Conv",
             kernel_shape=[c.patch, c.patch], strides=[c.patch, c.patch], pads=[0, 0, 0, 0],
             dilations=[1, 1], group=1)
    # .flatten(2): Reshape to x.size()[:2] + (-1,); then .transpose(1, 2)
    y = g.view(y, g.sizes_but_last(y, 2, "flatten"), [-1], "flatten")
    y = g.op("Transpose", [y], "embeddings_Transpose", perm=[0, 2, 1])
    # cls_token.expand(batch_size, -1, -1): torch resolves the -1s with Equal/Where at run time.
    batch = g.unsqueeze(g.size(x, 0, "cls"), [0], "cls")
    shape = g.op("Concat", [batch, g.constant("cls", np.array([-1], np.int64)),
                            g.constant("cls", np.array([-1], np.int64))], "cls_Concat", axis=0)
    ones = g.op("ConstantOfShape", [g.constant("cls", np.array([3], np.int64))],
                "cls_ConstantOfShape", value=numpy_helper.from_array(np.array([1], np.int64)))
    minus = g.op("Mul", [ones, g.constant("cls", np.array(-1, np.int64))], "cls_Mul")
    shape = g.op("Where", [g.op("Equal", [shape, minus], "cls_Equal"), ones, shape], "cls_Where")
    cls = g.weight("embeddings.cls_token", [1, 1, c.hidden], 0.5)
    cls = g.op("Expand", [cls, shape], "embeddings_Expand")
    y = g.op("Concat", [cls, y], "embeddings_Concat", axis=1)
    tokens = (c.image // c.patch) ** 2 + 1
    pos = g.weight("embeddings.position_embeddings", [1, tokens, c.hidden], 0.5)
    h = g.op("Add", [y, pos], "embeddings_Add")
    for i in range(c.layers):
        p = "encoder.layer.%d" % i
        a = vit_attention(g, layer_norm(g, h, c.hidden, p + ".layernorm_before"), c,
                          p + ".attention")
        h = g.op("Add", [a, h], p + "_Add")
        m = linear3d(g, layer_norm(g, h, c.hidden, p + ".layernorm_after"), c.hidden, c.mlp,
                     p + ".intermediate.dense", c.std)
        m = linear3d(g, gelu_erf(g, m, p + ".intermediate"), c.mlp, c.hidden, p + ".output.dense",
                     c.std)
        h = g.op("Add", [m, h], p + "_Add")
    hidden = g.rename(layer_norm(g, h, c.hidden, "layernorm"), "last_hidden_state")
    # sequence_output[:, 0, :] is a Gather of a scalar index on axis 1.
    first = g.op("Gather", [hidden, g.constant("classifier", np.array(0, np.int64))],
                 "classifier_Gather", axis=1)
    logits = g.rename(gemm(g, first, c.hidden, c.classes, "classifier", std=0.2), "logits")
    return g.export(
        "torch_jit",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 3, c.image, c.image])],
        [helper.make_tensor_value_info(hidden, TensorProto.FLOAT, [1, tokens, c.hidden]),
         helper.make_tensor_value_info(logits, TensorProto.FLOAT, [1, c.classes])])


MODELS = {"mobilenetv2": mobilenetv2, "efficientnet": efficientnet, "gpt2": gpt2, "vit": vit}


def write_inputs(model, directory, batch, seed):
    """Seeded inputs: standard normal, a symbolic dimension at `batch`; token ids uniform over the
    vocabulary; an attention mask of ones with the last quarter zero (right padding), so the
    padding mask changes the result."""
    os.makedirs(directory, exist_ok=True)
    rng = np.random.default_rng(seed)
    for value in model.graph.input:
        dims = [d.dim_value if d.HasField("dim_value") else batch
                for d in value.type.tensor_type.shape.dim]
        if value.name == "attention_mask":
            data = np.ones(dims, np.int64)
            data[..., dims[-1] - dims[-1] // 4:] = 0
        elif value.name == "input_ids":
            vocab = next(t.dims[0] for t in model.graph.initializer if t.name == "transformer.wte.weight")
            data = rng.integers(0, vocab, dims).astype(np.int64)
        else:
            data = rng.standard_normal(dims).astype(np.float32)
        np.save(os.path.join(directory, value.name + ".npy"), data)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("outdir")
    parser.add_argument("--only", default=",".join(MODELS),
                        help="comma-separated subset of: " + ", ".join(MODELS))
    parser.add_argument("--batch", type=int, default=2,
                        help="value of a symbolic batch in the written inputs (default 2)")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        sys.exit("error: unknown model '%s' (known: %s)" % (unknown[0], ", ".join(MODELS)))
    if args.batch < 1:
        sys.exit("error: --batch %d: a batch must be positive" % args.batch)
    os.makedirs(args.outdir, exist_ok=True)
    for name in names:
        start = time.monotonic()
        model = MODELS[name]()
        onnx.checker.check_model(model, full_check=True)
        path = os.path.join(args.outdir, name + ".onnx")
        onnx.save(model, path + ".tmp")  # beside, then renamed: never a half-written model
        os.replace(path + ".tmp", path)
        write_inputs(model, os.path.join(args.outdir, name + ".inputs"), args.batch, seed=1)
        ops = sorted({n.op_type for n in model.graph.node})
        print("%s: %s (%d nodes, opset %d: %s) in %.2f s" % (
            name, path, len(model.graph.node), model.opset_import[0].version, " ".join(ops),
            time.monotonic() - start))


if __name__ == "__main__":
    main()
