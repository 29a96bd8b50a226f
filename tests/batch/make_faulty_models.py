"""Writes broken ONNX files into a folder, one per way a model file can be bad, for
ModelFileFaultsTest: `opgen compile` must refuse each with one clear error (docs/design.md §3.1).

  truncated.onnx      a valid model cut in half
  cyclic.onnx         two nodes each reading the other's output
  unordered.onnx      a node reading a tensor that only a later node writes
  oversized.onnx      an input of 2^20 x 2^20 x 2^20 elements
  inconsistent.onnx   a convolution whose weight has the wrong number of input channels
  zero_stride.onnx    a convolution with stride 0 (libonnx's inference would divide by it)
  missing_input.onnx  a MatMul with one input
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(nodes, inputs, outputs, initializers=(), check=True):
    graph = helper.make_graph(nodes, "faulty", inputs, outputs, list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    if check:
        onnx.checker.check_model(m)
    return m


def value(name, dims):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, dims)


def conv_model(weight_dims, strides):
    w = numpy_helper.from_array(np.ones(weight_dims, dtype=np.float32), "W")
    node = helper.make_node("Conv", ["X", "W"], ["Y"], kernel_shape=[3, 3], strides=strides)
    return model([node], [value("X", [1, 4, 8, 8])], [value("Y", None)], [w], check=False)


def main(out):
    os.makedirs(out, exist_ok=True)
    good = model([helper.make_node("Relu", ["X"], ["Y"])], [value("X", [2, 3])], [value("Y", [2, 3])])
    data = good.SerializeToString()
    open(os.path.join(out, "truncated.onnx"), "wb").write(data[: len(data) // 2])

    cyclic = model([helper.make_node("Relu", ["B"], ["A"]), helper.make_node("Add", ["X", "A"], ["B"])],
                   [value("X", [2, 3])], [value("B", [2, 3])], check=False)
    onnx.save(cyclic, os.path.join(out, "cyclic.onnx"))

    unordered = model([helper.make_node("Relu", ["T"], ["Y"]), helper.make_node("Neg", ["X"], ["T"])],
                      [value("X", [2, 3])], [value("Y", [2, 3])], check=False)
    onnx.save(unordered, os.path.join(out, "unordered.onnx"))

    big = 1 << 20
    oversized = model([helper.make_node("Relu", ["X"], ["Y"])], [value("X", [big, big, big])],
                      [value("Y", [big, big, big])])
    onnx.save(oversized, os.path.join(out, "oversized.onnx"))

    onnx.save(conv_model([8, 3, 3, 3], [1, 1]), os.path.join(out, "inconsistent.onnx"))
    onnx.save(conv_model([8, 4, 3, 3], [0, 1]), os.path.join(out, "zero_stride.onnx"))

    missing = model([helper.make_node("MatMul", ["X"], ["Y"])], [value("X", [2, 3])], [value("Y", None)],
                    check=False)
    onnx.save(missing, os.path.join(out, "missing_input.onnx"))


if __name__ == "__main__":
    main(sys.argv[1])
