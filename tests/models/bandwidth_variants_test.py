#!/usr/bin/python3
"""Shows that `opgen compile --variants` builds bandwidth variants into a model library
(docs/design.md §7.6): bert_tiny compiled with `--variants 0.5,1` (level 0 at heuristic points,
the variants tuned with a tiny budget into a fresh cache; then softmax's level-1 variant set to
another legal schedule in the cache, so that one level surely differs, and the library compiled
again from the cache alone) must list its memory-bound kernels in deploy.json with one entry per
level, every extra entry point must be
defined in the library's archive, and the library run by `opgen run` pinned to each level
(`--level L`) must compute what ONNX Runtime computes, within 1e-4 relative, and say it ran that
level. The switching policy runs on simulated kernel times (the program's source included by a
C harness): up one level after 3 runs in a row past the next boundary, not after 2, down again
when quiet. A level the library lacks, a malformed `--variants` list and a quiet ratio not above 1 are
refused with one `error:` line. `opgen run --load 1` runs it beside opgen's streaming load.
usage: bandwidth_variants_test.py SOURCE_DIR ORT_DIR OPGEN"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

from harness import PY, check, compare_outputs, ort_outputs, require_ort, run, run_library

src, ort_dir, opgen = sys.argv[1], sys.argv[2], sys.argv[3]
models = os.path.join(src, "scripts", "models")


def one_error(r, what, needle):
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    check(r.returncode != 0, "%s: expected a refusal, got exit 0" % what)
    check(len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0],
          "%s: expected one 'error: ...%s...' line, got:\n%s" % (what, needle, r.stderr))


def defined_symbols(archive):
    r = subprocess.run(["nm", "--defined-only", archive], capture_output=True, text=True)
    check(r.returncode == 0, "nm %s failed: %s" % (archive, r.stderr))
    return {l.split()[-1] for l in r.stdout.splitlines() if len(l.split()) == 3}


HALIDE_INCLUDE = "/usr/include/halide14"

# Runs of the level policy (docs/design.md §7.6) at a contention factor each: 5 quiet; 2 heavy
# (the window is 3: no switch), 1 quiet (the streak restarts), 3 heavy (up to level 1), 3 heavy
# (up to 2: heavy is past every boundary), 6 quiet (down to 1, then 0), 4 quiet (stays at 0).
POLICY_HARNESS = r"""
#include "bert_tiny.c"

static void simulate(double factor) {
    for (int k = 0; k < bert_tiny_KERNELS; k++)
        if (bound_kernel[k]) variant_kernel_done(k, 1e-4 * (k + 1) * factor * rel_quiet[k][level]);
    variant_run_done();
    printf("%d ", level);
}

