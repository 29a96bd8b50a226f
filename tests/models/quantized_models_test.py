#!/usr/bin/python3
"""Shows that quantized models compile into int8 kernels that compute what ONNX Runtime's int8
run computes: scripts/models/quantize_models.py's QDQ and QOperator forms of the small
MobileNet-style net, resnet_tiny and bert_tiny, each compiled by `opgen compile` (2 trials a
kernel, one shared cache), run by `opgen run`, and compared with ONNX Runtime's run of the same
quantized model: every output within TOLERANCE of its largest magnitude (a requantized value may
round to the neighbouring step where the two engines sum in another order or fold the zero
points at another place), and the same top-1 class for the classifiers. The QDQ dense layers
must have become the tuned int8 kernel (matmul_u8s8_requant in deploy.json, docs/design.md
§3.2, QDQ fusion). An absent ONNX Runtime fails the test.
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
NAMES = ["small", "resnet_tiny", "bert_tiny"]
FORMS = ["qdq", "qop"]
TOLERANCE = 0.05
CLASSIFIERS = {"small": "fc_out", "resnet_tiny": "fc_out"}
# The int8 op a form's dense layers must compile into (docs/design.md §3.2, QDQ fusion).
FUSED_OPS = {"qdq": "matmul_u8s8_requant"}


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


def try_model(tmp, name, form):
    model = "%s_%s" % (name, form)
    lib = os.path.join(tmp, model + ".lib")
    start = time.monotonic()
    r = run(opgen, "compile", os.path.join(tmp, model + ".onnx"), "-o", lib, "--threads", "1",
            "--db", os.path.join(tmp, "opgen.db"), "--trials", "2", "--quiet")
    seconds = time.monotonic() - start
    if r.returncode != 0:
        return "opgen compile failed: %s" % r.stderr.strip(), ""
    fused = FUSED_OPS.get(form)
    if fused and fused not in distinct_ops(lib):
        return "no %s kernel among %s" % (fused, sorted(distinct_ops(lib))), ""
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
            ",".join(NAMES))
    check(r.returncode == 0, "quantize_models.py failed: %s" % r.stderr)
    for name in NAMES:
        for form in FORMS:
            why, said = try_model(tmp, name, form)
            print("%s_%s: %s" % (name, form, "ok: " + said if why is None else "FAIL: " + why), flush=True)
            if why is not None:
                failed.append("%s_%s" % (name, form))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
check(not failed, "%d of %d quantized models do not compile or match ONNX Runtime's int8 run: %s" % (
    len(failed), len(NAMES) * len(FORMS), ", ".join(failed)))
print("ok")
