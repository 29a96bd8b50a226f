#!/usr/bin/python3
"""Builds the small ONNX models the extract tests read (Debian's python3-onnx), into OUTDIR:
cnn.onnx (symbolic batch dimension 'batch'; Conv, depthwise and grouped Conv, Relu, MaxPool,
GlobalAveragePool, Flatten, Gemm, Softmax) and transformer.onnx (MatMul, broadcast Add,
LayerNormalization, Reshape, Transpose, batched MatMul, Softmax, Erf, Mul), and relu6.onnx
(MobileNet's ReLU6 as exporters write it: Clip to [0, 6] after a convolution, its bounds as
constant inputs), with a seeded input in relu6.inputs/x.npy and numpy's output in
relu6.expected/y.npy; activations.onnx (Clip with one and with two bounds, LeakyRelu, Elu, Selu,
Celu, HardSigmoid, HardSwish, Softplus, Softsign, Reciprocal, Pow by a constant, each on the same
input), with
its input and numpy's outputs likewise; broadcast.onnx (Add, Sub, Mul, Div, Max and Min whose
operands broadcast by numpy's rules, from graph inputs and from weights), likewise; and
reductions.onnx (ReduceSum with its axes as an input, ReduceMean, ReduceMax, ReduceMin,
ReduceSumSquare, ReduceL1, ReduceL2 over various axes, with and without keepdims), likewise;
resize.onnx (nearest upsampling by whole factors from constant scales and sizes), likewise; and
refused.onnx (a strided ConvTranspose and CumSum, which the op language cannot express yet); and
exported_shapes.onnx (a symbolic batch whose shape the graph computes into a Reshape, with
exporter-made symbolic dimensions on the intermediates); integer_io.onnx (an int64 input and a
bool output); double_io.onnx (a float64 input); reshape_input.onnx (a Reshape whose shape is
a graph input); and where_const.onnx (a constant bool condition).
usage: make_onnx_models.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def init(name, shape):
    return numpy_helper.from_array(np.zeros(shape, dtype=np.float32), name)


def cnn():
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1], strides=[1, 1]),
        n("Relu", ["c1"], ["r1"], name="relu1"),
        n("Relu", ["c1"], ["r1b"], name="relu1b"),  # same shape as relu1: one manifest shape
        n("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        n("Conv", ["p1", "wdw"], ["dw"], name="dw", pads=[1, 1, 1, 1], group=16),
        n("Conv", ["p1", "wasym"], ["asym"], name="asym", pads=[0, 0, 1, 1]),
        n("Conv", ["p1", "wgroup"], ["grp"], name="grouped", group=4),
        n("Conv", ["dw", "w2"], ["c2"], name="conv2", strides=[2, 2], pads=[1, 1, 1, 1]),
        n("GlobalAveragePool", ["c2"], ["gap"], name="gap"),
        n("Flatten", ["gap"], ["flat"], name="flatten"),
        n("Gemm", ["flat", "wfc", "bfc"], ["fc"], name="fc", transB=1),
        n("Softmax", ["fc"], ["y"], name="softmax"),
    ]
    graph = helper.make_graph(
        nodes, "cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 10]),
         helper.make_tensor_value_info("r1b", TensorProto.FLOAT, ["batch", 16, 32, 32]),
         helper.make_tensor_value_info("asym", TensorProto.FLOAT, ["batch", 8, 17, 17]),
         helper.make_tensor_value_info("grp", TensorProto.FLOAT, ["batch", 8, 14, 14])],
        [init("w1", [16, 3, 3, 3]), init("wdw", [16, 1, 3, 3]), init("wasym", [8, 16, 1, 1]),
         init("wgroup", [8, 4, 3, 3]), init("w2", [32, 16, 3, 3]), init("wfc", [10, 32]), init("bfc", [10])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def refused():
    """Operators the op language cannot express: a strided transposed convolution over more input
    positions than its masked sum takes, and two cumulative sums."""
    n = helper.make_node
    nodes = [
        n("ConvTranspose", ["x", "w"], ["up"], name="up", strides=[2, 2]),
        n("CumSum", ["x", "axis"], ["s1"], name="cumsum1"),
        n("CumSum", ["s1", "axis"], ["s2"], name="cumsum2"),
    ]
    graph = helper.make_graph(
        nodes, "refused",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 40, 40])],
        [helper.make_tensor_value_info("up", TensorProto.FLOAT, [1, 4, 81, 81]),
         helper.make_tensor_value_info("s2", TensorProto.FLOAT, [1, 4, 40, 40])],
        [init("w", [4, 4, 3, 3]), numpy_helper.from_array(np.array(3, dtype=np.int64), "axis")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def double_io():
    """A float64 input: a type no kernel computes."""
    n = helper.make_node
    graph = helper.make_graph(
        [n("Cast", ["x"], ["y"], name="to_float", to=TensorProto.FLOAT)], "double_io",
        [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def where_const():
    """A constant bool condition choosing between an input and a constant: a weight of another
    type than float32."""
    n = helper.make_node
    graph = helper.make_graph(
        [n("Where", ["c", "x", "z"], ["y"], name="where")], "where_const",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        [numpy_helper.from_array(np.array([True, False, True, False]), "c"),
         numpy_helper.from_array(np.full(4, -1.0, np.float32), "z")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def reshape_input():
    """A Reshape whose target shape is a graph input, as ONNX's own test cases write it."""
    n = helper.make_node
    graph = helper.make_graph(
        [n("Reshape", ["x", "shape"], ["r"], name="reshape"), n("Relu", ["r"], ["y"], name="relu")],
        "reshape_input",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6]),
         helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["rows", "cols"])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def integer_io():
    """Token ids in, a boolean mask out: integer and bool tensors across the library's boundary."""
    n = helper.make_node
    nodes = [
        n("Cast", ["ids"], ["f"], name="to_float", to=TensorProto.FLOAT),
        n("Greater", ["f", "zero"], ["mask"], name="positive"),
    ]
    graph = helper.make_graph(
        nodes, "integer_io",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [4])],
        [helper.make_tensor_value_info("mask", TensorProto.BOOL, [4])],
        [numpy_helper.from_array(np.array(0, dtype=np.float32), "zero")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def exported_shapes():
    """A symbolic batch as exporters write it: the shape of x computed in the graph (Shape, Gather,
    Unsqueeze, Concat) feeding a Reshape, and intermediates recorded with exporter-made symbolic
    dimensions (unk__0, unk__1) that no user knows."""
    n = helper.make_node
    nodes = [
        n("Shape", ["x"], ["xs"], name="shape"),
        n("Gather", ["xs", "zero"], ["b"], name="batch", axis=0),
        n("Unsqueeze", ["b", "zero1"], ["b1"], name="unsqueeze"),
        n("Concat", ["b1", "rest"], ["target"], name="concat", axis=0),
        n("Reshape", ["x", "target"], ["flat"], name="flatten"),
        n("Relu", ["flat"], ["y"], name="relu"),
    ]
    graph = helper.make_graph(
        nodes, "exported_shapes",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["unk__1", 32])],
        [numpy_helper.from_array(np.array(0, dtype=np.int64), "zero"),
         numpy_helper.from_array(np.array([0], dtype=np.int64), "zero1"),
         numpy_helper.from_array(np.array([32], dtype=np.int64), "rest")],
        value_info=[helper.make_tensor_value_info("flat", TensorProto.FLOAT, ["unk__0", 32])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def transformer():
    n = helper.make_node
    nodes = [
        n("MatMul", ["x", "w1"], ["h"], name="proj"),
        n("Add", ["h", "b1"], ["hb"], name="bias"),
        n("LayerNormalization", ["hb", "g", "be"], ["ln"], name="ln", axis=-1),
        n("Reshape", ["ln", "shape4"], ["r"], name="split_heads"),
        n("Transpose", ["r"], ["t"], name="heads_first", perm=[0, 2, 1, 3]),
        n("MatMul", ["t", "t"], ["scores"], name="scores"),
        n("Softmax", ["scores"], ["probs"], name="probs", axis=-1),
        n("Erf", ["probs"], ["e"], name="erf"),
        n("Mul", ["e", "probs"], ["y"], name="mul"),
    ]
    shape4 = numpy_helper.from_array(np.array([1, 8, 4, 8], dtype=np.int64), "shape4")
    graph = helper.make_graph(
        nodes, "transformer",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])],
        [init("w1", [16, 32]), init("b1", [32]), init("g", [32]), init("be", [32]), shape4])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def conv_nchw(x, w, b, pad, group=1):
    """Cross-correlation of NCHW x with OIHW w (stride 1), as ONNX's Conv computes it."""
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    y = np.zeros((n, f, oh, ow), dtype=np.float64)
    per = f // group
    for o in range(f):
        g = o // per
        for ci in range(cg):
            for ry in range(kh):
                for rx in range(kw):
                    y[:, o] += w[o, ci, ry, rx] * xp[:, g * cg + ci, ry:ry + oh, rx:rx + ow]
    return y + b.reshape(1, f, 1, 1)


