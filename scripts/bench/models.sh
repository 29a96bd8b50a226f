#!/usr/bin/env bash
# Whole models, opgen against ONNX Runtime: for each model compiled by `opgen compile`
# into WORK/<model>.<TAG>, checks the library's outputs against ONNX Runtime's (1e-4 relative,
# 1e-3 for BERT's logits), then times both in one interleaved run: ROUNDS rounds, each running
# ONNX Runtime and then opgen at every thread count, a fresh process each (WARMUP warm-up runs,
# RUNS timed runs); the figure is the median over rounds of each round's median (p50). Peak
# resident memory is each process's own. Last, one profiled opgen run per model and thread count
# (every kernel's share) goes to WORK/<model>.<TAG>.profile-t<N>.txt.
# Timing holds the exclusive measurement lock once (keep ROUNDS x RUNS short: under 10 minutes).
# usage: scripts/bench/models.sh WORK TAGS [MODELS (resnet50,bert)] [THREADS (1,2)]
#   TAGS is one tag or several, comma-separated ("old{t},new{t}"): every library of a round runs
#   right after the same ONNX Runtime run, so a before/after comparison is one interleaved run
#   WORK holds <model>.onnx and <model>.inputs/ (scripts/models/make_models.py) and <model>.<TAG>/;
#   "{t}" in TAG stands for the thread count, so each count runs the library tuned for it
#   (`opgen compile ... --threads N -o WORK/<model>.tN` with TAG t{t})
#   env: ROUNDS (3), RUNS (10), WARMUP (2), OPGEN (build/bin/opgen), OPGEN_ORT_DIR (build/ort),
#   LOCK_MODE (-x; -s times under the shared lock, alongside other work: say so with the figures)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="${1:?usage: models.sh WORK TAGS [MODELS] [THREADS]}"
tags="${2:?usage: models.sh WORK TAGS [MODELS] [THREADS]}"
models="${3:-resnet50,bert}"
threads="${4:-1,2}"
rounds="${ROUNDS:-3}" runs="${RUNS:-10}" warmup="${WARMUP:-2}"
opgen="${OPGEN:-$root/build/bin/opgen}"
ort="${OPGEN_ORT_DIR:-$root/build/ort}"
lock=/tmp/opgen-measure.lock

inputs_of() {  # --input flags in the model's input order
    /usr/bin/python3 -c 'import json,sys; g=json.load(open(sys.argv[1]+"/graph.json"))
print(" ".join("--input %s/%s.npy" % (sys.argv[2], i) for i in g["inputs"]))' "$1" "$2"
}
outputs_of() {
    /usr/bin/python3 -c 'import json,sys; g=json.load(open(sys.argv[1]+"/graph.json"))
print(" ".join("--output %s/%s.npy" % (sys.argv[2], o) for o in g["outputs"]))' "$1" "$2"
}

folder() { echo "$work/$1.${3//\{t\}/$2}"; }  # the library of model $1 for $2 threads, tag $3

