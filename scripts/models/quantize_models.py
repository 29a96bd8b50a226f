#!/usr/bin/python3
"""Quantizes the generated test models (scripts/models/make_models.py) to int8, as ONNX
Runtime's static quantizer would, in both of ONNX's quantized formats:

  NAME_qdq.onnx  QDQ: QuantizeLinear/DequantizeLinear pairs around the float operators. Every
                 Conv, Gemm and MatMul with a constant weight reads its activation through a
                 u8 Q/DQ pair and its weight as s8 through a DequantizeLinear (per output
                 channel, symmetric); a Conv's or Gemm's bias is int32 at scale sx*sw; the
                 operator's output (after its bias Add and a sole Relu) gets a Q/DQ pair too,
                 and every reader of such a tensor reads it dequantized.
  NAME_qop.onnx  QOperator: the same operators as QLinearConv / QLinearMatMul between a
                 QuantizeLinear of the input and a DequantizeLinear of the output (a sole Relu
                 folded into the output's range, a MatMul's bias Add kept in float).

Weights: per output channel, symmetric int8 (scale max|w| / 127, zero point 0). Activations:
per tensor, asymmetric uint8 over the range (widened to hold 0) that a float64 run of
scripts/models/numpy_reference.py sees on the calibration inputs: CALIBRATION seeded standard
normal inputs (seeds 100..), not the test input. Deterministic, nothing downloaded.

Writes OUTDIR/NAME.onnx (the float model), OUTDIR/NAME_qdq.onnx, OUTDIR/NAME_qop.onnx and the
test inputs OUTDIR/NAME.inputs/, OUTDIR/NAME_qdq.inputs/ and OUTDIR/NAME_qop.inputs/ (the same
seed-1 arrays make_models.py writes).

usage: quantize_models.py OUTDIR [--only NAME[,NAME...]] [--calibration N]
  NAME: small, resnet_tiny, bert_tiny, resnet50, bert   (default: resnet50,bert)
"""
import argparse
import os
import shutil
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_models  # noqa: E402
import numpy_reference  # noqa: E402

QUANTIZED = ("Conv", "Gemm", "MatMul")
NAMES = ("small", "resnet_tiny", "bert_tiny", "resnet50", "bert")


def all_values(model, feeds):
    """Every tensor of a float64 run of numpy_reference's operators: {name: array}."""
    values = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    values = {k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in values.items()}
    values.update({k: v.astype(np.float64) for k, v in feeds.items()})
    for node in model.graph.node:
        args = [values[name] if name else None for name in node.input]
        values[node.output[0]] = numpy_reference.OPS[node.op_type](node, *args)
    return values


def calibrate(model, count):
    """{tensor: (min, max)} over `count` seeded standard-normal inputs, each range holding 0."""
    ranges = {}
    for i in range(count):
        rng = np.random.default_rng(100 + i)
        feeds = {}
        for value in model.graph.input:
            dims = [d.dim_value for d in value.type.tensor_type.shape.dim]
            feeds[value.name] = rng.standard_normal(dims)
        for name, v in all_values(model, feeds).items():
            if not isinstance(v, np.ndarray) or v.dtype != np.float64:
                continue
            lo, hi = min(float(v.min()), 0.0), max(float(v.max()), 0.0)
            old = ranges.get(name, (lo, hi))
            ranges[name] = (min(lo, old[0]), max(hi, old[1]))
    return ranges


def u8_params(lo, hi):
    """The per-tensor u8 scale and zero point of the range [lo, hi] (which holds 0)."""
    scale = max(hi - lo, 1e-8) / 255.0
    zero = int(np.clip(np.round(-lo / scale), 0, 255))
    return np.float32(scale), np.uint8(zero)


def s8_per_channel(w, axis):
    """Symmetric int8 weights per index of `axis`: (int8 weights, float32 scales)."""
    other = tuple(a for a in range(w.ndim) if a != axis)
    amax = np.abs(w).max(axis=other)
    scale = (np.maximum(amax, 1e-8) / 127.0).astype(np.float32)
    shape = [1] * w.ndim
    shape[axis] = -1
    q = np.clip(np.round(w / scale.reshape(shape)), -127, 127).astype(np.int8)
    return q, scale


class Model:
    """The float model's graph, with lookups the rewrites need."""

    def __init__(self, model):
        self.model = model
        self.inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
        self.consumers = {}
        for node in model.graph.node:
            for name in node.input:
                self.consumers.setdefault(name, []).append(node)
        self.outputs = {o.name for o in model.graph.output}

    def sole_consumer(self, tensor, op_type):
        users = self.consumers.get(tensor, [])
        if len(users) == 1 and users[0].op_type == op_type and tensor not in self.outputs:
            return users[0]
        return None

    def quantized_nodes(self):
        """The Conv, Gemm and MatMul nodes whose weight (input 1) is an initializer."""
        return [n for n in self.model.graph.node
                if n.op_type in QUANTIZED and n.input[1] in self.inits and
                not (n.op_type == "Gemm" and attrs(n).get("transA", 0))]

    def bias_add(self, node):
        """A MatMul's sole consumer Add of a 1-D initializer (its bias), or None."""
        add = self.sole_consumer(node.output[0], "Add") if node.op_type == "MatMul" else None
        if add is None:
            return None
        other = add.input[1] if add.input[0] == node.output[0] else add.input[0]
        return add if other in self.inits and self.inits[other].ndim == 1 else None

    def output_point(self, node):
        """The tensor where a quantized node's result is quantized: after its bias Add (MatMul)
        and a sole Relu."""
        out = node.output[0]
        add = self.bias_add(node)
        if add is not None:
            out = add.output[0]
        relu = self.sole_consumer(out, "Relu")
        return relu.output[0] if relu is not None else out