def relu6():
    """Conv 3x3 -> Clip(0, 6) -> depthwise 3x3 -> Clip(0, 6) -> Conv 1x1 -> Clip(0, 6), weights
    large enough that both bounds clip."""
    rng = np.random.default_rng(6)
    x = rng.normal(0, 1, (1, 16, 8, 8)).astype(np.float32)
    w1 = rng.normal(0, 0.5, (16, 16, 3, 3)).astype(np.float32)
    b1 = rng.normal(0, 1, (16,)).astype(np.float32)
    wd = rng.normal(0, 1, (16, 1, 3, 3)).astype(np.float32)
    bd = rng.normal(0, 1, (16,)).astype(np.float32)
    w2 = rng.normal(0, 0.5, (16, 16, 1, 1)).astype(np.float32)
    b2 = rng.normal(0, 1, (16,)).astype(np.float32)
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        n("Clip", ["c1", "zero", "six"], ["r1"], name="relu6_1"),
        n("Conv", ["r1", "wd", "bd"], ["c2"], name="dw", pads=[1, 1, 1, 1], group=16),
        n("Clip", ["c2", "zero", "six"], ["r2"], name="relu6_2"),
        n("Conv", ["r2", "w2", "b2"], ["c3"], name="conv2"),
        n("Clip", ["c3", "zero", "six"], ["y"], name="relu6_3"),
    ]
    weights = [numpy_helper.from_array(a, name) for name, a in
               (("w1", w1), ("b1", b1), ("wd", wd), ("bd", bd), ("w2", w2), ("b2", b2),
                ("zero", np.array(0, dtype=np.float32)), ("six", np.array(6, dtype=np.float32)))]
    graph = helper.make_graph(
        nodes, "relu6",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 8, 8])], weights)
    r1 = np.clip(conv_nchw(x, w1, b1, 1), 0, 6)
    r2 = np.clip(conv_nchw(r1, wd, bd, 1, group=16), 0, 6)
    y = np.clip(conv_nchw(r2, w2, b2, 0), 0, 6).astype(np.float32)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), {"x": x}, {"y": y}


