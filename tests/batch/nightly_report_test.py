#!/usr/bin/env python3
"""Checks scripts/nightly_report.py on hand-made batch reports: every task is a table row, stale
reasons, failures and regressions are shown, the previous night's GFLOP/s and the change, oneDNN's
figure from a bench.json at the same op, shape and threads, both charts, no external assets; and
malformed input is one `error:` line with exit 2 and no file written.
usage: nightly_report_test.py SOURCE_DIR"""
import json
import os
import subprocess
import sys
import tempfile

src = sys.argv[1]
script = os.path.join(src, "scripts", "nightly_report.py")


def kernel(gflops, ms):
    return {"gflops": gflops, "time_ms": ms, "speedup_over_default": 3.0, "trials": 8}


def run(*args):
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True)


def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)


with tempfile.TemporaryDirectory() as d:
    p = lambda n: os.path.join(d, n)
    tonight = {"threads": 1, "tasks": [
        {"op": "matmul", "shape": "K=256,M=256,N=256", "status": "tuned", "stale": "tuner version 1 -> 2",
         "kernel": kernel(90.0, 0.37)},
        {"op": "relu", "shape": "M=8,N=8", "status": "failed", "error": "no candidate produced a correct result"},
        {"op": "softmax", "shape": "M=64,N=128", "status": "cached", "kernel": kernel(6.0, 0.007)}],
        "remeasured": [{"op": "softmax", "shape": "M=64,N=128", "cached_ms": 0.007, "cached_default_ms": 10.0,
                        "now_ms": 0.011, "now_default_ms": 10.0, "status": "ok", "regressed": True}]}
    previous = {"threads": 1, "tasks": [
        {"op": "matmul", "shape": "K=256,M=256,N=256", "status": "tuned", "kernel": kernel(120.0, 0.28)}]}
    bench = {"entries": [
        {"op": "matmul", "shape": "K=256,M=256,N=256", "threads": 1,
         "contenders": [{"counts_as_onednn": True, "status": "ok", "gflops": 117.1}]},
        {"op": "matmul", "shape": "K=256,M=256,N=256", "threads": 2,
         "contenders": [{"counts_as_onednn": True, "status": "ok", "gflops": 999.0}]}]}
    for name, j in (("t.json", tonight), ("p.json", previous), ("b.json", bench)):
        json.dump(j, open(p(name), "w"))
    r = run("--batch", p("t.json"), "--previous", p("p.json"), "--bench", p("b.json"), "-o", p("r.html"))
    check(r.returncode == 0, r.stderr)
    h = open(p("r.html")).read()
    check(h.count("<tr class=") == 3, "one row per task")
    check("stale: tuner version 1 -&gt; 2" in h, "stale reason")
    check('<tr class="failed">' in h and "no candidate produced a correct result" in h, "failure and reason")
    check('<tr class="regressed">' in h and "REGRESSED" in h, "regression flagged")
    check(">120.0<" in h and ">-25%<" in h, "previous night and change")
    check(">117.1<" in h and "999.0" not in h, "oneDNN at the same threads only")
    check(h.count("<svg") == 2 and "opgen vs oneDNN" in h, "two charts")
    check("http" not in h.replace('xmlns="http://www.w3.org/2000/svg"', "") and "<script" not in h, "self-contained")
    check("<b>1</b> regressed" in h, "summary counts regressions")

    open(p("bad.json"), "w").write("{not json")
    r = run("--batch", p("bad.json"), "-o", p("x.html"))
    check(r.returncode == 2 and r.stderr.startswith("error: batch report '") and r.stderr.count("\n") == 1, r.stderr)
    check(not os.path.exists(p("x.html")), "nothing written on error")
    json.dump({"tasks": [{"op": "matmul"}]}, open(p("bad2.json"), "w"))
    r = run("--batch", p("bad2.json"), "-o", p("x.html"))
    check(r.returncode == 2 and 'task 0: field "shape" missing' in r.stderr, r.stderr)
print("nightly report: OK")
