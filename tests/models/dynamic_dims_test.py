#!/usr/bin/python3
"""Shows that `opgen compile --dim seq=LO..HI` builds one library that takes the sequence length
at call time (docs/design.md §3.6): bert_tiny with a symbolic "seq" (reshape targets computed by
Shape/Gather/Concat, as exporters write them) compiled once for seq=1..48, specialized at 16, is
run at 1, 16, 23 and 48 and compared with ONNX Runtime at each (1e-4 of each output's magnitude);
the runner must say that 16 and 48 ran the specialized kernels and 1 and 23 the shape-generic
ones. MobileNetV2 as an exporter writes it (scripts/models/exporter_models.py), compiled for
batch=1..3, is compared the same way at 1 (generic channel-blocked convolutions) and 3. A length outside the range, malformed ranges, and a model whose sizes are not affine in the
range (a stride-2 pool) each end with one `error:` line naming the problem and write nothing.
Kernels get Halide's heuristic schedules (--no-tune): the library's dispatch and shapes are what
is tested here; scripts/bench/dynamic-dims.sh times tuned ones.
usage: dynamic_dims_test.py SOURCE_DIR ORT_DIR OPGEN"""
import json
import os
import shutil
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper

from harness import PY, check, compare_outputs, ort_outputs, require_ort, run, run_library

src, ort_dir, opgen = sys.argv[1], sys.argv[2], sys.argv[3]
require_ort(ort_dir)
work = tempfile.mkdtemp(prefix="opgen-dynamic-")
MODEL = "bert_tiny_dynamic"
HIDDEN = 64


def refused(args, *wanted):
    """`opgen ARGS` must fail with one error line holding every `wanted` text."""
    r = run(opgen, *args)
    lines = [l for l in r.stderr.splitlines() if l.startswith("error:")]
    check(r.returncode != 0 and len(lines) == 1 and all(w in lines[0] for w in wanted),
          "%s: expected one error naming %s, got status %d, stderr %r" % (" ".join(args), wanted,
                                                                         r.returncode, r.stderr))


def strided_pool_model(path):
    """x [1, 4, n] -> MaxPool 2 stride 2 -> [1, 4, n / 2]: a size not affine in n."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, "n"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, None])
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2], strides=[2])
    graph = helper.make_graph([node], "pool", [x], [y])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def matches_ort(model, lib, folder, input_name, data, dim, kind):
    """The library `lib` of `model` run on `data` (input `input_name`) must say it ran `kind`
    kernels at `dim` ("seq=23") and match ONNX Runtime's outputs."""
    inputs = os.path.join(work, folder)
    os.makedirs(inputs)
    np.save(os.path.join(inputs, input_name + ".npy"), data)
    why = ort_outputs(src, ort_dir, model, inputs, inputs + ".ort")
    check(why is None, str(why))
    r = run_library(opgen, lib, inputs, inputs + ".opgen")
    check(r.returncode == 0, "opgen run of %s at %s failed: %s" % (model, dim, r.stderr))
    check("dims: %s (%s kernels)" % (dim, kind) in r.stdout,
          "%s at %s should run the %s kernels: %s" % (model, dim, kind, r.stdout))
    c = compare_outputs(src, inputs + ".ort", inputs + ".opgen")
    print("%s %s (%s):\n%s" % (os.path.basename(model), dim, kind, c.stdout.strip()))
    check(c.returncode == 0, "%s at %s differs from ONNX Runtime: %s" % (model, dim, c.stdout + c.stderr))