def activations():
    """Every activation the partitioner writes as an elementwise op, each an output of its own."""
    rng = np.random.default_rng(7)
    x = (rng.normal(0, 4, (5, 37)) + 0.05).astype(np.float32)  # wide: every branch of each formula
    xd = x.astype(np.float64)
    softplus = np.log1p(np.exp(-np.abs(xd))) + np.maximum(xd, 0)
    sel_a, sel_g = 1.67326319217681884765625, 1.05070102214813232421875
    cases = [  # (name, node op, attributes, extra inputs, numpy)
        ("clip2", "Clip", {}, ["lo", "hi"], np.clip(xd, -1.5, 2.5)),
        ("clip_lo", "Clip", {}, ["lo"], np.maximum(xd, -1.5)),
        ("leaky", "LeakyRelu", {"alpha": 0.1}, [], np.where(xd > 0, xd, 0.1 * xd)),
        ("elu", "Elu", {}, [], np.where(xd > 0, xd, np.exp(xd) - 1)),
        ("selu", "Selu", {}, [], sel_g * np.where(xd > 0, xd, sel_a * (np.exp(xd) - 1))),
        ("celu", "Celu", {"alpha": 2.0}, [], np.maximum(xd, 0) + np.minimum(0, 2.0 * (np.exp(xd / 2.0) - 1))),
        ("hsig", "HardSigmoid", {}, [], np.clip(0.2 * xd + 0.5, 0, 1)),
        ("hswish", "HardSwish", {}, [], xd * np.clip(xd / 6 + 0.5, 0, 1)),
        ("softplus", "Softplus", {}, [], softplus),
        ("softsign", "Softsign", {}, [], xd / (1 + np.abs(xd))),
        ("recip", "Reciprocal", {}, [], 1 / xd),
        ("cube", "Pow", {}, ["three"], xd ** 3),
        ("inv_square", "Pow", {}, ["minus_two"], xd ** -2.0),
        ("root", "Pow", {}, ["half"], np.sqrt(np.where(xd < 0, np.nan, xd))),  # NaN below 0, as pow
    ]
    nodes, outputs, expected = [], [], {}
    for name, op, attrs, extra, want in cases:
        inputs = ["x"] + extra
        if op == "Clip" and len(extra) == 1:
            inputs = ["x", "lo", ""]
        nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(x.shape)))
        expected[name] = want.astype(np.float32)
    bounds = [numpy_helper.from_array(np.array(v, dtype=np.float32), n)
              for n, v in (("lo", -1.5), ("hi", 2.5), ("three", 3), ("minus_two", -2), ("half", 0.5))]
    graph = helper.make_graph(nodes, "activations",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))], outputs, bounds)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), {"x": x}, expected


