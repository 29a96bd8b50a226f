#!/usr/bin/python3
"""Proves the whole-model harness on the small MobileNet-style net: the generator
writes the same seeded model twice, ONNX Runtime (scripts/ort/run.js) runs it at 1 and 2 threads,
and its outputs match an independent numpy interpreter of the graph within 1e-4 relative. The
checks can fail: a perturbed output and a missing output are caught by the comparison tool, and
bad driver input, an unknown model name and an npm registry that cannot be reached each end in one
`error:` line. An absent ONNX Runtime is a failure, never a skip.
usage: ort_reference_test.py SOURCE_DIR ORT_DIR"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx

src, ort_dir = sys.argv[1], sys.argv[2]
models = os.path.join(src, "scripts", "models")
run_js = os.path.join(src, "scripts", "ort", "run.js")
PY = "/usr/bin/python3"  # Debian's python3-onnx is only importable by Debian's python


def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)


def run(*args, env=None):
    return subprocess.run(list(args), capture_output=True, text=True, env=env)


def last_line(result):
    lines = result.stderr.strip().splitlines()
    return lines[-1] if lines else ""


def ort_run(model, inputs, out=None, threads=1):
    args = ["node", run_js, "--model", model, "--inputs", inputs, "--ort", ort_dir,
            "--threads", str(threads), "--runs", "5", "--warmup", "1"]
    if out:
        args += ["--out", out]
    r = run(*args)
    check(r.returncode == 0, "run.js failed: %s" % r.stderr.strip())
    return json.loads(r.stdout.strip().splitlines()[-1])


check(os.path.isdir(os.path.join(ort_dir, "node_modules", "onnxruntime-node")),
      "ONNX Runtime is not installed in %s (scripts/ort-setup.sh %s failed or was not run)" %
      (ort_dir, ort_dir))

tmp = tempfile.mkdtemp(prefix="opgen-models-test-")
try:
    # The generator: seeded, so two runs write the same bytes; the net has what it claims.
    for sub in ("a", "b"):
        r = run(PY, os.path.join(models, "make_models.py"), os.path.join(tmp, sub),
                "--only", "small")
        check(r.returncode == 0, "make_models.py failed: %s" % r.stderr)
    model = os.path.join(tmp, "a", "small.onnx")
    inputs = os.path.join(tmp, "a", "small.inputs")
    with open(model, "rb") as f, open(os.path.join(tmp, "b", "small.onnx"), "rb") as g:
        check(f.read() == g.read(), "the small model differs between two generations")
    graph = onnx.load(model).graph
    depthwise = [n for n in graph.node if n.op_type == "Conv"
                 and any(a.name == "group" and a.i > 1 for a in n.attribute)]
    check(len(depthwise) >= 2, "expected depthwise convolutions, found %d" % len(depthwise))
    check(any(n.op_type == "Add" for n in graph.node), "expected a residual Add")
    dims = [d.dim_value for d in graph.input[0].type.tensor_type.shape.dim]
    check(dims == [1, 3, 32, 32], "input shape %s" % dims)

    # ONNX Runtime at 1 and 2 intra-op threads, against the numpy interpreter.
    reference = os.path.join(tmp, "ref")
    r = run(PY, os.path.join(models, "numpy_reference.py"), model, inputs, reference)
    check(r.returncode == 0, "numpy_reference.py failed: %s" % r.stderr)
    for threads in (1, 2):
        out = os.path.join(tmp, "ort%d" % threads)
        stats = ort_run(model, inputs, out, threads)
        check(stats["threads"] == threads and stats["runs"] == 5, "stats %s" % stats)
        check(stats["median_ms"] > 0 and stats["min_ms"] <= stats["median_ms"] <= stats["max_ms"],
              "latency figures inconsistent: %s" % stats)
        check(stats["peak_rss_mib"] > stats["node_start_rss_mib"] > 0, "memory %s" % stats)
        check(stats["cpu_ms_per_run"] > 0, "cpu time %s" % stats)
        r = run(PY, os.path.join(models, "compare_outputs.py"), reference, out, "--rtol", "1e-4")
        check(r.returncode == 0, "ORT (%d threads) differs from numpy:\n%s%s" % (
            threads, r.stdout, r.stderr))
        print(r.stdout.strip())
        probs = np.load(os.path.join(out, "softmax_out.npy"))
        check(probs.shape == (1, 10) and abs(probs.sum() - 1.0) < 1e-5, "softmax %s" % probs)
        logits = np.load(os.path.join(out, "fc_out.npy"))
        check(np.abs(logits).max() > 0.1, "logits are all near zero: %s" % logits)

    # The comparison can fail: a perturbation of 1e-3 of the output's scale, a missing output.
    bad = os.path.join(tmp, "bad")
    shutil.copytree(os.path.join(tmp, "ort1"), bad)
    logits = np.load(os.path.join(bad, "fc_out.npy"))
    logits[0, 3] += 1e-3 * np.abs(logits).max()
    np.save(os.path.join(bad, "fc_out.npy"), logits)
    r = run(PY, os.path.join(models, "compare_outputs.py"), reference, bad, "--rtol", "1e-4")
    check(r.returncode == 1 and last_line(r).startswith("error: output 'fc_out' differs"),
          "perturbed output not caught: %s %s" % (r.stdout, r.stderr))
    os.remove(os.path.join(bad, "softmax_out.npy"))
    r = run(PY, os.path.join(models, "compare_outputs.py"), reference, bad)
    check(r.returncode == 1 and "output 'softmax_out' missing" in last_line(r),
          "missing output not caught: %s" % r.stderr)

    # Bad input to the driver and the generator: one `error:` line, exit 1.
    np.save(os.path.join(tmp, "input.npy"), np.zeros([1, 3, 32, 32], np.float64))
    r = run("node", run_js, "--model", model, "--input", "input=" + os.path.join(tmp, "input.npy"),
            "--ort", ort_dir)
    check(r.returncode == 1 and last_line(r).startswith("error: input '") and
          "expected float32" in last_line(r), "float64 input: %s" % r.stderr)
    r = run("node", run_js, "--model", model, "--inputs", inputs, "--ort",
            os.path.join(tmp, "no-ort"))
    check(r.returncode == 1 and last_line(r).startswith("error: ONNX Runtime not found"),
          "missing ORT: %s" % r.stderr)
    r = run("node", run_js, "--model", model, "--inputs", inputs, "--threads", "0")
    check(r.returncode == 1 and "--threads '0' must be an integer >= 1" in last_line(r),
          "threads 0: %s" % r.stderr)
    r = run(PY, os.path.join(models, "make_models.py"), tmp, "--only", "vgg")
    check(r.returncode == 1 and last_line(r).startswith("error: unknown model 'vgg'"),
          "unknown model: %s" % r.stderr)

    # ort-setup.sh when the registry cannot be reached (an empty npm cache, a closed port).
    env = dict(os.environ, npm_config_registry="http://127.0.0.1:9/",
               npm_config_cache=os.path.join(tmp, "npm-cache"), npm_config_fetch_retries="0")
    r = run(os.path.join(src, "scripts", "ort-setup.sh"), os.path.join(tmp, "ort-offline"),
            env=env)
    check(r.returncode == 1 and
          last_line(r).startswith("error: npm could not install onnxruntime-node"),
          "unreachable registry: rc %d, %s" % (r.returncode, r.stderr))
    print("ort-setup offline:", last_line(r))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
