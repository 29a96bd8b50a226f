#!/usr/bin/env bash
# Dynamic dimensions (issue 39, docs/design.md §3.6): BERT-base with a symbolic sequence length,
# compiled once with `--dim seq=RANGE` (kernels tuned at the --specialize values, shape-generic
# kernels at the others), against a library compiled statically for each sequence length. Each
# library's outputs are checked against ONNX Runtime's at every length (1e-4 relative to the
# output's magnitude); then one interleaved run under the exclusive measurement lock: ROUNDS
# rounds, each running ONNX Runtime, the static library and the dynamic one at every length (a
# fresh process each, RUNS timed runs after WARMUP); the figure is the median over rounds of each
# round's p50. Prints one table row per length: static ms, dynamic ms, their ratio (goal ≤ 1.15),
# which kernels the dynamic library ran, and ONNX Runtime's ms.
#
# usage: scripts/bench/dynamic-dims.sh WORK [SEQS (16,64,128,384)] [RANGE (1..512)]
#   env: TRIALS (24), THREADS (1), SPECIALIZE (none: the range's largest value only), ROUNDS (3),
#   RUNS (5), WARMUP (1), OPGEN (build/bin/opgen), OPGEN_ORT_DIR (build/ort), MODEL (bert_dynamic;
#   bert_tiny_dynamic for a quick pass)
#   WORK keeps the models, the kernel cache (WORK/opgen.db) and the libraries between runs.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="${1:?usage: dynamic-dims.sh WORK [SEQS] [RANGE]}"
seqs="${2:-16,64,128,384}"
range="${3:-1..512}"
trials="${TRIALS:-24}" threads="${THREADS:-1}" rounds="${ROUNDS:-3}" runs="${RUNS:-5}" warmup="${WARMUP:-1}"
model="${MODEL:-bert_dynamic}"
opgen="${OPGEN:-$root/build/bin/opgen}"
ort="${OPGEN_ORT_DIR:-$root/build/ort}"
lock=/tmp/opgen-measure.lock
[ -x "$opgen" ] || { echo "error: $opgen not built (scripts/build.sh)" >&2; exit 1; }
[ -d "$ort/node_modules/onnxruntime-node" ] || { echo "error: ONNX Runtime not in $ort (scripts/ort-setup.sh)" >&2; exit 1; }
mkdir -p "$work"
onnx="$work/$model.onnx"
[ -f "$onnx" ] || /usr/bin/python3 "$root/scripts/models/make_models.py" "$work" --only "$model"
hidden=$(/usr/bin/python3 -c 'import onnx,sys; m=onnx.load(sys.argv[1], load_external_data=False)
print(m.graph.input[0].type.tensor_type.shape.dim[2].dim_value)' "$onnx")

compile() {  # compile OUT ARGS...: one library, skipped when OUT exists
    local out="$1"; shift
    [ -f "$out/deploy.json" ] && return 0
    echo "compile: $out ($*)"
    "$opgen" compile "$onnx" -o "$out" --db "$work/opgen.db" --threads "$threads" --trials "$trials" "$@" \
        > "$out.log" 2>&1 || { tail -5 "$out.log" >&2; exit 1; }
    grep -E "^(dynamic|kernels):" "$out.log" || true
}

spec=()
[ -n "${SPECIALIZE:-}" ] && spec=(--specialize "seq=$SPECIALIZE")
dyn="$work/dynamic-${range/../-}${SPECIALIZE:+-s${SPECIALIZE//,/_}}-t$threads"
compile "$dyn" --dim "seq=$range" "${spec[@]}"
for s in ${seqs//,/ }; do
    compile "$work/static-$s-t$threads" --dim "seq=$s"
    in="$work/inputs-$s"
    [ -f "$in/embeddings.npy" ] || { mkdir -p "$in"; /usr/bin/python3 -c 'import numpy as np, sys
np.save(sys.argv[1], np.random.default_rng(int(sys.argv[2])).standard_normal((1, int(sys.argv[2]), int(sys.argv[3]))).astype(np.float32))' \
        "$in/embeddings.npy" "$s" "$hidden"; }
    [ -d "$in.ort" ] || node "$root/scripts/ort/run.js" --model "$onnx" --inputs "$in" --out "$in.ort" --runs 1 \
        --warmup 0 --ort "$ort" > /dev/null
done

outputs() {  # the --output flags of library $1 into folder $2, in the model's output order
    /usr/bin/python3 -c 'import json,sys; g=json.load(open(sys.argv[1]+"/graph.json"))
print(" ".join("--output %s/%s.npy" % (sys.argv[2], o) for o in g["outputs"]))' "$1" "$2"
}

# Outputs against ONNX Runtime's.
for s in ${seqs//,/ }; do
    for lib in "$work/static-$s-t$threads" "$dyn"; do
        got="$work/out-$s-$(basename "$lib")"
        mkdir -p "$got"
        # shellcheck disable=SC2046
        "$opgen" run "$lib" --input "$work/inputs-$s/embeddings.npy" $(outputs "$lib" "$got") --iterations 1 \
            --calibrate 0 --threads "$threads" --finite > /dev/null
        echo "outputs at seq $s, $(basename "$lib"):"
        /usr/bin/python3 "$root/scripts/models/compare_outputs.py" "$work/inputs-$s.ort" "$got" --rtol 1e-4
    done
done

p50() { sed -n 's/^latency: p50 \([0-9.]*\) ms.*/\1/p'; }
declare -A times kernels
exec 9> "$lock"
flock -x 9
echo "timing: $rounds rounds of ONNX Runtime, static and dynamic at seq $seqs, $threads thread(s), $runs runs each"
for r in $(seq "$rounds"); do
    for s in ${seqs//,/ }; do
        t=$(node "$root/scripts/ort/run.js" --model "$onnx" --inputs "$work/inputs-$s" --runs "$runs" --warmup "$warmup" \
            --threads "$threads" --ort "$ort" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["median_ms"])')
        times[ort,$s]+="$t "
        for kind in static dynamic; do
            lib="$work/static-$s-t$threads"
            [ $kind = dynamic ] && lib="$dyn"
            out=$("$opgen" run "$lib" --input "$work/inputs-$s/embeddings.npy" --iterations "$runs" --warmup "$warmup" \
                --threads "$threads")
            times[$kind,$s]+="$(echo "$out" | p50) "
            [ $kind = dynamic ] && kernels[$s]=$(echo "$out" | sed -n 's/^dims: .*(\(.*\) kernels)/\1/p')
        done
    done
done
flock -u 9
median() { printf '%s\n' $1 | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; $model, seq=$range${SPECIALIZE:+ specialized at $SPECIALIZE}, $trials trials, $threads thread(s); $(date -u +%F)"
printf '| seq | static ms | dynamic ms | dynamic ÷ static | dynamic kernels | ONNX Runtime ms |\n|---|---|---|---|---|---|\n'
for s in ${seqs//,/ }; do
    st=$(median "${times[static,$s]}") dy=$(median "${times[dynamic,$s]}") o=$(median "${times[ort,$s]}")
    printf '| %s | %.3f | %.3f | **%.3f** | %s | %.3f |\n' "$s" "$st" "$dy" "$(awk -v a="$dy" -v b="$st" 'BEGIN {print a / b}')" "${kernels[$s]}" "$o"
done
