#!/usr/bin/python3
"""Shows that `opgen compile`'s fused subgraphs compute the model: for the small
MobileNet-style net, resnet_tiny and bert_tiny, the partitioned model evaluated kernel by kernel
by the op language's reference interpreter (`opgen compile --check-with`, every bundled and
generated op at its bound shape) matches ONNX Runtime within 1e-4 relative (1e-3 would be the
issue's bar for BERT's logits; the interpreter does better). A mismatch fails; so does an absent
ONNX Runtime.
usage: compile_check_test.py SOURCE_DIR ORT_DIR OPGEN"""
import os
import shutil
import sys
import tempfile

from harness import PY, check, compare_outputs, ort_outputs, require_ort, run

src, ort_dir, opgen = sys.argv[1], sys.argv[2], sys.argv[3]
models = os.path.join(src, "scripts", "models")

require_ort(ort_dir)
tmp = tempfile.mkdtemp(prefix="opgen-compile-check-")
try:
    names = ["small", "resnet_tiny", "bert_tiny"]
    r = run(PY, os.path.join(models, "make_models.py"), tmp, "--only", ",".join(names))
    check(r.returncode == 0, "make_models.py failed: %s" % r.stderr)
    for name in names:
        model = os.path.join(tmp, name + ".onnx")
        inputs = os.path.join(tmp, name + ".inputs")
        ort_out = os.path.join(tmp, name + ".ort")
        out = os.path.join(tmp, name + ".compiled")
        error = ort_outputs(src, ort_dir, model, inputs, ort_out)
        check(error is None, error)
        r = run(opgen, "compile", model, "-o", out, "--partition-only", "--check-with", inputs)
        check(r.returncode == 0, "opgen compile %s failed: %s" % (name, r.stderr))
        r = compare_outputs(src, ort_out, os.path.join(out, "check"))
        check(r.returncode == 0, "%s: the compiled partition differs from ONNX Runtime:\n%s%s" % (
            name, r.stdout, r.stderr))
        print(name + ":", r.stdout.strip().replace("\n", "\n  "))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
