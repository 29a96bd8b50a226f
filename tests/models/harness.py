"""What the whole-model tests share: failing with one line, running a command,
Debian's python (the one python3-onnx is importable by), refusing an absent ONNX Runtime, and
the comparison of a compiled model with ONNX Runtime (its outputs, `opgen run`, the check)."""
import json
import os
import subprocess
import sys

PY = "/usr/bin/python3"


def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True)


def require_ort(ort_dir):
    check(os.path.isdir(os.path.join(ort_dir, "node_modules", "onnxruntime-node")),
          "ONNX Runtime is not installed in %s (scripts/ort-setup.sh %s failed or was not run)" %
          (ort_dir, ort_dir))


def ort_outputs(src, ort_dir, model, inputs_dir, out):
    """ONNX Runtime's outputs (scripts/ort/run.js, one run) for MODEL on every
    INPUTS_DIR/<input>.npy, written as OUT/<output>.npy; None, or why it failed."""
    r = run("node", os.path.join(src, "scripts", "ort", "run.js"), "--model", model, "--inputs",
            inputs_dir, "--out", out, "--runs", "1", "--warmup", "0", "--ort", ort_dir)
    return None if r.returncode == 0 else "run.js on %s failed: %s" % (model, r.stderr.strip())


def run_library(opgen, lib, inputs_dir, out, threads=1, iterations=3):
    """`opgen run LIB` on INPUTS_DIR/<input>.npy, given in the library's input order, writing
    every output as OUT/<output>.npy (non-finite outputs refused); returns the finished process."""
    with open(os.path.join(lib, "graph.json")) as f:
        graph = json.load(f)
    os.makedirs(out, exist_ok=True)
    args = [opgen, "run", lib, "--iterations", str(iterations), "--threads", str(threads), "--finite"]
    for i in graph["inputs"]:
        args += ["--input", os.path.join(inputs_dir, i + ".npy")]
    for o in graph["outputs"]:
        args += ["--output", os.path.join(out, o + ".npy")]
    return run(*args)


def compare_outputs(src, reference, candidate, rtol=1e-4):
    """scripts/models/compare_outputs.py: every output within rtol of the reference's largest
    magnitude; returns the finished process (one line per output on stdout)."""
    return run(PY, os.path.join(src, "scripts", "models", "compare_outputs.py"), reference,
               candidate, "--rtol", str(rtol))
