#!/usr/bin/python3
"""Where a compiled model's time goes, per op: joins the per-kernel lines of
`opgen run DIR --profile` with DIR/graph.json's GFLOP per kernel and prints a Markdown table of
kernels, milliseconds per run, share and GFLOP/s per op, slowest first.
usage: profile_summary.py DIR PROFILE_TXT"""
import json
import re
import sys

folder, profile = sys.argv[1], sys.argv[2]
with open(folder + "/graph.json") as f:
    gflop = [k["gflop"] for k in json.load(f)["kernels"]]
rows = {}
for line in open(profile):
    m = re.match(r"\s+([0-9.]+) ms\s+[0-9.]+%\s+(\d+): (\S+) ", line)
    if not m:
        continue
    ms, kernel, op = float(m.group(1)), int(m.group(2)), m.group(3)
    r = rows.setdefault(op, [0, 0.0, 0.0])
    r[0] += 1
    r[1] += ms
    r[2] += gflop[kernel]
total = sum(r[1] for r in rows.values())
print("| op | kernels | ms per run | share | GFLOP | GFLOP/s |")
print("|---|---|---|---|---|---|")
for op, (n, ms, g) in sorted(rows.items(), key=lambda kv: -kv[1][1]):
    print("| %s | %d | %.2f | %.1f%% | %.3f | %.0f |" % (op, n, ms, 100 * ms / total, g, g / ms * 1e3 if ms else 0))
print("| all | %d | %.2f | 100%% | %.3f | %.0f |" % (sum(r[0] for r in rows.values()), total,
                                                      sum(r[2] for r in rows.values()),
                                                      sum(r[2] for r in rows.values()) / total * 1e3))
