#!/usr/bin/env bash
# Quantized models, opgen against ONNX Runtime at 1 thread, in one interleaved run: each round
# times ONNX Runtime on WORK/MODEL.onnx (float32), WORK/MODEL_qdq.onnx and WORK/MODEL_qop.onnx
# (scripts/models/quantize_models.py), each a fresh process (2 warm-up, RUNS timed runs), and
# `opgen run --threads 1` of every WORK/MODEL_<form>.t1 library that exists after its file. One
# line per engine and round: "round R ort|opgen FILE MS"; take the median over rounds.
# Run it under the exclusive measurement lock: flock -x /tmp/opgen-measure.lock scripts/bench/quantized-models.sh ...
# usage: scripts/bench/quantized-models.sh WORK MODEL [ROUNDS (3)] [RUNS (10)]
#   env: OPGEN (build/bin/opgen), OPGEN_ORT_DIR (build/ort)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="${1:?usage: quantized-models.sh WORK MODEL [ROUNDS] [RUNS]}"
m="${2:?usage: quantized-models.sh WORK MODEL [ROUNDS] [RUNS]}"
rounds="${3:-3}" runs="${4:-10}"
opgen="${OPGEN:-$root/build/bin/opgen}"
ort="${OPGEN_ORT_DIR:-$root/build/ort}"
inputs() { /usr/bin/python3 -c 'import json,sys; g=json.load(open(sys.argv[1]+"/graph.json"))
print(" ".join("--input %s/%s.npy" % (sys.argv[2], i) for i in g["inputs"]))' "$1" "$2"; }
for r in $(seq "$rounds"); do
    for f in "" _qdq _qop; do
        node "$root/scripts/ort/run.js" --model "$work/$m$f.onnx" --inputs "$work/$m$f.inputs" --threads 1 \
            --runs "$runs" --warmup 2 --ort "$ort" |
            /usr/bin/python3 -c "import json,sys; print('round $r ort $m$f', json.loads(sys.stdin.read())['median_ms'])"
        if [ -n "$f" ] && [ -d "$work/$m$f.t1" ]; then
            # shellcheck disable=SC2046
            "$opgen" run "$work/$m$f.t1" $(inputs "$work/$m$f.t1" "$work/$m$f.inputs") --threads 1 \
                --iterations "$runs" --warmup 2 | grep -o "p50 [0-9.]*" | sed "s/^p50/round $r opgen $m$f/"
        fi
    done
done