int main(void) {
    double heavy = 1.5 * boundary(2);
    double plan[] = {1, 1, 1, 1, 1, heavy, heavy, 1, heavy, heavy, heavy, heavy, heavy, heavy,
                     1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    for (unsigned i = 0; i < sizeof plan / sizeof plan[0]; i++) simulate(plan[i]);
    printf("| switches %lld\n", (long long)bert_tiny_variant_switches());
    return 0;
}
"""

require_ort(ort_dir)
tmp = tempfile.mkdtemp(prefix="opgen-variants-")
try:
    r = run(PY, os.path.join(models, "make_models.py"), tmp, "--only", "bert_tiny")
    check(r.returncode == 0, "make_models.py failed: %s" % r.stderr)
    onnx = os.path.join(tmp, "bert_tiny.onnx")
    db = os.path.join(tmp, "opgen.db")
    out = os.path.join(tmp, "bert_tiny.lib")

    one_error(run(opgen, "compile", onnx, "-o", out, "--db", db, "--variants", "0,x"), "--variants 0,x",
              "--variants")
    one_error(run(opgen, "compile", onnx, "-o", out, "--db", db, "--variants", ""), "--variants ''",
              "no contention levels")
    check(not os.path.exists(out), "a refused compile left %s behind" % out)

    # 1. Level 0 at Halide's heuristic points; the memory-bound kernels' variants tuned (a tiny
    # budget: 2 trials, the quiet finalists only, one round) into the cache.
    fast = ["--threads", "1", "--db", db, "--no-tune", "--trials", "2", "--min-time", "5", "--quiet",
            "--variants", "0.5,1", "--variant-intensity", "1", "--variant-search", "0", "--variant-finalists", "2",
            "--variant-rounds", "1"]
    first = os.path.join(tmp, "first.lib")
    r = run(opgen, "compile", onnx, "-o", first, *fast)
    check(r.returncode == 0, "opgen compile --variants failed:\n%s%s" % (r.stdout, r.stderr))
    check("variants: tuning softmax" in r.stdout, "the variants were not tuned:\n" + r.stdout)
    # 2. Whether a level's variant beats the quiet winner is the machine's to say; so that the
    # library surely has a variant entry point, softmax's level-1 variant becomes another legal
    # schedule (unrolled or not), as a tuning under load could have chosen.
    con = sqlite3.connect(db)
    rows = con.execute("SELECT level, schedule_json FROM kernel_variants WHERE op_name = 'softmax'").fetchall()
    check(sorted(l for l, _ in rows) == [0, 0.5, 1], "softmax: expected variants at 0, 0.5, 1 in the cache: %s" % rows)
    point = json.loads(dict(rows)[0])
    point["unroll"] = not point["unroll"]
    con.execute("UPDATE kernel_variants SET schedule_json = ? WHERE op_name = 'softmax' AND level = 1",
                (json.dumps(point),))
    con.commit()
    con.close()
    # 3. The library from the cache alone: nothing is tuned again.
    r = run(opgen, "compile", onnx, "-o", out, *fast)
    check(r.returncode == 0, "opgen compile --variants from the cache failed:\n%s%s" % (r.stdout, r.stderr))
    check("variants: tuning" not in r.stdout, "variants tuned again though cached:\n" + r.stdout)
    with open(os.path.join(out, "deploy.json")) as f:
        deploy = json.load(f)
    check("variants" in deploy, "deploy.json has no \"variants\"")
    v = deploy["variants"]
    check(v["levels"] == [0, 0.5, 1], "expected levels [0, 0.5, 1], got %s" % v["levels"])
    check(len(v["level_drift"]) == 3 and v["level_drift"][0] == 1 and all(d > 0 for d in v["level_drift"]),
          "expected a positive drift per level, 1 at level 0: %s" % v["level_drift"])
    # Under 1 FLOP per compulsory byte: softmax, the slice, the pooler and the classifier (1 row);
    # not the layer norms (about 1) nor the 16-row dense layers (about 5 FLOPs per byte).
    bound = {k["op"] for k in v["kernels"]}
    check({"softmax", "slice_r3"} <= bound and not any(op.startswith("layernorm") for op in bound),
          "expected softmax and the slice among the memory-bound kernels, no layer norm: %s" % sorted(bound))
    check(not any(k["op"].startswith("matmul_bias") and "M=16" in k["shape"] for k in v["kernels"]),
          "16-row dense layers counted memory-bound: %s" % v["kernels"])
    softmax = [k for k in v["kernels"] if k["op"] == "softmax"][0]
    check(softmax["levels"][2]["function"] == softmax["function"] + "_l2",
          "softmax's level-1 variant has no entry point of its own: %s" % softmax)
    symbols = defined_symbols(os.path.join(out, "libbert_tiny.a"))
    extra = set()
    for k in v["kernels"]:
        check(len(k["levels"]) == 3, "%s: expected an entry per level, got %s" % (k["function"], k["levels"]))
        check(k["levels"][0]["function"] == k["function"], "%s: level 0 is not its own kernel" % k["function"])
        for e in k["levels"]:
            check(e["function"] + "_argv" in symbols, "entry point %s_argv is not in the archive" % e["function"])
            if e["function"] != k["function"]:
                extra.add(e["function"])
    check(len(extra) == v["entry_points"], "deploy.json counts %d extra entry points, the levels name %d" % (
        v["entry_points"], len(extra)))
    with open(os.path.join(out, "bert_tiny.h")) as f:
        header = f.read()
    for api in ("bert_tiny_LEVELS 3", "bert_tiny_set_variant_level", "bert_tiny_set_variant_quiet_ratio"):
        check(api in header, "bert_tiny.h lacks %s" % api)
    print("variants: %d memory-bound distinct kernels, %d extra entry points, drift by level %s" % (
        len(v["kernels"]), len(extra), v["level_drift"]))

    ort_out = os.path.join(tmp, "ort")
    error = ort_outputs(src, ort_dir, onnx, os.path.join(tmp, "bert_tiny.inputs"), ort_out)
    check(error is None, error)
    graph = json.load(open(os.path.join(out, "graph.json")))
    inputs = [a for i in graph["inputs"] for a in ("--input", os.path.join(tmp, "bert_tiny.inputs", i + ".npy"))]
    for level in (0, 1, 2):
        mine = os.path.join(tmp, "level%d" % level)
        os.makedirs(mine)
        outputs = [a for o in graph["outputs"] for a in ("--output", os.path.join(mine, o + ".npy"))]
        r = run(opgen, "run", out, "--level", str(level), "--threads", "1", "--iterations", "3", "--calibrate", "0",
                "--finite", *inputs, *outputs)
        check(r.returncode == 0, "opgen run --level %d failed: %s" % (level, r.stderr))
        check("variants: level now %d " % level in r.stdout, "--level %d did not run level %d:\n%s" % (
            level, level, r.stdout))
        c = compare_outputs(src, ort_out, mine)
        check(c.returncode == 0, "level %d differs from ONNX Runtime:\n%s%s" % (level, c.stdout, c.stderr))
        print("level %d:" % level, c.stdout.strip().replace("\n", "\n  "))

    # The switching policy on simulated kernel times: the program's source included by a harness
    # that feeds each memory-bound kernel a time (its variant's quiet time x a contention factor).
    harness = os.path.join(tmp, "policy.c")
    with open(harness, "w") as f:
        f.write(POLICY_HARNESS)
    exe = os.path.join(tmp, "policy")
    r = run("cc", "-O1", "-o", exe, "-I", out, "-I", os.path.join(out, "src"), "-I", HALIDE_INCLUDE, harness,
            os.path.join(out, "libbert_tiny.a"), "-lpthread", "-ldl", "-lm")
    check(r.returncode == 0, "the policy harness does not build: %s" % r.stderr)
    r = run(exe)
    want = "0 0 0 0 0 0 0 0 0 0 1 1 1 2 2 2 1 1 1 0 0 0 0 0 | switches 4"
    check(r.returncode == 0 and r.stdout.strip() == want,
          "the level after each simulated run:\n  got  %s\n  want %s" % (r.stdout.strip() or r.stderr, want))
    print("policy:", r.stdout.strip())

    one_error(run(opgen, "run", out, "--level", "3", *inputs), "--level 3", "levels 0..2")
    one_error(run(opgen, "run", out, "--quiet-ratio", "0.9", *inputs), "--quiet-ratio 0.9", "quiet-ratio")
    one_error(run(opgen, "run", out, "--load", "x", *inputs), "--load x", "--load")

    # Beside opgen's own load, the library chooses its level and still computes the same outputs.
    mine = os.path.join(tmp, "loaded")
    r = run_library(opgen, out, os.path.join(tmp, "bert_tiny.inputs"), mine, iterations=5)
    check(r.returncode == 0, "opgen run failed: %s" % r.stderr)
    c = compare_outputs(src, ort_out, mine)
    check(c.returncode == 0, "the library left to choose differs from ONNX Runtime:\n%s%s" % (c.stdout, c.stderr))
    r = run(opgen, "run", out, "--load", "1", "--threads", "1", "--iterations", "5", "--calibrate", "0", *inputs)
    check(r.returncode == 0, "opgen run --load 1 failed: %s" % r.stderr)
    check("load: level 1," in r.stdout and "GB/s" in r.stdout and "variants: level now" in r.stdout,
          "opgen run --load 1 printed:\n" + r.stdout)
    print("ok")
finally:
    shutil.rmtree(tmp, ignore_errors=True)
