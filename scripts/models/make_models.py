#!/usr/bin/python3
"""Generates the whole-model test networks with Debian's python3-onnx: random weights
from a fixed seed, static shapes, batch 1. Nothing is downloaded.

  small      a MobileNet-style net: 3x32x32 input, a strided stem conv, depthwise-separable
             blocks (depthwise 3x3 conv + pointwise 1x1 conv), one inverted-residual block whose
             output is added to its input, global average pooling, a classifier and a softmax.
             About 30 KB; the default test run uses it.
  resnet50   ResNet-50 v1.5 (the stride sits on the 3x3 conv of each downsampling bottleneck),
             3x224x224 input, 1000 logits. Batch norms are folded into the convolutions' biases,
             as an inference export would leave them. About 100 MB.
  bert       The BERT-base encoder: 12 layers, hidden 768, 12 heads, FFN 3072, sequence 128,
             followed by the pooler (first token, dense + tanh) and a 2-way classifier. The input
             is the summed float embeddings [1, 128, 768] rather than token ids: the embedding
             lookup is a gather from a 94 MB table that costs nothing next to the encoder, and
             leaving it out keeps the model about the encoder's compute. About 340 MB.

Each model NAME becomes OUTDIR/NAME.onnx, with its inputs (also seeded) as
OUTDIR/NAME.inputs/<input name>.npy, ready for scripts/ort/run.js.

  bert_dynamic, bert_tiny_dynamic  bert and bert_tiny with a symbolic sequence length "seq"
             (reshape targets computed from the input's Shape, as exporters write them); their
             inputs are written at seq 128 and 16.
  resnet_tiny, bert_tiny  the same generators at toy sizes (two stages of 8 and 16 channels on a
             32x32 image; 2 layers, hidden 64, 4 heads, sequence 16), for the compiler's tests.

usage: make_models.py OUTDIR [--only NAME[,NAME...]]   (default: small, resnet50, bert)
"""
import argparse
import math
import os
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17  # LayerNormalization is an ONNX op from opset 17.


