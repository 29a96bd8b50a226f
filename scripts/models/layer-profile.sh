#!/usr/bin/env bash
# Layer by layer against ONNX Runtime: under one hold of the exclusive measurement lock,
# for each thread count, ONNX Runtime's own per-node profile (scripts/ort/run.js --profile) and
# `opgen run --profile` of the library WORK/<model>.<TAG>, each a fresh process, then
# scripts/models/layer_compare.py joins them kernel by kernel (printed, and kept as
# WORK/<model>.<TAG>.layers-t<N>.md). Profiling adds a few microseconds per node to ONNX
# Runtime's runs: its latency figures come from scripts/bench/models.sh, not from here.
# usage: scripts/models/layer-profile.sh WORK TAG MODEL [THREADS (1,2)]
#   TAG as in scripts/bench/models.sh ("{t}" stands for the thread count);
#   env: RUNS (10), WARMUP (2), OPGEN_ORT_DIR (build/ort), LOCK_MODE (-x)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="${1:?usage: layer-profile.sh WORK TAG MODEL [THREADS]}"
tag="${2:?usage: layer-profile.sh WORK TAG MODEL [THREADS]}"
m="${3:?usage: layer-profile.sh WORK TAG MODEL [THREADS]}"
threads="${4:-1,2}"
runs="${RUNS:-10}" warmup="${WARMUP:-2}"
ort="${OPGEN_ORT_DIR:-$root/build/ort}"

exec 9>/tmp/opgen-measure.lock
echo "layer-profile: waiting for the measurement lock" >&2
flock "${LOCK_MODE:--x}" 9
echo "layer-profile: start $(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for t in ${threads//,/ }; do
    dir="$work/$m.${tag//\{t\}/$t}"
    [ -f "$dir/deploy.json" ] || { echo "error: '$dir' is not an opgen compile output" >&2; exit 1; }
    prefix="$dir.ortprof-t$t"
    rm -f "$prefix"_*.json
    node "$root/scripts/ort/run.js" --model "$work/$m.onnx" --inputs "$work/$m.inputs" --threads "$t" \
        --runs "$runs" --warmup "$warmup" --ort "$ort" --profile "$prefix" 9>&- >"$prefix.json.line"
    inputs=$(/usr/bin/python3 -c 'import json,sys; g=json.load(open(sys.argv[1]+"/graph.json"))
print(" ".join("--input %s/%s.npy" % (sys.argv[2], i) for i in g["inputs"]))' "$dir" "$work/$m.inputs")
    # shellcheck disable=SC2086
    "$(ls "$dir"/*-runner)" "$dir/$m.weights" $inputs --threads "$t" --iterations "$runs" \
        --warmup "$warmup" --profile 9>&- >"$dir.profile-t$t.txt"
done
echo "layer-profile: done $(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
flock -u 9
exec 9>&-
for t in ${threads//,/ }; do
    dir="$work/$m.${tag//\{t\}/$t}"
    profile=$(/usr/bin/python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read())["profile"])' \
        "$dir.ortprof-t$t.json.line")
    echo
    echo "$m at $t thread(s), $dir against ONNX Runtime ($profile):"
    echo
    /usr/bin/python3 "$root/scripts/models/layer_compare.py" "$profile" "$dir" "$dir.profile-t$t.txt" \
        --warmup "$warmup" --by-op | tee "$dir.layers-t$t.md"
done
