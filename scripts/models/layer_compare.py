#!/usr/bin/python3
"""Layer by layer, opgen's compiled model against ONNX Runtime's own profile: joins
ONNX Runtime's per-node profile (`scripts/ort/run.js --profile PREFIX`, Chrome-trace JSON) with
the per-kernel lines of `opgen run DIR --profile` through DIR/graph.json, whose kernels list the
ONNX nodes each one fuses. ONNX Runtime names its NCHWc nodes after their output tensor
("conv_5_out_nchwc"), so a node is found by its name, else by the node whose output it names.
Prints, in graph order, each opgen kernel beside the ONNX Runtime nodes it covers (ms per run,
ratio, the difference), then the nodes opgen has no kernel for (ONNX Runtime's reorders,
Flatten), then the time outside kernels on each side: a whole run minus its kernels' sum.

ONNX Runtime's node times are the median over the timed runs (the first WARMUP runs in the file
are skipped), which discards a run the machine interrupted; opgen's are the profile's mean.
usage: layer_compare.py ORT_PROFILE.json DIR OPGEN_PROFILE.txt [--warmup W] [--by-op]"""
import argparse
import json
import re
import statistics
import sys


def ort_runs(path, warmup):
    """Per timed run, {node name: (microseconds, op)}; and the runs' own durations (us)."""
    events = json.load(open(path))
    runs = sorted((e for e in events if e.get("name") == "model_run"), key=lambda e: e["ts"])
    nodes = [e for e in events if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]
    if len(runs) <= warmup:
        sys.exit("error: '%s' holds %d runs, no timed run after %d warm-up runs" % (path, len(runs), warmup))
    out = []
    for run in runs[warmup:]:
        inside = [e for e in nodes if run["ts"] <= e["ts"] <= run["ts"] + run["dur"]]
        out.append({e["name"][: -len("_kernel_time")]: (e["dur"], e["args"].get("op_name", "?")) for e in inside})
    return out, [r["dur"] for r in runs[warmup:]]


def opgen_profile(path):
    """Per kernel index its ms per run, and the run's p50 latency in ms."""
    ms, latency = {}, None
    for line in open(path):
        m = re.match(r"\s+([0-9.]+) ms\s+[0-9.]+%\s+(\d+): (\S+) ", line)
        if m:
            ms[int(m.group(2))] = float(m.group(1))
        m = re.match(r"latency: p50 ([0-9.]+) ms", line)
        if m:
            latency = float(m.group(1))
    return ms, latency


def node_owner(kernels):
    """ONNX node name -> kernel index, and output tensor name -> kernel index."""
    owner = {}
    for k in kernels:
        for n in k["nodes"]:
            owner[n] = k["index"]
    return owner


def find_kernel(ort_name, owner):
    base = ort_name.split("/")[0]  # "layer0_ffn_in_matmul/MatMulAddFusion": the fusion's first node
    base = base[: -len("_nchwc")] if base.endswith("_nchwc") else base
    for candidate in (base, base[: -len("_out")] if base.endswith("_out") else None):
        if candidate in owner:
            return owner[candidate]
    return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("ort_profile")
    p.add_argument("folder")
    p.add_argument("opgen_profile")
    p.add_argument("--warmup", type=int, default=0)
    p.add_argument("--by-op", action="store_true", help="also sum the rows per opgen op")
    a = p.parse_args()

    kernels = json.load(open(a.folder + "/graph.json"))["kernels"]
    owner = node_owner(kernels)
    runs, run_us = ort_runs(a.ort_profile, a.warmup)
    names = list(runs[-1].keys())
    ort_ms = {n: statistics.median(r[n][0] for r in runs if n in r) / 1e3 for n in names}
    ort_op = {n: runs[-1][n][1] for n in names}
    mine, latency = opgen_profile(a.opgen_profile)

    covered = {}  # kernel -> ORT nodes
    unmatched = []
    for n in names:
        k = find_kernel(n, owner)
        if k is None:
            unmatched.append(n)
        else:
            covered.setdefault(k, []).append(n)

    print("| # | opgen kernel | shape | ORT nodes | ORT ms | opgen ms | opgen / ORT | opgen - ORT ms | GFLOP/s ORT / opgen |")
    print("|---|---|---|---|---|---|---|---|---|")
    sum_ort = sum_mine = 0.0
    by_op = {}
    for k in kernels:
        i = k["index"]
        o = sum(ort_ms[n] for n in covered.get(i, []))
        m = mine.get(i, 0.0)
        sum_ort += o
        sum_mine += m
        r = by_op.setdefault(k["op"], [0, 0.0, 0.0, 0.0])
        r[0] += 1
        r[1] += o
        r[2] += m
        r[3] += k["gflop"]
        rate = lambda ms: "%.0f" % (k["gflop"] / ms * 1e3) if ms > 0 else "-"
        print("| %d | %s | %s | %s | %.3f | %.3f | %s | %+.3f | %s / %s |" % (
            i, k["op"], k["shape"], " ".join(covered.get(i, [])) or "-", o, m,
            "%.2fx" % (m / o) if o > 0 else "-", m - o, rate(o), rate(m)))
    extra = sum(ort_ms[n] for n in unmatched)
    print()
    if len(unmatched) <= 8:
        print("ONNX Runtime nodes with no opgen kernel: %s (%.3f ms per run)" % (
            ", ".join("%s %s %.3f ms" % (n, ort_op[n], ort_ms[n]) for n in unmatched) or "none", extra))
    else:  # named by ONNX Runtime's fusions (SkipLayerNormalization, Gelu) or its reshapes
        print("ONNX Runtime nodes with no opgen kernel, by op (%.3f ms per run):" % extra)
        print()
        print("| ORT op | nodes | ms per run |")
        print("|---|---|---|")
        ops = {}
        for n in unmatched:
            r = ops.setdefault(ort_op[n], [0, 0.0])
            r[0] += 1
            r[1] += ort_ms[n]
        for op, (count, ms) in sorted(ops.items(), key=lambda kv: -kv[1][1]):
            print("| %s | %d | %.3f |" % (op, count, ms))
    ort_run = statistics.median(run_us) / 1e3
    print()
    print("| side | whole run ms | kernels' (nodes') sum ms | outside kernels ms |")
    print("|---|---|---|---|")
    print("| ONNX Runtime (profiled, median run) | %.3f | %.3f | %.3f |" % (ort_run, sum_ort + extra,
                                                                         ort_run - sum_ort - extra))
    if latency is not None:
        print("| opgen (profiled, p50 run) | %.3f | %.3f | %.3f |" % (latency, sum_mine, latency - sum_mine))
    if a.by_op:
        print()
        print("| opgen op | kernels | ORT ms | opgen ms | opgen / ORT | opgen - ORT ms | GFLOP |")
        print("|---|---|---|---|---|---|---|")
        for op, (n, o, m, g) in sorted(by_op.items(), key=lambda kv: -(kv[1][2] - kv[1][1])):
            print("| %s | %d | %.3f | %.3f | %s | %+.3f | %.3f |" % (op, n, o, m, "%.2fx" % (m / o) if o else "-",
                                                                 m - o, g))
        if unmatched:
            print("| (ORT nodes with no opgen kernel) | %d | %.3f | 0 | - | %+.3f | |" % (len(unmatched), extra, -extra))
        print("| all | %d | %.3f | %.3f | %.2fx | %+.3f | |" % (
            len(kernels), sum_ort + extra, sum_mine, sum_mine / (sum_ort + extra), sum_mine - sum_ort - extra))


if __name__ == "__main__":
    main()
