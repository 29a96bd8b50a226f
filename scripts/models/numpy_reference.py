#!/usr/bin/python3
"""An independent reference for the whole-model tests: interprets an ONNX graph with
plain numpy in float64, op by op, straight from the ONNX operator definitions. It shares no code
with ONNX Runtime, so agreement between the two checks the test harness itself (the model files,
the input and output files, the driver). Slow and simple on purpose.

Supported operators: Conv (groups, strides, pads), Relu, Add, Sub, Mul, Div, Erf, Tanh, MaxPool,
GlobalAveragePool, Flatten, Gemm, MatMul, Softmax, Reshape, Transpose, LayerNormalization, Slice.
Any other operator is an error naming it.

usage: numpy_reference.py MODEL.onnx INPUTS_DIR OUT_DIR
  reads INPUTS_DIR/<input name>.npy, writes OUT_DIR/<output name>.npy (float32)
"""
import math
import os
import sys

import numpy as np
import onnx
from numpy.lib.stride_tricks import sliding_window_view
from onnx import helper, numpy_helper


class ReferenceError(Exception):
    pass


def attrs_of(node):
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def windows(x, kernel, strides, pads, fill):
    """[N, C, OH, OW, KH, KW] views of x padded by pads (top, left, bottom, right)."""
    padded = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])),
                    constant_values=fill)
    view = sliding_window_view(padded, tuple(kernel), axis=(2, 3))
    return view[:, :, ::strides[0], ::strides[1]]


def conv(node, x, w, b=None):
    a = attrs_of(node)
    if any(d != 1 for d in a.get("dilations", [1, 1])):
        raise ReferenceError("Conv '%s': dilations are not supported" % node.name)
    group = a.get("group", 1)
    n, c = x.shape[:2]
    m, cg, kh, kw = w.shape
    win = windows(x, (kh, kw), a.get("strides", [1, 1]), a.get("pads", [0, 0, 0, 0]), 0.0)
    oh, ow = win.shape[2:4]
    win = win.reshape(n, group, c // group, oh, ow, kh, kw)
    wg = w.reshape(group, m // group, cg, kh, kw)
    y = np.einsum("ngchwij,gmcij->ngmhw", win, wg, optimize=True).reshape(n, m, oh, ow)
    if b is not None:
        y = y + b.reshape(1, m, 1, 1)
    return y


def max_pool(node, x):
    a = attrs_of(node)
    win = windows(x, a["kernel_shape"], a.get("strides", [1, 1]), a.get("pads", [0, 0, 0, 0]),
                  -np.inf)
    return win.max(axis=(4, 5))


def gemm(node, a_, b_, c_=None):
    a = attrs_of(node)
    if a.get("transA", 0):
        a_ = a_.T
    if a.get("transB", 0):
        b_ = b_.T
    y = a.get("alpha", 1.0) * (a_ @ b_)
    if c_ is not None:
        y = y + a.get("beta", 1.0) * c_
    return y


def softmax(node, x):
    axis = attrs_of(node).get("axis", -1)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def layer_norm(node, x, scale, bias=None):
    a = attrs_of(node)
    axis = a.get("axis", -1) % x.ndim
    axes = tuple(range(axis, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + a.get("epsilon", 1e-5)) * scale
    return y if bias is None else y + bias


def reshape(node, x, shape):
    shape = [int(s) for s in shape]
    shape = [x.shape[i] if s == 0 else s for i, s in enumerate(shape)]
    return x.reshape(shape)


def slice_(node, x, starts, ends, axes=None, steps=None):
    axes = range(len(starts)) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    index = [slice(None)] * x.ndim
    for s, e, ax, st in zip(starts, ends, axes, steps):
        index[int(ax)] = slice(int(s), int(e), int(st))
    return x[tuple(index)]


def flatten(node, x):
    axis = attrs_of(node).get("axis", 1)
    return x.reshape(int(np.prod(x.shape[:axis])), -1)


OPS = {
    "Conv": conv,
    "Relu": lambda node, x: np.maximum(x, 0.0),
    "Add": lambda node, a, b: a + b,
    "Sub": lambda node, a, b: a - b,
    "Mul": lambda node, a, b: a * b,
    "Div": lambda node, a, b: a / b,
    "Erf": lambda node, x: np.vectorize(math.erf)(x),
    "Tanh": lambda node, x: np.tanh(x),
    "MaxPool": max_pool,
    "GlobalAveragePool": lambda node, x: x.mean(axis=(2, 3), keepdims=True),
    "Flatten": flatten,
    "Gemm": gemm,
    "MatMul": lambda node, a, b: np.matmul(a, b),
    "Softmax": softmax,
    "Reshape": reshape,
    "Transpose": lambda node, x: np.transpose(x, attrs_of(node).get("perm")),
    "LayerNormalization": layer_norm,
    "Slice": slice_,
}


def run(model, feeds):
    """Evaluates the graph in node order (ONNX requires a topological order) and returns
    {output name: float64 array}. Raises ReferenceError on an operator it does not know."""
    values = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    values = {k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in values.items()}
    values.update({k: v.astype(np.float64) for k, v in feeds.items()})
    unknown = sorted({n.op_type for n in model.graph.node if n.op_type not in OPS})
    if unknown:
        raise ReferenceError("unsupported operators: " + ", ".join(unknown))
    for node in model.graph.node:
        args = [values[name] if name else None for name in node.input]
        values[node.output[0]] = OPS[node.op_type](node, *args)
    return {o.name: values[o.name] for o in model.graph.output}


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: numpy_reference.py MODEL.onnx INPUTS_DIR OUT_DIR")
    model_path, inputs_dir, out_dir = sys.argv[1:]
    model = onnx.load(model_path)
    feeds = {}
    for value in model.graph.input:
        path = os.path.join(inputs_dir, value.name + ".npy")
        if not os.path.exists(path):
            sys.exit("error: no input file '%s' for model input '%s'" % (path, value.name))
        feeds[value.name] = np.load(path)
    try:
        outputs = run(model, feeds)
    except ReferenceError as e:
        sys.exit("error: %s: %s" % (model_path, e))
    os.makedirs(out_dir, exist_ok=True)
    for name, array in outputs.items():
        np.save(os.path.join(out_dir, name + ".npy"), array.astype(np.float32))


if __name__ == "__main__":
    main()