def attrs(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def weight_axis(node):
    """The axis of a weight's output channels: Conv [F, C, KH, KW] and Gemm transB [N, K]: 0;
    MatMul and Gemm [K, N]: 1."""
    if node.op_type == "Conv" or (node.op_type == "Gemm" and attrs(node).get("transB", 0)):
        return 0
    return 1


class Builder:
    """New nodes and initializers, named after the tensors they serve."""

    def __init__(self, ranges):
        self.ranges = ranges
        self.nodes = []
        self.inits = []
        self.quantized = {}  # float tensor -> (u8 tensor, scale name, zero point name)

    def const(self, name, array):
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def quantize(self, tensor):
        """tensor's u8 QuantizeLinear (once per tensor): (q, scale, zero point names)."""
        if tensor not in self.quantized:
            scale, zero = u8_params(*self.ranges[tensor])
            s = self.const(tensor + "_scale", scale)
            z = self.const(tensor + "_zero_point", zero)
            q = tensor + "_quantized"
            self.nodes.append(helper.make_node("QuantizeLinear", [tensor, s, z], [q], name=q))
            self.quantized[tensor] = (q, s, z)
        return self.quantized[tensor]

    def dequantize(self, q, s, z, out, axis=None):
        extra = {} if axis is None else {"axis": axis}
        self.nodes.append(helper.make_node("DequantizeLinear", [q, s, z], [out], name=out, **extra))
        return out

    def weight(self, name, w, axis):
        """s8 weights per channel: (q, scale, zero point names) and the float scales."""
        q, scale = s8_per_channel(w, axis)
        return (self.const(name + "_quantized", q), self.const(name + "_scale", scale),
                self.const(name + "_zero_point", np.zeros(scale.shape, np.int8))), scale

    def bias(self, name, b, input_scale, weight_scale):
        """An int32 bias at scale sx * sw per channel."""
        scale = (np.float32(input_scale) * weight_scale).astype(np.float32)
        q = np.round(b / scale).astype(np.int32)
        return (self.const(name + "_quantized", q), self.const(name + "_scale", scale),
                self.const(name + "_zero_point", np.zeros(scale.shape, np.int32))), scale


def qdq_model(m, ranges):
    """The QDQ form: every quantized node's activation input and output point is written through
    a Q/DQ pair (all its readers read the DQ; each quantized node its own copy of it), its s8
    weight and int32 bias through DequantizeLinear."""
    b = Builder(ranges)
    rename = {}  # float tensor -> its dequantized copy, for every other reader
    targets = m.quantized_nodes()
    points = {n.input[0] for n in targets} | {m.output_point(n) for n in targets}

    def pair(t):
        q, s, z = b.quantize(t)
        rename[t] = b.dequantize(q, s, z, t + "_dq")

    for value in m.model.graph.input:
        if value.name in points:
            pair(value.name)
    ids = {id(n) for n in targets}
    for node in m.model.graph.node:
        new = onnx.NodeProto()
        new.CopyFrom(node)
        new.input[:] = [rename.get(i, i) for i in new.input]
        if id(node) in ids:
            x = node.input[0]
            q, s, z = b.quantize(x)
            new.input[0] = b.dequantize(q, s, z, x + "_dq_" + node.name)
            axis = weight_axis(node)
            (wq, ws, wz), wscale = b.weight(node.input[1], m.inits[node.input[1]], axis)
            new.input[1] = b.dequantize(wq, ws, wz, node.input[1] + "_dq", axis)
            if len(node.input) > 2 and node.input[2]:
                xscale, _ = u8_params(*ranges[x])
                (bq, bs, bz), _ = b.bias(node.input[2], m.inits[node.input[2]], xscale, wscale)
                new.input[2] = b.dequantize(bq, bs, bz, node.input[2] + "_dq", 0)
        b.nodes.append(new)
        for out in node.output:
            if out in points:
                pair(out)
    return finish(m, b, "qdq")


def qop_node(m, b, node, skipped):
    """One quantized node in QOperator form: QuantizeLinear(x) -> QLinearConv / QLinearMatMul
    -> DequantizeLinear to the node's output point (a sole Relu folded into the range)."""
    x = node.input[0]
    xq, xs, xz = b.quantize(x)
    point = m.output_point(node)
    out = node.output[0]
    relu = m.sole_consumer(out, "Relu")
    if node.op_type == "Conv" and relu is not None:
        skipped.add(id(relu))
        out = relu.output[0]
    elif node.op_type != "Conv":
        point = out  # the MatMul's own result; its bias Add and Relu stay float
    ys, yz = u8_params(*b.ranges[point])
    ys_name = b.const(node.name + "_y_scale", ys)
    yz_name = b.const(node.name + "_y_zero_point", yz)
    yq = node.name + "_quantized_out"
    w = m.inits[node.input[1]]
    if node.op_type == "Conv":
        (wq, ws, wz), wscale = b.weight(node.input[1], w, 0)
        inputs = [xq, xs, xz, wq, ws, wz, ys_name, yz_name]
        if len(node.input) > 2 and node.input[2]:
            xscale, _ = u8_params(*b.ranges[x])
            inputs.append(b.const(node.input[2] + "_int32",
                                  np.round(m.inits[node.input[2]] / (xscale * wscale)).astype(np.int32)))
        b.nodes.append(helper.make_node("QLinearConv", inputs, [yq], name=yq, **attrs(node)))
        b.dequantize(yq, ys_name, yz_name, out)
        return
    a = attrs(node)
    if node.op_type == "Gemm" and a.get("transB", 0):
        w = w.T
    (wq, ws, wz), _ = b.weight(node.input[1] + "_kn", np.ascontiguousarray(w), 1)
    b.nodes.append(helper.make_node("QLinearMatMul", [xq, xs, xz, wq, ws, wz, ys_name, yz_name],
                                    [yq], name=yq))
    if node.op_type == "Gemm" and len(node.input) > 2 and node.input[2]:
        mm = b.dequantize(yq, ys_name, yz_name, node.name + "_matmul_out")
        b.nodes.append(helper.make_node("Add", [mm, node.input[2]], [out], name=node.name + "_bias"))
    else:
        b.dequantize(yq, ys_name, yz_name, out)


def qop_model(m, ranges):
    b = Builder(ranges)
    targets = {id(n) for n in m.quantized_nodes()}
    skipped = set()
    for node in m.model.graph.node:
        if id(node) in skipped:
            continue
        if id(node) in targets:
            qop_node(m, b, node, skipped)
            continue
        new = onnx.NodeProto()
        new.CopyFrom(node)
        b.nodes.append(new)
    return finish(m, b, "qop")


def pruned(nodes, outputs):
    """`nodes` without the DequantizeLinear nodes nothing reads (a Q/DQ pair's DQ where every
    reader has its own copy)."""
    read = {i for n in nodes for i in n.input} | set(outputs)
    return [n for n in nodes if n.op_type != "DequantizeLinear" or n.output[0] in read]


def finish(m, b, form):
    """The new model: the rewritten nodes, the weights still read in float and the new ones."""
    b.nodes = pruned(b.nodes, [o.name for o in m.model.graph.output])
    used = {i for n in b.nodes for i in n.input}
    inits = [i for i in m.model.graph.initializer if i.name in used] + b.inits
    g = m.model.graph
    graph = helper.make_graph(b.nodes, g.name + "_" + form, list(g.input), list(g.output), inits)
    model = helper.make_model(graph, opset_imports=list(m.model.opset_import))
    model.producer_name = "opgen scripts/models/quantize_models.py"
    onnx.checker.check_model(model)
    return model


def save(model, path):
    onnx.save(model, path + ".tmp")
    os.replace(path + ".tmp", path)  # no half-written model after an interruption


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("outdir")
    parser.add_argument("--only", default="resnet50,bert", help="comma-separated subset of: " + ", ".join(NAMES))
    parser.add_argument("--calibration", type=int, default=2, help="calibration inputs (default 2)")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n]
    unknown = [n for n in names if n not in NAMES]
    if unknown:
        sys.exit("error: unknown model '%s' (known: %s)" % (unknown[0], ", ".join(NAMES)))
    if args.calibration < 1:
        sys.exit("error: --calibration %d must be at least 1" % args.calibration)
    os.makedirs(args.outdir, exist_ok=True)
    for name in names:
        start = time.monotonic()
        model = make_models.MODELS[name]()
        m = Model(model)
        ranges = calibrate(model, args.calibration)
        inputs = os.path.join(args.outdir, name + ".inputs")
        save(model, os.path.join(args.outdir, name + ".onnx"))
        make_models.write_inputs(model, inputs, seed=1)
        for form, build in (("qdq", qdq_model), ("qop", qop_model)):
            save(build(m, ranges), os.path.join(args.outdir, "%s_%s.onnx" % (name, form)))
            copy = os.path.join(args.outdir, "%s_%s.inputs" % (name, form))
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(inputs, copy)
        print("%s: %d quantized nodes, %s_qdq.onnx and %s_qop.onnx in %.1f s" % (
            name, len(m.quantized_nodes()), name, name, time.monotonic() - start))


if __name__ == "__main__":
    main()