try:
    r = run(PY, os.path.join(src, "scripts", "models", "make_models.py"), work, "--only", MODEL)
    check(r.returncode == 0, "make_models.py failed: " + r.stderr)
    model = os.path.join(work, MODEL + ".onnx")
    lib = os.path.join(work, "lib")
    db = os.path.join(work, "opgen.db")
    r = run(opgen, "compile", model, "-o", lib, "--dim", "seq=1..48", "--specialize", "seq=16",
            "--no-tune", "--db", db)
    check(r.returncode == 0, "compile --dim seq=1..48 failed: " + r.stderr)
    check("dynamic: seq=1..48, kernels tuned at seq=16,48" in r.stdout, "compile output: " + r.stdout)

    for seq, kind in [(1, "shape-generic"), (16, "specialized"), (23, "shape-generic"), (48, "specialized")]:
        data = np.random.default_rng(seq).standard_normal((1, seq, HIDDEN)).astype(np.float32)
        matches_ort(model, lib, "in%d" % seq, "embeddings", data, "seq=%d" % seq, kind)

    # A length past the range: the runner refuses it before running.
    outside = os.path.join(work, "in49")
    os.makedirs(outside)
    np.save(os.path.join(outside, "embeddings.npy"), np.zeros((1, 49, HIDDEN), np.float32))
    r = run_library(opgen, lib, outside, outside + ".opgen")
    check(r.returncode != 0 and "error: inputs: seq=49 lies outside the library's range 1..48" in r.stderr,
          "seq 49 should be refused: status %d, %r" % (r.returncode, r.stderr))

    # A CNN as an exporter writes it, its batch symbolic (Shape/Gather/Concat before the flatten):
    # channel-blocked convolutions' generic kernels at batch 1, the top's at 3.
    r = run(PY, os.path.join(src, "scripts", "models", "exporter_models.py"), work, "--only", "mobilenetv2")
    check(r.returncode == 0, "exporter_models.py failed: " + r.stderr)
    cnn = os.path.join(work, "mobilenetv2.onnx")
    cnn_lib = os.path.join(work, "cnn")
    r = run(opgen, "compile", cnn, "-o", cnn_lib, "--dim", "batch=1..3", "--no-tune", "--db", db)
    check(r.returncode == 0, "compile --dim batch=1..3 failed: " + r.stderr)
    for batch, kind in [(1, "shape-generic"), (3, "specialized")]:
        data = np.random.default_rng(batch).standard_normal((batch, 3, 32, 32)).astype(np.float32)
        matches_ort(cnn, cnn_lib, "cnn%d" % batch, "input", data, "batch=%d" % batch, kind)

    # --partition-only writes a manifest with every specialization's kernels, for `opgen batch`.
    part = os.path.join(work, "part")
    r = run(opgen, "compile", model, "-o", part, "--dim", "seq=1..48", "--specialize", "seq=16",
            "--partition-only")
    check(r.returncode == 0, "compile --partition-only failed: " + r.stderr)
    with open(os.path.join(part, "manifest.json")) as f:
        entries = {e["op"]: e["shapes"] for e in json.load(f)["entries"]}
    check(sorted(entries.get("softmax", [])) == ["M=192,N=48", "M=64,N=16"],
          "the manifest should list softmax at seq 48 and 16: %s" % entries.get("softmax"))

    bad = os.path.join(work, "bad")
    refused(["compile", model, "-o", bad, "--dim", "seq=8..4"], "--dim seq=8..4", "1 <= LO < HI")
    refused(["compile", model, "-o", bad, "--dim", "seq=1..x"], "'x' is not a whole number")
    refused(["compile", model, "-o", bad, "--dim", "seq=1..48", "--specialize", "seq=64"], "64 lies outside 1..48")
    refused(["compile", model, "-o", bad, "--dim", "seq=1..48", "--specialize", "len=4"], "no --dim len=LO..HI")
    refused(["compile", model, "-o", bad, "--dim", "seq=16", "--dim", "other=1..4"],
            "--dim other=1..4", "no input")
    pool = os.path.join(work, "pool.onnx")
    strided_pool_model(pool)
    refused(["compile", pool, "-o", bad, "--dim", "n=4..16", "--no-tune", "--db", db], "not affine")
    check(not os.path.exists(bad), "a refused compile wrote " + bad)
    print("PASS: one library for seq=1..48 matches ONNX Runtime at 1, 16, 23 and 48; MobileNetV2 for batch=1..3 "
          "at 1 and 3")
finally:
    shutil.rmtree(work, ignore_errors=True)
