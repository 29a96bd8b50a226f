#!/usr/bin/env bash
# Bandwidth variants in whole models (docs/design.md §7.6): each model compiled twice into
# WORK from one kernel cache, WORK/<model>.plain without variants and WORK/<model>.variants with
# `--variants LEVELS` (the memory-bound kernels' contention variants tuned into the same cache),
# checked against each other's outputs, then timed in one interleaved run: ROUNDS rounds, each
# running both libraries quiet and beside opgen's own streaming load (`opgen run --load L`, its
# threads pinned to the last CPUs, the model on the others) at every level of LOADS, a fresh
# process each (WARMUP warm-up runs, RUNS timed runs). The figure is the median over rounds of each
# run's p50; with variants / without is the ratio of those medians at the same load. The library
# with variants chooses its level itself (it is not pinned); the level it ended at is recorded.
# Timing holds the exclusive measurement lock once.
# usage: scripts/bench/model-variants.sh WORK [MODELS (resnet50,bert)] [LOADS (0.5,1)]
#   WORK holds <model>.onnx and <model>.inputs/ (scripts/models/make_models.py)
#   env: ROUNDS (3), RUNS (10), WARMUP (3), THREADS (1), TRIALS (8: per missing kernel), LEVELS
#   (the compile's --variants, default LOADS), DB (WORK/opgen.db), OPGEN (build/bin/opgen),
#   COMPILE_FLAGS (more `opgen compile` flags, e.g. "--variant-search 8")
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="${1:?usage: model-variants.sh WORK [MODELS] [LOADS]}"
models="${2:-resnet50,bert}"
loads="${3:-0.5,1}"
rounds="${ROUNDS:-3}" runs="${RUNS:-10}" warmup="${WARMUP:-3}" threads="${THREADS:-1}" trials="${TRIALS:-8}"
levels="${LEVELS:-$loads}"
db="${DB:-$work/opgen.db}"
opgen="${OPGEN:-$root/build/bin/opgen}"
lock=/tmp/opgen-measure.lock

inputs_of() {  # --input flags in the model's input order
    /usr/bin/python3 -c 'import json,sys; g=json.load(open(sys.argv[1]+"/graph.json"))
print(" ".join("--input %s/%s.npy" % (sys.argv[2], i) for i in g["inputs"]))' "$1" "$2"
}
outputs_of() {
    /usr/bin/python3 -c 'import json,sys; g=json.load(open(sys.argv[1]+"/graph.json"))
print(" ".join("--output %s/%s.npy" % (sys.argv[2], o) for o in g["outputs"]))' "$1" "$2"
}

for m in ${models//,/ }; do
    for kind in plain variants; do
        dir="$work/$m.$kind"
        [ -f "$dir/deploy.json" ] && continue
        flags=()
        [ "$kind" = variants ] && flags=(--variants "$levels")
        # shellcheck disable=SC2086
        flock -s "$lock" nice "$opgen" compile "$work/$m.onnx" -o "$dir" --threads "$threads" --db "$db" \
            --trials "$trials" --quiet "${flags[@]}" ${COMPILE_FLAGS:-} | grep -v "^tune: \[" || true
        [ -f "$dir/deploy.json" ] || { echo "error: compiling $m ($kind) failed" >&2; exit 1; }
    done
    for kind in plain variants; do
        dir="$work/$m.$kind"
        mkdir -p "$dir.outputs"
        # shellcheck disable=SC2046
        flock -s "$lock" "$opgen" run "$dir" $(inputs_of "$dir" "$work/$m.inputs") \
            $(outputs_of "$dir" "$dir.outputs") --threads "$threads" --iterations 1 --warmup 0 >/dev/null
    done
    echo "$m: outputs with variants against without:" >&2
    /usr/bin/python3 "$root/scripts/models/compare_outputs.py" "$work/$m.plain.outputs" "$work/$m.variants.outputs" \
        --rtol 1e-3 >&2
done

results="$work/model-variants.jsonl"
: >"$results"
exec 9>"$lock"
echo "model-variants.sh: waiting for the exclusive measurement lock" >&2
flock -x 9
echo "model-variants.sh: timing ($(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
for r in $(seq "$rounds"); do
    for m in ${models//,/ }; do
        for load in 0 ${loads//,/ }; do
            for kind in plain variants; do
                dir="$work/$m.$kind"
                load_flags=()
                [ "$load" != 0 ] && load_flags=(--load "$load")
                # shellcheck disable=SC2046
                "$opgen" run "$dir" $(inputs_of "$dir" "$work/$m.inputs") --threads "$threads" \
                    --iterations "$runs" --warmup "$warmup" "${load_flags[@]}" 9>&- |
                    /usr/bin/python3 -c 'import json,re,sys
text = sys.stdin.read()
p50 = float(re.search(r"latency: p50 ([0-9.]+) ms", text).group(1))
level = re.search(r"variants: level now (\d+)", text)
gbs = re.search(r"streamed ([0-9.]+) GB/s", text)
print(json.dumps({"model": sys.argv[1], "round": int(sys.argv[2]), "load": float(sys.argv[3]), "kind": sys.argv[4],
                  "p50_ms": p50, "level": int(level.group(1)) if level else None,
                  "load_gbs": float(gbs.group(1)) if gbs else None}))' "$m" "$r" "$load" "$kind" >>"$results"
            done
        done
    done
done
echo "model-variants.sh: done ($(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
flock -u 9
exec 9>&-

/usr/bin/python3 - "$results" <<'PY'
import collections, json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| model | load | without variants ms | with variants ms | with / without | levels chosen | load GB/s |")
print("|---|---|---|---|---|---|---|")
for m, load in sorted({(r["model"], r["load"]) for r in rows}):
    sel = lambda kind: [r for r in rows if r["model"] == m and r["load"] == load and r["kind"] == kind]
    plain, var = sel("plain"), sel("variants")
    p = statistics.median(r["p50_ms"] for r in plain)
    v = statistics.median(r["p50_ms"] for r in var)
    levels = collections.Counter(r["level"] for r in var)
    gbs = [r["load_gbs"] for r in plain + var if r["load_gbs"]]
    print("| %s | %s | %.2f | %.2f | %.3fx | %s | %s |" % (
        m, load or "quiet", p, v, v / p, ", ".join("%s x%d" % kv for kv in sorted(levels.items())),
        "%.1f" % statistics.median(gbs) if gbs else "-"))
PY