for m in ${models//,/ }; do
    rtol=1e-4
    [ "$m" = bert ] && rtol=1e-3
    flock -s "$lock" node "$root/scripts/ort/run.js" --model "$work/$m.onnx" --inputs "$work/$m.inputs" \
        --out "$work/$m.ort" --runs 1 --warmup 0 --ort "$ort" >/dev/null
    for t in ${threads//,/ }; do for tag in ${tags//,/ }; do
        dir="$(folder "$m" "$t" "$tag")"
        [ -f "$dir/deploy.json" ] || { echo "error: '$dir' is not an opgen compile output" >&2; exit 1; }
        mkdir -p "$dir.outputs"
        # shellcheck disable=SC2046
        flock -s "$lock" "$opgen" run "$dir" $(inputs_of "$dir" "$work/$m.inputs") \
            $(outputs_of "$dir" "$dir.outputs") --iterations 1 --warmup 0 >/dev/null
        echo "$dir:" >&2
        /usr/bin/python3 "$root/scripts/models/compare_outputs.py" "$work/$m.ort" "$dir.outputs" --rtol "$rtol" >&2
    done; done
done

results="$work/model-bench-${tags//[^A-Za-z0-9]/_}.jsonl"
: >"$results"
exec 9>"$lock"
echo "models.sh: waiting for the exclusive measurement lock" >&2
flock "${LOCK_MODE:--x}" 9
echo "models.sh: timing ($(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
for r in $(seq "$rounds"); do
    for m in ${models//,/ }; do
        for t in ${threads//,/ }; do
            node "$root/scripts/ort/run.js" --model "$work/$m.onnx" --inputs "$work/$m.inputs" \
                --threads "$t" --runs "$runs" --warmup "$warmup" --ort "$ort" 9>&- |
                sed "s/^{/{\"name\":\"$m\",\"round\":$r,\"engine\":\"ort\",/" >>"$results"
            for tag in ${tags//,/ }; do
                dir="$(folder "$m" "$t" "$tag")"
                # shellcheck disable=SC2046
                "$opgen" run "$dir" $(inputs_of "$dir" "$work/$m.inputs") --threads "$t" --iterations "$runs" \
                    --warmup "$warmup" 9>&- | /usr/bin/python3 -c 'import json,re,sys
text = sys.stdin.read()
p50 = float(re.search(r"latency: p50 ([0-9.]+) ms", text).group(1))
rss = float(re.search(r"peak RSS: ([0-9.]+) MiB", text).group(1))
print(json.dumps({"name": sys.argv[1], "round": int(sys.argv[2]), "engine": "opgen", "threads": int(sys.argv[3]),
                  "tag": sys.argv[4], "median_ms": p50, "peak_rss_mib": rss}))' "$m" "$r" "$t" "$tag" >>"$results"
            done
        done
    done
done
for m in ${models//,/ }; do
    for t in ${threads//,/ }; do for tag in ${tags//,/ }; do
        dir="$(folder "$m" "$t" "$tag")"
        # shellcheck disable=SC2046
        "$opgen" run "$dir" $(inputs_of "$dir" "$work/$m.inputs") --threads "$t" --iterations "$runs" \
            --warmup 1 --profile 9>&- >"$dir.profile-t$t.txt"
    done; done
done
echo "models.sh: done ($(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
flock -u 9
exec 9>&-

/usr/bin/python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| model | threads | library | ONNX Runtime ms | opgen ms | opgen / ORT | ORT round medians | opgen round medians | peak RSS MiB ORT / opgen |")
print("|---|---|---|---|---|---|---|---|---|")
ort_rows = [r for r in rows if r["engine"] == "ort"]
for key in sorted({(r["name"], r["threads"], r["tag"]) for r in rows if r["engine"] == "opgen"}):
    ort = [r for r in ort_rows if (r["name"], r["threads"]) == key[:2]]
    mine = [r for r in rows if r["engine"] == "opgen" and (r["name"], r["threads"], r["tag"]) == key]
    o = statistics.median(r["median_ms"] for r in ort)
    m = statistics.median(r["median_ms"] for r in mine)
    span = lambda sel: "%.2f-%.2f" % (min(r["median_ms"] for r in sel), max(r["median_ms"] for r in sel))
    print("| %s | %d | %s | %.2f | %.2f | %.2fx | %s | %s | %.0f / %.0f |" % (
        key[0], key[1], key[2].replace("{t}", str(key[1])), o, m, m / o, span(ort), span(mine),
        max(r["peak_rss_mib"] for r in ort), max(r["peak_rss_mib"] for r in mine)))
PY
for m in ${models//,/ }; do
    for t in ${threads//,/ }; do for tag in ${tags//,/ }; do
        dir="$(folder "$m" "$t" "$tag")"
        echo
        echo "Profile of $m at $t thread(s) ($dir):"
        echo
        /usr/bin/python3 "$root/scripts/models/profile_summary.py" "$dir" "$dir.profile-t$t.txt"
    done; done
done
