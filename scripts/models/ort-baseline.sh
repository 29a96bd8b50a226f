#!/usr/bin/env bash
# ONNX Runtime's baseline on the whole-model benchmarks: generates ResNet-50 v1.5 and
# the BERT-base encoder (timing the generation), checks ORT's outputs against the numpy
# interpreter once per model, then times ORT at each thread count, batch 1, in ROUNDS rounds that
# alternate the thread counts (so drift on a shared machine spreads over both). Each round is a
# fresh process: WARMUP warm-up runs, then RUNS timed runs; the figure is the median over rounds
# of each round's median, and the peak resident memory is the largest over rounds.
# Timing holds the exclusive measurement lock once for all rounds; hold nothing else when calling it.
# usage: scripts/models/ort-baseline.sh OUTDIR [MODELS (resnet50,bert)] [THREADS (1,2)]
#   env: ROUNDS (5), RUNS (20), WARMUP (3), OPGEN_ORT_DIR (build/ort)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${1:?usage: ort-baseline.sh OUTDIR [MODELS] [THREADS]}"
models="${2:-resnet50,bert}"
threads="${3:-1,2}"
rounds="${ROUNDS:-5}" runs="${RUNS:-20}" warmup="${WARMUP:-3}"
ort="${OPGEN_ORT_DIR:-$root/build/ort}"
lock=/tmp/opgen-measure.lock

"$root/scripts/ort-setup.sh" "$ort" >&2
mkdir -p "$out"
for m in ${models//,/ }; do
    flock -s "$lock" /usr/bin/python3 "$root/scripts/models/make_models.py" "$out" --only "$m" >&2
    flock -s "$lock" node "$root/scripts/ort/run.js" --model "$out/$m.onnx" \
        --inputs "$out/$m.inputs" --out "$out/$m.ort" --runs 1 --warmup 0 --ort "$ort" >/dev/null
    flock -s "$lock" /usr/bin/python3 "$root/scripts/models/numpy_reference.py" "$out/$m.onnx" \
        "$out/$m.inputs" "$out/$m.ref"
    /usr/bin/python3 "$root/scripts/models/compare_outputs.py" "$out/$m.ref" "$out/$m.ort" \
        --rtol 1e-4 >&2
done

results="$out/ort-baseline.jsonl"
: >"$results"
# One exclusive hold for all the timing: on a shared machine, waiting for the lock once is far
# quicker than once per run, and nothing else measures in between.
exec 9>"$lock"
echo "ort-baseline: waiting for the exclusive measurement lock" >&2
flock -x 9
echo "ort-baseline: timing ($(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
for r in $(seq "$rounds"); do
    for m in ${models//,/ }; do
        for t in ${threads//,/ }; do
            node "$root/scripts/ort/run.js" --model "$out/$m.onnx" --inputs "$out/$m.inputs" \
                --threads "$t" --runs "$runs" --warmup "$warmup" --ort "$ort" 9>&- |
                sed "s/^{/{\"name\":\"$m\",\"round\":$r,/" | tee -a "$results" >&2
        done
    done
done
echo "ort-baseline: done ($(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
flock -u 9
exec 9>&-

/usr/bin/python3 - "$results" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| model | threads | median ms (median of %d rounds) | spread of round medians ms | peak RSS MiB | node alone MiB | session load ms |" % len({r["round"] for r in rows}))
print("|---|---|---|---|---|---|---|")
for key in sorted({(r["name"], r["threads"]) for r in rows}):
    sel = [r for r in rows if (r["name"], r["threads"]) == key]
    med = [r["median_ms"] for r in sel]
    print("| %s | %d | %.2f | %.2f-%.2f | %.0f | %.0f | %.0f |" % (
        key[0], key[1], statistics.median(med), min(med), max(med),
        max(r["peak_rss_mib"] for r in sel), max(r["node_start_rss_mib"] for r in sel),
        statistics.median(r["load_ms"] for r in sel)))
EOF
