#!/usr/bin/python3
"""Shows that quantized models compile into int8 kernels that compute what ONNX Runtime's int8
run computes: scripts/models/quantize_models.py's QDQ and QOperator forms of bert_tiny and the
QDQ form of resnet_tiny, each compiled by `opgen compile` into one shared cache (bert_tiny_qdq tuned with
TRIALS trials a kernel, the others with Halide's heuristic points to keep CTest's time; the int8
kernels bert_tiny_qop shares with it come tuned from the cache), run by `opgen run`, and compared
with ONNX Runtime's run of the same quantized model: every output within TOLERANCE of its largest
magnitude (a requantized value may round to the neighbouring step where the two engines sum in
another order or fold the zero points at another place), and the same top-1 class for the
classifier. The fused kernels must be there (deploy.json, docs/design.md §3.2, QDQ fusion): the
dense layers as matmul_u8s8_requant, the convolutions as conv2d_nhwc_u8s8_requant on NHWC
activations (the 3-channel stem on a copy padded to 4 channels and its border), the max pool on
u8 values, the GELU and the residual Add + Relu as u8-to-u8 chains; the ResNets' NHWC region is
left by one transpose, and a QOperator conv's identity requantization is a view.
An absent ONNX Runtime fails the test.
usage: quantized_models_test.py SOURCE_DIR ORT_DIR OPGEN"""
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np

from harness import PY, check, ort_outputs, require_ort, run, run_library

src, ort_dir, opgen = sys.argv[1], sys.argv[2], sys.argv[3]
# bert_tiny_qdq first: it tunes the int8 kernels the QOperator form then finds in the cache.
MODELS = ["bert_tiny_qdq", "bert_tiny_qop", "resnet_tiny_qdq", "resnet_tiny_qop"]
TOLERANCE = 0.05
CLASSIFIERS = {"resnet_tiny": "fc_out"}
TUNED = {"bert_tiny_qdq"}
TRIALS = os.environ.get("OPGEN_QUANTIZED_TRIALS", "1")
# The fused ops each model must compile into (docs/design.md §3.2, QDQ fusion).
FUSED_OPS = {"bert_tiny_qdq": ["matmul_u8s8_requant", "qdq_div_erf_add_mul_mul"],
             "bert_tiny_qop": ["matmul_u8s8_requant"],
             "resnet_tiny_qdq": ["pad_u8_nchw_nhwc", "conv2d_nhwc_u8s8_requant", "max_pool2d_nhwc_u8",
                                 "qdq_add_relu"],
             "resnet_tiny_qop": ["pad_u8_nchw_nhwc", "conv2d_nhwc_u8s8_requant", "max_pool2d_nhwc_u8",
                                 "qdq_add_relu"]}
# At most this many kernels whose op starts so: the NHWC region (onnx/QuantizedLayout.h) is
# entered by the stem's padding kernel and left once, before the global pooling; a QOperator
# conv's output requantized with its own scale for the next conv is a view, not a kernel (the
# quantize kernels left: the image, the float residual stream's two block outputs, the classifier).
MAX_KERNELS = {"resnet_tiny_qdq": {"transpose_": 1},
               "resnet_tiny_qop": {"transpose_": 1, "quantize_": 3}}


def kernel_ops(lib, prefix):
    with open(os.path.join(lib, "graph.json")) as f:
        return [k["op"] for k in json.load(f)["kernels"] if k["op"].startswith(prefix)]


def distinct_ops(lib):
    with open(os.path.join(lib, "deploy.json")) as f:
        return {k["op"] for k in json.load(f)["distinct_kernels"]}


def compare(name, ort_out, mine):
    """None, or how opgen's outputs differ from ONNX Runtime's; also a summary line."""
    said = []
    for f in sorted(os.listdir(ort_out)):
        ref = np.load(os.path.join(ort_out, f)).astype(np.float64)
        path = os.path.join(mine, f)
        if not os.path.exists(path):
            return "no output %s" % f, ""
        got = np.load(path).astype(np.float64)
        if got.shape != ref.shape:
            return "output %s has shape %s, ONNX Runtime's %s" % (f, got.shape, ref.shape), ""
        rel = float(np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-12))
        said.append("%s %.4f" % (f[:-4], rel))
        if rel > TOLERANCE:
            return "output %s differs by %.4f of its magnitude (tolerance %g)" % (f, rel, TOLERANCE), ""
        if CLASSIFIERS.get(name) == f[:-4] and int(got.argmax()) != int(ref.argmax()):
            return "top-1 class %d, ONNX Runtime's %d" % (got.argmax(), ref.argmax()), ""
    return None, "relative differences: " + ", ".join(said)


def try_model(tmp, model):
    name = model.rsplit("_", 1)[0]
    lib = os.path.join(tmp, model + ".lib")
    start = time.monotonic()
    r = run(opgen, "compile", os.path.join(tmp, model + ".onnx"), "-o", lib, "--threads", "1",
            "--db", os.path.join(tmp, "opgen.db"), "--quiet",
            *(["--trials", TRIALS] if model in TUNED else ["--no-tune"]))
    seconds = time.monotonic() - start
    if r.returncode != 0:
        return "opgen compile failed: %s" % r.stderr.strip(), ""
    for fused in FUSED_OPS.get(model, []):
        if fused not in distinct_ops(lib):
            return "no %s kernel among %s" % (fused, sorted(distinct_ops(lib))), ""
    for prefix, most in MAX_KERNELS.get(model, {}).items():
        ops = kernel_ops(lib, prefix)
        if len(ops) > most:
            return "%d %s* kernels, at most %d expected: %s" % (len(ops), prefix, most, ops), ""
    inputs = os.path.join(tmp, model + ".inputs")
    ort_out = os.path.join(tmp, model + ".ort")
    error = ort_outputs(src, ort_dir, os.path.join(tmp, model + ".onnx"), inputs, ort_out)
    if error:
        return error, ""
    mine = os.path.join(tmp, model + ".outputs")
    r = run_library(opgen, lib, inputs, mine, iterations=1)
    if r.returncode != 0:
        return "opgen run failed: %s" % r.stderr.strip(), ""
    why, said = compare(name, ort_out, mine)
    return why, "compile %.0f s; %s" % (seconds, said)


require_ort(ort_dir)
tmp = tempfile.mkdtemp(prefix="opgen-quantized-")
os.environ["OPGEN_OBJECT_CACHE"] = os.path.join(tmp, "objects")
failed = []
try:
    r = run(PY, os.path.join(src, "scripts", "models", "quantize_models.py"), tmp, "--only",
            "resnet_tiny,bert_tiny")
    check(r.returncode == 0, "quantize_models.py failed: %s" % r.stderr)
    for model in MODELS:
        why, said = try_model(tmp, model)
        print("%s: %s" % (model, "ok: " + said if why is None else "FAIL: " + why), flush=True)
        if why is not None:
            failed.append(model)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
check(not failed, "%d of %d quantized models do not compile or match ONNX Runtime's int8 run: %s" % (
    len(failed), len(MODELS), ", ".join(failed)))
print("ok")
