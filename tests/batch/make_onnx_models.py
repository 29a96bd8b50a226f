#!/usr/bin/python3
"""Builds the small ONNX models the extract tests read (Debian's python3-onnx), into OUTDIR:
cnn.onnx (symbolic batch dimension 'batch'; Conv, depthwise and grouped Conv, Relu, MaxPool,
GlobalAveragePool, Flatten, Gemm, Softmax) and transformer.onnx (MatMul, broadcast Add,
LayerNormalization, Reshape, Transpose, batched MatMul, Softmax, Erf, Mul).
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


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, model in (("cnn", cnn()), ("transformer", transformer())):
        onnx.checker.check_model(model)
        onnx.save(model, os.path.join(out, name + ".onnx"))


if __name__ == "__main__":
    main()
