#!/usr/bin/env bash
# Quantized models, opgen against ONNX Runtime, in one interleaved run: each round and thread
# count T times ONNX Runtime on WORK/MODEL.onnx (float32), WORK/MODEL_qdq.onnx and
# WORK/MODEL_qop.onnx (scripts/models/quantize_models.py) at T threads, each a fresh process
# (2 warm-up, RUNS timed runs), and `opgen run --threads T` of every WORK/MODEL_<form>.tT library
# that exists after its file. One line per engine and round: "round R tT ort|opgen FILE MS";
# take the median over rounds.
# Run it under the exclusive measurement lock: flock -x /tmp/opgen-measure.lock scripts/bench/quantized-models.sh ...
# usage: scripts/bench/quantized-models.sh WORK MODEL [ROUNDS (3)] [RUNS (10)] [THREADS ("1")]
#   env: OPGEN (build/bin/opgen), OPGEN_ORT_DIR (build/ort)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="${1:?usage: quantized-models.sh WORK MODEL [ROUNDS] [RUNS]}"
m="${2:?usage: quantized-models.sh WORK MODEL [ROUNDS] [RUNS]}"
rounds="${3:-3}" runs="${4:-10}" threads="${5:-1}"
opgen="${OPGEN:-$root/build/bin/opgen}"
ort="${OPGEN_ORT_DIR:-$root/build/ort}"
inputs() { /usr/bin/python3 -c 'import json,sys; g=json.load(open(sys.argv[1]+"/graph.json"))
print(" ".join("--input %s/%s.npy" % (sys.argv[2], i) for i in g["inputs"]))' "$1" "$2"; }
for r in $(seq "$rounds"); do
    for t in $threads; do
        for f in "" _qdq _qop; do
            node "$root/scripts/ort/run.js" --model "$work/$m$f.onnx" --inputs "$work/$m$f.inputs" --threads "$t" \
                --runs "$runs" --warmup 2 --ort "$ort" |
                /usr/bin/python3 -c "import json,sys; print('round $r t$t ort $m$f', json.loads(sys.stdin.read())['median_ms'])"
            if [ -n "$f" ] && [ -d "$work/$m$f.t$t" ]; then
                # shellcheck disable=SC2046
                "$opgen" run "$work/$m$f.t$t" $(inputs "$work/$m$f.t$t" "$work/$m$f.inputs") --threads "$t" \
                    --iterations "$runs" --warmup 2 | grep -o "p50 [0-9.]*" | sed "s/^p50/round $r t$t opgen $m$f/"
            fi
        done
    done
done
