#!/usr/bin/python3
"""Shows that `opgen compile` builds a deployable model that computes what ONNX Runtime computes:
the small MobileNet-style net with its kernels tuned into a fresh cache (a budget of
2 trials per kernel, to keep the test short), then compiled again from the warm cache (every
kernel "cached", nothing tuned); resnet_tiny and bert_tiny with Halide's heuristic points
(--no-tune), resnet_tiny also with NCHW activations (--nchw) and at 2 threads (its parallel loops
on the model's thread pool). Each library is run by `opgen run`
(its generated runner) and its outputs compared with ONNX Runtime's within 1e-4 relative.
A mismatch fails; so does an absent ONNX Runtime.
usage: deploy_test.py SOURCE_DIR ORT_DIR OPGEN"""
import json
import os
import shutil
import sys
import tempfile

from harness import PY, check, compare_outputs, ort_outputs, require_ort, run, run_library

src, ort_dir, opgen = sys.argv[1], sys.argv[2], sys.argv[3]
models = os.path.join(src, "scripts", "models")

def origins(out):
    with open(os.path.join(out, "deploy.json")) as f:
        return json.load(f)["origins"]


def timings(out):
    """Each distinct kernel's timing mode by op: "cold" (weights flushed), "hot" (no weights)."""
    with open(os.path.join(out, "deploy.json")) as f:
        return {(k["op"], k["timing"]) for k in json.load(f)["distinct_kernels"]}


def ops(out):
    with open(os.path.join(out, "deploy.json")) as f:
        return {k["op"] for k in json.load(f)["distinct_kernels"]}


def compile_model(tmp, name, out, *flags, threads=1):
    r = run(opgen, "compile", os.path.join(tmp, name + ".onnx"), "-o", out, "--threads", str(threads),
            "--db", os.path.join(tmp, "opgen.db"), *flags)
    check(r.returncode == 0, "opgen compile %s %s failed: %s" % (name, " ".join(flags), r.stderr))
    for f in ("lib%s.a" % name, name + ".h", name + ".weights", name + "-runner", "deploy.json"):
        check(os.path.exists(os.path.join(out, f)), "%s: %s was not written" % (name, f))
    return r.stdout


def run_and_compare(tmp, name, out, threads=1):
    """Runs the compiled model on the test inputs and compares every output with ORT's."""
    ort_out = os.path.join(tmp, name + ".ort")
    if not os.path.isdir(ort_out):
        error = ort_outputs(src, ort_dir, os.path.join(tmp, name + ".onnx"),
                            os.path.join(tmp, name + ".inputs"), ort_out)
        check(error is None, error)
    mine = out + ".outputs"
    r = run_library(opgen, out, os.path.join(tmp, name + ".inputs"), mine, threads=threads)
    check(r.returncode == 0, "opgen run %s failed: %s" % (name, r.stderr))
    check("latency: p50" in r.stdout and "peak RSS:" in r.stdout, "opgen run printed:\n" + r.stdout)
    # The calibration of weight read-ahead ran (10 runs) before the outputs were written.
    check("read ahead: the weights of" in r.stdout, "opgen run did not calibrate:\n" + r.stdout)
    r = compare_outputs(src, ort_out, mine)
    check(r.returncode == 0, "%s: the compiled model differs from ONNX Runtime:\n%s%s" % (
        name, r.stdout, r.stderr))
    print(name + ":", r.stdout.strip().replace("\n", "\n  "))


require_ort(ort_dir)
tmp = tempfile.mkdtemp(prefix="opgen-deploy-")
try:
    r = run(PY, os.path.join(models, "make_models.py"), tmp, "--only", "small,resnet_tiny,bert_tiny")
    check(r.returncode == 0, "make_models.py failed: %s" % r.stderr)
    tuned = os.path.join(tmp, "small.tuned")
    compile_model(tmp, "small", tuned, "--trials", "2", "--min-time", "5", "--quiet")
    # 14 distinct kernels: blocked convolutions and pools, reorders around the depthwise and
    # 24-channel convolutions, the classifier with its weight transposed.
    check(origins(tuned) == {"tuned": 14}, "small: expected 14 tuned kernels, got %s" % origins(tuned))
    want = {"conv2d_nchw_nchwc_bias_relu", "conv2d_nchwc_bias_add", "reorder_nchw_nchwc", "reorder_nchwc_nchw",
            "avg_pool2d_nchwc", "matmul_bias"}
    check(want <= ops(tuned), "small: expected blocked kernels %s, got %s" % (sorted(want), sorted(ops(tuned))))
    run_and_compare(tmp, "small", tuned)
    # Kernels with weights are tuned with them cold, as in the model; the reorders have none.
    modes = dict(timings(tuned))
    check(modes["conv2d_nchwc_bias_add"] == "cold" and modes["matmul_bias"] == "cold"
          and modes["reorder_nchw_nchwc"] == "hot", "small: expected cold convolutions and hot reorders, got %s"
          % sorted(timings(tuned)))
    warm = os.path.join(tmp, "small.warm")
    compile_model(tmp, "small", warm, "--compile-jobs", "2")
    check(origins(warm) == {"cached": 14}, "small again: expected 14 cached kernels, got %s" % origins(warm))
    run_and_compare(tmp, "small", warm)
    for name in ("resnet_tiny", "bert_tiny"):
        out = os.path.join(tmp, name + ".out")
        compile_model(tmp, name, out, "--no-tune")
        check(list(origins(out)) == ["heuristic"], "%s: expected heuristic points, got %s" % (name, origins(out)))
        run_and_compare(tmp, name, out)
    # Kernels with parallel loops, run on the model's spinning thread pool (ModelThreadPool.h).
    out = os.path.join(tmp, "resnet_tiny.t2")
    compile_model(tmp, "resnet_tiny", out, "--no-tune", threads=2)
    with open(os.path.join(out, "src", "resnet_tiny.c")) as f:
        check("model_pool_start(threads)" in f.read(), "resnet_tiny: the program does not start its pool")
    run_and_compare(tmp, "resnet_tiny", out, threads=2)
    # The row-major layouts (no channel blocking) still compute the same.
    out = os.path.join(tmp, "resnet_tiny.nchw")
    compile_model(tmp, "resnet_tiny", out, "--no-tune", "--nchw")
    check(not any("nchwc" in op for op in ops(out)), "resnet_tiny --nchw: blocked kernels %s" % sorted(ops(out)))
    run_and_compare(tmp, "resnet_tiny", out)
finally:
    shutil.rmtree(tmp, ignore_errors=True)
print("ok")