class Graph:
    """Accumulates nodes and initializers; weights come from one seeded generator so a model is
    the same file on every machine."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes = []
        self.inits = []
        self.count = 0

    def name(self, prefix):
        self.count += 1
        return "%s_%d" % (prefix, self.count)

    def weight(self, name, shape, std):
        data = (self.rng.standard_normal(shape) * std).astype(np.float32)
        self.inits.append(numpy_helper.from_array(data, name))
        return name

    def const(self, name, array):
        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def node(self, op, inputs, name, **attrs):
        out = name + "_out"
        self.nodes.append(helper.make_node(op, inputs, [out], name=name, **attrs))
        return out

    def model(self, graph_name, inputs, outputs):
        graph = helper.make_graph(self.nodes, graph_name, inputs, outputs, self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        model.producer_name = "opgen scripts/models/make_models.py"
        return model


def conv(g, x, cin, cout, k, stride=1, group=1, relu=True, gain=1.0):
    """Conv with bias (a folded batch norm), optionally followed by Relu. He-scaled weights keep
    activations near unit scale through deep stacks."""
    name = g.name("conv")
    fan_in = (cin // group) * k * k
    w = g.weight(name + "_w", [cout, cin // group, k, k], gain * math.sqrt(2.0 / fan_in))
    b = g.weight(name + "_b", [cout], 0.01)
    pad = k // 2
    y = g.node("Conv", [x, w, b], name, kernel_shape=[k, k], strides=[stride, stride],
               pads=[pad] * 4, group=group)
    if relu:
        y = g.node("Relu", [y], name + "_relu")
    return y


def small():
    g = Graph(seed=21)
    x = "input"
    y = conv(g, x, 3, 16, 3, stride=2)                  # 16x16x16 stem
    y = conv(g, y, 16, 16, 3, group=16)                 # depthwise
    y = conv(g, y, 16, 24, 1)                           # pointwise
    y = conv(g, y, 24, 24, 3, stride=2, group=24)       # depthwise, strided: 24x8x8
    block_in = conv(g, y, 24, 32, 1)                    # pointwise
    # An inverted residual: expand, depthwise, project (no relu), add the block's input.
    y = conv(g, block_in, 32, 64, 1)
    y = conv(g, y, 64, 64, 3, group=64)
    y = conv(g, y, 64, 32, 1, relu=False, gain=0.5)
    y = g.node("Add", [y, block_in], g.name("residual"))
    y = g.node("GlobalAveragePool", [y], g.name("gap"))
    y = g.node("Flatten", [y], g.name("flatten"), axis=1)
    w = g.weight("fc_w", [10, 32], math.sqrt(1.0 / 32))
    b = g.weight("fc_b", [10], 0.01)
    logits = g.node("Gemm", [y, w, b], "fc", transB=1)
    probs = g.node("Softmax", [logits], "softmax", axis=-1)
    return g.model(
        "small_mobilenet",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 3, 32, 32])],
        [helper.make_tensor_value_info(logits, TensorProto.FLOAT, [1, 10]),
         helper.make_tensor_value_info(probs, TensorProto.FLOAT, [1, 10])])


def bottleneck(g, x, cin, width, stride):
    """ResNet v1.5 bottleneck: 1x1 reduce, 3x3 (carrying the stride), 1x1 expand; the shortcut
    is a strided 1x1 projection when the shape changes. The expand conv's small gain plays the
    role of a zero-initialised last batch norm, so 16 residual adds do not blow activations up."""
    cout = width * 4
    y = conv(g, x, cin, width, 1)
    y = conv(g, y, width, width, 3, stride=stride)
    y = conv(g, y, width, cout, 1, relu=False, gain=0.2)
    shortcut = x
    if stride != 1 or cin != cout:
        shortcut = conv(g, x, cin, cout, 1, stride=stride, relu=False)
    y = g.node("Add", [y, shortcut], g.name("residual"))
    return g.node("Relu", [y], g.name("residual_relu"))


def resnet(widths=(64, 128, 256, 512), blocks=(3, 4, 6, 3), image=224, classes=1000):
    g = Graph(seed=50)
    x = "input"
    y = conv(g, x, 3, widths[0], 7, stride=2)
    y = g.node("MaxPool", [y], g.name("maxpool"), kernel_shape=[3, 3], strides=[2, 2],
               pads=[1, 1, 1, 1])
    cin = widths[0]
    for stage, (width, count) in enumerate(zip(widths, blocks)):
        for i in range(count):
            y = bottleneck(g, y, cin, width, 2 if i == 0 and stage > 0 else 1)
            cin = width * 4
    y = g.node("GlobalAveragePool", [y], g.name("gap"))
    y = g.node("Flatten", [y], g.name("flatten"), axis=1)
    w = g.weight("fc_w", [classes, cin], math.sqrt(1.0 / cin))
    b = g.weight("fc_b", [classes], 0.01)
    logits = g.node("Gemm", [y, w, b], "fc", transB=1)
    return g.model(
        "resnet50_v1_5" if blocks == (3, 4, 6, 3) else "resnet_tiny",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, 3, image, image])],
        [helper.make_tensor_value_info(logits, TensorProto.FLOAT, [1, classes])])


class BertConfig:
    def __init__(self, seq=128, hidden=768, heads=12, ffn=3072, layers=12, std=0.02, dynamic=False):
        self.seq, self.hidden, self.heads, self.ffn, self.layers = seq, hidden, heads, ffn, layers
        self.std = std
        # A symbolic sequence length "seq", as an exporter with dynamic axes writes it: the
        # reshapes' targets come from the input's Shape through Gather and Concat.
        self.dynamic = dynamic


BERT_BASE = BertConfig()
# Larger weights than BERT's 0.02, so that attention is far from uniform and every part of a
# layer moves the output: a test on this model notices an error in the scores' scale.
BERT_TINY = BertConfig(seq=16, hidden=64, heads=4, ffn=128, layers=2, std=0.15)


def dense(g, x, cin, cout, prefix, std=0.02):
    w = g.weight(prefix + "_w", [cin, cout], std)  # 0.02: BERT's initializer range
    b = g.weight(prefix + "_b", [cout], std)
    y = g.node("MatMul", [x, w], prefix + "_matmul")
    return g.node("Add", [y, b], prefix + "_bias")


def layer_norm(g, x, prefix, hidden):
    gamma = g.const(prefix + "_gamma", np.ones([hidden], np.float32))
    beta = g.const(prefix + "_beta", np.zeros([hidden], np.float32))
    return g.node("LayerNormalization", [x, gamma, beta], prefix, axis=-1, epsilon=1e-12)


def gelu(g, x, prefix):
    """The exact GELU as exporters write it: 0.5 * x * (1 + erf(x / sqrt 2))."""
    half = g.const(prefix + "_half", np.array(0.5, np.float32))
    one = g.const(prefix + "_one", np.array(1.0, np.float32))
    root2 = g.const(prefix + "_sqrt2", np.array(math.sqrt(2.0), np.float32))
    y = g.node("Div", [x, root2], prefix + "_div")
    y = g.node("Erf", [y], prefix + "_erf")
    y = g.node("Add", [y, one], prefix + "_add1")
    y = g.node("Mul", [x, y], prefix + "_mul")
    return g.node("Mul", [y, half], prefix + "_half_mul")


def sequence_shape(g, x, prefix, tail):
    """[1, seq, *tail] computed from x's shape at run time, as torch.onnx writes a dynamic axis."""
    shape = g.node("Shape", [x], prefix + "_shape")
    index = g.const(prefix + "_seq_index", np.array(1, np.int64))
    seq = g.node("Gather", [shape, index], prefix + "_seq", axis=0)
    axes = g.const(prefix + "_seq_axes", np.array([0], np.int64))
    seq = g.node("Unsqueeze", [seq, axes], prefix + "_seq_1d")
    one = g.const(prefix + "_one_1d", np.array([1], np.int64))
    rest = g.const(prefix + "_tail", np.array(tail, np.int64))
    return g.node("Concat", [one, seq, rest], prefix + "_target", axis=0)


