#!/usr/bin/env python3
"""Writes the nightly report: one self-contained HTML file (inline CSS and SVG, no scripts, no
external assets) from tonight's `opgen batch --report` JSON, optionally the previous night's, and
optionally a benchmark result (scripts/bench/suite.sh's bench.json) for the oneDNN column.

usage: nightly_report.py --batch TONIGHT.json [--previous PREV.json] [--bench bench.json]
                         [--title TEXT] -o report.html

The table lists every task: status (tuned, cached, failed; stale keys with what changed), time and
GFLOP/s of the cached winner, the previous night's GFLOP/s and the change, oneDNN's GFLOP/s at the
same op, shape and thread count when the benchmark measured it, and the re-measurement of sampled
winners (regressions flagged). Two bar charts: GFLOP/s per task tonight against the previous night,
and against oneDNN. Exits 2 with one `error: ...` line on unreadable or malformed input.
"""
import argparse
import html
import json
import os
import sys


def fail(msg):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(2)


def load(path, what):
    try:
        with open(path) as f:
            j = json.load(f)
    except OSError as e:
        fail(f"cannot read {what} '{path}': {e.strerror}")
    except json.JSONDecodeError as e:
        fail(f"{what} '{path}': not valid JSON: {e}")
    if not isinstance(j, dict):
        fail(f"{what} '{path}': expected a JSON object")
    return j


def task_key(t):
    return (t["op"], t["shape"])


def batch_rows(j, path):
    if not isinstance(j.get("tasks"), list):
        fail(f"batch report '{path}': no \"tasks\" array")
    rows = {}
    for i, t in enumerate(j["tasks"]):
        for field in ("op", "shape", "status"):
            if not isinstance(t.get(field), str):
                fail(f"batch report '{path}' task {i}: field \"{field}\" missing")
        rows[task_key(t)] = t
    return rows


def onednn_gflops(bench, threads):
    out = {}
    for e in bench.get("entries", []):
        if e.get("threads") != threads:
            continue
        best = None
        for c in e.get("contenders", []):
            if c.get("counts_as_onednn") and c.get("status") == "ok":
                best = max(best or 0, c.get("gflops", 0))
        if best:
            out[(e.get("op"), e.get("shape"))] = best
    return out


def gflops(t):
    k = t.get("kernel")
    return k.get("gflops", 0) if k else 0


def bar_chart(title, labels, series, names, colors):
    """Grouped horizontal bars, one group per label; None values are left out."""
    bar_h, gap, left, width = 11, 8, 300, 460
    vmax = max([v for s in series for v in s if v] + [1e-9])
    height = 40 + len(labels) * (bar_h * len(series) + gap) + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 90}" height="{height}" '
           f'role="img" aria-label="{html.escape(title)}">',
           f'<text x="4" y="16" font-size="14" font-weight="bold">{html.escape(title)}</text>']
    y = 32
    for i, label in enumerate(labels):
        out.append(f'<text x="{left - 6}" y="{y + bar_h * len(series) / 2 + 4}" font-size="11" '
                   f'text-anchor="end">{html.escape(label)}</text>')
        for s, vals in enumerate(series):
            v = vals[i]
            if v:
                w = max(1.0, width * v / vmax)
                out.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar_h - 1}" fill="{colors[s]}"/>')
                out.append(f'<text x="{left + w + 4:.1f}" y="{y + bar_h - 2}" font-size="10">{v:.1f}</text>')
            y += bar_h
        y += gap
    lx = left
    for s, name in enumerate(names):
        out.append(f'<rect x="{lx}" y="{height - 18}" width="12" height="10" fill="{colors[s]}"/>')
        out.append(f'<text x="{lx + 16}" y="{height - 9}" font-size="11">{html.escape(name)}</text>')
        lx += 30 + 7 * len(name)
    out.append(f'<text x="{left}" y="{height - 24}" font-size="10" fill="#666">GFLOP/s</text>')
    out.append("</svg>")
    return "\n".join(out)