def broadcast():
    """Binary nodes whose operands broadcast: a trailing row, a column, a middle axis stretched on
    both sides, a lower-rank operand on the left, and weights."""
    rng = np.random.default_rng(8)
    x = rng.normal(0, 2, (2, 3, 4)).astype(np.float32)
    y = (rng.uniform(0.5, 2, (3, 1)) * rng.choice([-1, 1], (3, 1))).astype(np.float32)
    z = rng.normal(0, 2, (2, 1, 4)).astype(np.float32)
    row = rng.normal(0, 2, (4,)).astype(np.float32)
    col = rng.normal(0, 2, (1, 3, 1)).astype(np.float32)
    n = helper.make_node
    cases = [  # (output, op, inputs, numpy)
        ("add_row", "Add", ["x", "row"], x + row),
        ("mul_col", "Mul", ["x", "col"], x * col),
        ("div_y", "Div", ["x", "y"], x / y),
        ("sub_z", "Sub", ["z", "x"], z - x),
        ("max_y", "Max", ["x", "y"], np.maximum(x, y)),
        ("min_yx", "Min", ["y", "x"], np.minimum(y, x)),
        ("add_yz", "Add", ["y", "z"], y + z),
    ]
    nodes = [n(op, inputs, [out], name=out) for out, op, inputs, _ in cases]
    outputs = [helper.make_tensor_value_info(out, TensorProto.FLOAT, list(want.shape)) for out, _, _, want in cases]
    inputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, list(a.shape)) for name, a in (("x", x), ("y", y), ("z", z))]
    weights = [numpy_helper.from_array(row, "row"), numpy_helper.from_array(col, "col")]
    graph = helper.make_graph(nodes, "broadcast", inputs, outputs, weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model, {"x": x, "y": y, "z": z}, {out: want.astype(np.float32) for out, _, _, want in cases}


def resize():
    """Nearest-neighbour upsampling by whole factors as exporters write it: scales as a constant
    (ONNX's default half_pixel coordinates) and sizes as a constant (PyTorch's asymmetric, floor)."""
    x = np.random.default_rng(10).normal(0, 1, (1, 2, 3, 4)).astype(np.float32)
    n = helper.make_node
    nodes = [n("Resize", ["x", "", "scales"], ["up_scales"], name="up_scales", mode="nearest"),
             n("Resize", ["x", "", "", "sizes"], ["up_sizes"], name="up_sizes", mode="nearest",
               coordinate_transformation_mode="asymmetric", nearest_mode="floor")]
    expected = {"up_scales": x.repeat(2, axis=2).repeat(3, axis=3), "up_sizes": x.repeat(3, axis=2).repeat(2, axis=3)}
    graph = helper.make_graph(
        nodes, "resize", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info(k, TensorProto.FLOAT, list(v.shape)) for k, v in expected.items()],
        [numpy_helper.from_array(np.array([1, 1, 2, 3], np.float32), "scales"),
         numpy_helper.from_array(np.array([1, 2, 9, 8], np.int64), "sizes")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), {"x": x}, expected


def reductions():
    """Reductions over single, several, negative and all axes, keeping them or not."""
    rng = np.random.default_rng(9)
    x = rng.normal(0, 2, (2, 3, 4, 5)).astype(np.float32)
    xd = x.astype(np.float64)
    cases = [  # (output, op, attributes, axes as an input, numpy)
        ("mean_last", "ReduceMean", {"axes": [-1], "keepdims": 1}, None, xd.mean(axis=3, keepdims=True)),
        ("sum_13", "ReduceSum", {"keepdims": 0}, [1, 3], xd.sum(axis=(1, 3))),
        ("max_02", "ReduceMax", {"axes": [0, 2], "keepdims": 1}, None, xd.max(axis=(0, 2), keepdims=True)),
        ("min_1", "ReduceMin", {"axes": [1], "keepdims": 0}, None, xd.min(axis=1)),
        ("sumsq_23", "ReduceSumSquare", {"axes": [2, 3]}, None, (xd * xd).sum(axis=(2, 3), keepdims=True)),
        ("l1_0", "ReduceL1", {"axes": [0], "keepdims": 0}, None, np.abs(xd).sum(axis=0)),
        ("l2_3", "ReduceL2", {"axes": [3], "keepdims": 0}, None, np.sqrt((xd * xd).sum(axis=3))),
        ("mean_all", "ReduceMean", {}, None, xd.mean(axis=(0, 1, 2, 3), keepdims=True)),
    ]
    nodes, outputs, weights = [], [], []
    for out, op, attrs, axes_input, want in cases:
        inputs = ["x"]
        if axes_input is not None:
            weights.append(numpy_helper.from_array(np.array(axes_input, dtype=np.int64), out + "_axes"))
            inputs.append(out + "_axes")
        nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        outputs.append(helper.make_tensor_value_info(out, TensorProto.FLOAT, list(want.shape)))
    graph = helper.make_graph(nodes, "reductions", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                              outputs, weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model, {"x": x}, {out: want.astype(np.float32) for out, _, _, _, want in cases}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    # Models with inputs and numpy's outputs: STEM.onnx, STEM.inputs/*.npy, STEM.expected/*.npy.
    for stem, make in (("relu6", relu6), ("activations", activations), ("broadcast", broadcast),
                       ("reductions", reductions), ("resize", resize)):
        model, ins, expected = make()
        onnx.checker.check_model(model)
        onnx.save(model, os.path.join(out, stem + ".onnx"))
        for folder, arrays in ((stem + ".inputs", ins), (stem + ".expected", expected)):
            os.makedirs(os.path.join(out, folder), exist_ok=True)
            for name, a in arrays.items():
                np.save(os.path.join(out, folder, name + ".npy"), a)
    for name, model in (("cnn", cnn()), ("transformer", transformer()), ("refused", refused()),
                        ("exported_shapes", exported_shapes()), ("integer_io", integer_io()),
                        ("double_io", double_io()), ("reshape_input", reshape_input()),
                        ("where_const", where_const())):
        onnx.checker.check_model(model)
        onnx.save(model, os.path.join(out, name + ".onnx"))


if __name__ == "__main__":
    main()