def attention(g, x, prefix, c):
    head = c.hidden // c.heads
    if c.dynamic:
        split = sequence_shape(g, x, prefix + "_split", [c.heads, head])
        merge = sequence_shape(g, x, prefix + "_merge", [c.hidden])
    else:
        split = g.const(prefix + "_split", np.array([1, c.seq, c.heads, head], np.int64))
        merge = g.const(prefix + "_merge", np.array([1, c.seq, c.hidden], np.int64))
    scale = g.const(prefix + "_scale", np.array(1.0 / math.sqrt(head), np.float32))

    def heads(name, perm):
        y = dense(g, x, c.hidden, c.hidden, prefix + "_" + name, c.std)
        y = g.node("Reshape", [y, split], prefix + "_" + name + "_split")
        return g.node("Transpose", [y], prefix + "_" + name + "_heads", perm=perm)

    q = heads("query", [0, 2, 1, 3])   # [1, 12, 128, 64]
    k = heads("key", [0, 2, 3, 1])     # [1, 12, 64, 128]
    v = heads("value", [0, 2, 1, 3])   # [1, 12, 128, 64]
    s = g.node("MatMul", [q, k], prefix + "_scores")
    s = g.node("Mul", [s, scale], prefix + "_scaled")
    p = g.node("Softmax", [s], prefix + "_probs", axis=-1)
    ctx = g.node("MatMul", [p, v], prefix + "_context")
    ctx = g.node("Transpose", [ctx], prefix + "_context_tokens", perm=[0, 2, 1, 3])
    ctx = g.node("Reshape", [ctx, merge], prefix + "_context_merge")
    return dense(g, ctx, c.hidden, c.hidden, prefix + "_output", c.std)


def encoder_layer(g, x, i, c):
    prefix = "layer%d" % i
    a = attention(g, x, prefix + "_attention", c)
    x = layer_norm(g, g.node("Add", [a, x], prefix + "_attention_residual"), prefix + "_ln1",
                   c.hidden)
    h = dense(g, x, c.hidden, c.ffn, prefix + "_ffn_in", c.std)
    h = gelu(g, h, prefix + "_gelu")
    h = dense(g, h, c.ffn, c.hidden, prefix + "_ffn_out", c.std)
    return layer_norm(g, g.node("Add", [h, x], prefix + "_ffn_residual"), prefix + "_ln2",
                      c.hidden)