def fmt(v, p=1):
    return "" if v is None or v == 0 else f"{v:.{p}f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", required=True)
    ap.add_argument("--previous")
    ap.add_argument("--bench")
    ap.add_argument("--title", default="opgen nightly")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()

    tonight_j = load(a.batch, "batch report")
    tonight = batch_rows(tonight_j, a.batch)
    prev = batch_rows(load(a.previous, "previous batch report"), a.previous) if a.previous else {}
    bench = onednn_gflops(load(a.bench, "benchmark result"), tonight_j.get("threads")) if a.bench else {}
    again = {task_key(r): r for r in tonight_j.get("remeasured", [])}

    counts = {"tuned": 0, "cached": 0, "failed": 0}
    stale = 0
    for t in tonight.values():
        counts[t["status"]] = counts.get(t["status"], 0) + 1
        stale += 1 if t.get("stale") else 0
    regressed = [r for r in again.values() if r.get("regressed")]

    rows = []
    labels, g_now, g_prev, g_dnn = [], [], [], []
    for key, t in tonight.items():
        now = gflops(t)
        p = gflops(prev[key]) if key in prev else None
        d = bench.get(key)
        change = f"{(now / p - 1) * 100:+.0f}%" if p and now else ""
        k = t.get("kernel") or {}
        r = again.get(key)
        if r:
            rm = (f"{r['now_ms']:.3f} ms vs {r['cached_ms']:.3f} ms; default {r['now_default_ms']:.3f} vs "
                  f"{r['cached_default_ms']:.3f}" + (" <b>REGRESSED" + ("" if r["status"] == "ok" else f" ({html.escape(r['status'])})") + "</b>"
                   if r.get("regressed") else " ok"))
        else:
            rm = ""
        status = html.escape(t["status"])
        if t.get("stale"):
            status += f'<br><small>stale: {html.escape(t["stale"])}</small>'
        if t.get("error"):
            status += f'<br><small class="err">{html.escape(t["error"])}</small>'
        cls = "failed" if t["status"] == "failed" else ("regressed" if r and r.get("regressed") else "")
        rows.append(
            f'<tr class="{cls}"><td>{html.escape(t["op"])}</td><td class="shape">{html.escape(t["shape"])}</td>'
            f'<td>{status}</td><td class="n">{fmt(k.get("time_ms"), 3)}</td><td class="n">{fmt(now)}</td>'
            f'<td class="n">{fmt(p)}</td><td class="n">{change}</td><td class="n">{fmt(d)}</td>'
            f'<td class="n">{fmt(now / d if d and now else None, 2)}</td>'
            f'<td class="n">{fmt(k.get("speedup_over_default"))}</td><td class="n">{k.get("trials", "")}</td>'
            f'<td>{rm}</td></tr>')
        labels.append(f'{t["op"]} {t["shape"]}'[:48])
        g_now.append(now)
        g_prev.append(p)
        g_dnn.append(d)

    charts = [bar_chart("GFLOP/s per task: tonight vs previous night", labels, [g_now, g_prev],
                        ["tonight", "previous night" if prev else "previous night (none)"], ["#2b6cb0", "#a0aec0"])]
    if bench:
        charts.append(bar_chart("GFLOP/s per task: opgen vs oneDNN (same op, shape, threads)", labels, [g_now, g_dnn],
                                ["opgen", "oneDNN"], ["#2b6cb0", "#dd6b20"]))
    else:
        charts.append("<p class='note'>No benchmark result given (scripts/bench/suite.sh writes bench-out/bench.json): "
                      "no oneDNN comparison tonight.</p>")

    meta = tonight_j
    doc = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(a.title)}</title>
<style>
body {{ font-family: sans-serif; margin: 20px; color: #1a202c; }}
table {{ border-collapse: collapse; font-size: 12px; margin-top: 10px; }}
th, td {{ border: 1px solid #cbd5e0; padding: 3px 6px; vertical-align: top; }}
th {{ background: #edf2f7; }}
td.n {{ text-align: right; font-variant-numeric: tabular-nums; }}
td.shape {{ font-family: monospace; }}
tr.failed {{ background: #fed7d7; }}
tr.regressed {{ background: #fefcbf; }}
.err {{ color: #c53030; }}
.summary span {{ display: inline-block; margin-right: 18px; font-size: 15px; }}
.note {{ color: #4a5568; }}
</style></head><body>
<h1>{html.escape(a.title)}</h1>
<p class="note">manifest {html.escape(str(meta.get("manifest", "")))} · shard {html.escape(str(meta.get("shard", "")))} ·
db {html.escape(str(meta.get("db", "")))} · {html.escape(str(meta.get("started_at", "")))} to
{html.escape(str(meta.get("finished_at", "")))} · Halide {html.escape(str(meta.get("halide_version", "")))} ·
tuner {html.escape(str(meta.get("tuner_version", "")))} · {meta.get("threads", "")} thread(s)</p>
<p class="summary"><span><b>{len(tonight)}</b> tasks</span><span><b>{counts.get("tuned", 0)}</b> tuned
({stale} stale)</span><span><b>{counts.get("cached", 0)}</b> cached</span><span><b>{counts.get("failed", 0)}</b>
failed</span><span><b>{len(again)}</b> re-measured, <b>{len(regressed)}</b> regressed</span></p>
{"".join(f"<div>{c}</div>" for c in charts)}
<table>
<tr><th>op</th><th>shape</th><th>status</th><th>time ms</th><th>GFLOP/s</th><th>prev GFLOP/s</th><th>change</th>
<th>oneDNN GFLOP/s</th><th>vs oneDNN</th><th>× default</th><th>trials</th><th>re-measured</th></tr>
{"".join(rows)}
</table>
<p class="note">Previous night: {html.escape(a.previous or "none")}. Benchmark: {html.escape(a.bench or "none")}.
A regression is a sampled winner whose time relative to Halide's default schedule, both measured
again tonight interleaved, grew by more than the threshold over the ratio stored when it was tuned.</p>
</body></html>
"""
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(doc)
    os.replace(tmp, a.out)
    print(f"nightly report: {a.out} ({len(tonight)} tasks, {len(regressed)} regressions)")


if __name__ == "__main__":
    main()