def bert(c=BERT_BASE):
    g = Graph(seed=768)
    x = "embeddings"
    y = layer_norm(g, x, "embeddings_ln", c.hidden)
    for i in range(c.layers):
        y = encoder_layer(g, y, i, c)
    hidden = y
    # The pooler reads the first token ([CLS]).
    starts = g.const("cls_starts", np.array([0], np.int64))
    ends = g.const("cls_ends", np.array([1], np.int64))
    axes = g.const("cls_axes", np.array([1], np.int64))
    cls = g.node("Slice", [hidden, starts, ends, axes], "cls_token")
    flat = g.const("cls_shape", np.array([1, c.hidden], np.int64))
    cls = g.node("Reshape", [cls, flat], "cls_flat")
    pooled = g.node("Tanh", [dense(g, cls, c.hidden, c.hidden, "pooler", c.std)], "pooler_tanh")
    logits = dense(g, pooled, c.hidden, 2, "classifier", c.std)
    seq = "seq" if c.dynamic else c.seq
    return g.model(
        "bert_base_encoder" if c is BERT_BASE else "bert_tiny",
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [1, seq, c.hidden])],
        [helper.make_tensor_value_info(hidden, TensorProto.FLOAT, [1, seq, c.hidden]),
         helper.make_tensor_value_info(logits, TensorProto.FLOAT, [1, 2])])


MODELS = {
    "small": small,
    "resnet50": resnet,
    "bert": bert,
    # Same generators at toy sizes, for tests of the compiler's graph handling.
    "resnet_tiny": lambda: resnet(widths=(8, 16), blocks=(1, 2), image=32, classes=10),
    "bert_tiny": lambda: bert(BERT_TINY),
    # With a symbolic sequence length (`opgen compile --dim seq=LO..HI`); inputs at seq 128 / 16.
    "bert_dynamic": lambda: bert(BertConfig(dynamic=True)),
    "bert_tiny_dynamic": lambda: bert(BertConfig(seq=16, hidden=64, heads=4, ffn=128, layers=2, std=0.15,
                                                 dynamic=True)),
}
SYMBOLIC_DIMS = {"bert_dynamic": {"seq": 128}, "bert_tiny_dynamic": {"seq": 16}}


def write_inputs(model, directory, seed, symbolic=None):
    """One seeded standard-normal array per graph input, saved as .npy; a symbolic dim takes its
    value from `symbolic`."""
    os.makedirs(directory, exist_ok=True)
    rng = np.random.default_rng(seed)
    for value in model.graph.input:
        dims = [d.dim_value if d.HasField("dim_value") else symbolic[d.dim_param]
                for d in value.type.tensor_type.shape.dim]
        data = rng.standard_normal(dims).astype(np.float32)
        np.save(os.path.join(directory, value.name + ".npy"), data)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("outdir")
    parser.add_argument("--only", default="small,resnet50,bert",
                        help="comma-separated subset of: " + ", ".join(MODELS))
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        sys.exit("error: unknown model '%s' (known: %s)" % (unknown[0], ", ".join(MODELS)))
    os.makedirs(args.outdir, exist_ok=True)
    for name in names:
        start = time.monotonic()
        model = MODELS[name]()
        onnx.checker.check_model(model)
        path = os.path.join(args.outdir, name + ".onnx")
        # Write beside and rename, so an interrupted run leaves no half-written model.
        onnx.save(model, path + ".tmp")
        os.replace(path + ".tmp", path)
        write_inputs(model, os.path.join(args.outdir, name + ".inputs"), seed=1,
                     symbolic=SYMBOLIC_DIMS.get(name))
        size = os.path.getsize(path) / 2**20
        print("%s: %s (%.1f MiB, %d nodes) in %.1f s" % (
            name, path, size, len(model.graph.node), time.monotonic() - start))


if __name__ == "__main__":
    main()
