#!/usr/bin/env bash
# Shape-generic kernels against full tunes (issue 20). Two phases, each under its own lock:
#   flock -s /tmp/opgen-measure.lock scripts/generic-bench.sh tune
#       tunes three source shapes per op (matmul, conv2d_nchw, softmax) into generic.db and builds
#       their generic code (`opgen db compile --generic`), then fully tunes every bench shape (none
#       of them a source shape) into tuned.db with its code; both with the same trial budget
#       (OPGEN_BENCH_TRIALS, default 24), one thread. Kept: a second run tunes nothing again.
#   flock -x /tmp/opgen-measure.lock scripts/generic-bench.sh time
#       times each bench shape's generic kernel against its full tune's kernel (opgen_generic_bench,
#       one thread, interleaved rounds) and prints the median and worst ratio per op and overall.
#   OPGEN_BUILD_DIR (default build) picks the build folder; it is configured with
#   -DOPGEN_BUILD_CACHE_BENCH=ON.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${OPGEN_BUILD_DIR:-$root/build}"
work="$build/generic-bench"
opgen="$build/opgen/opgen"
trials="${OPGEN_BENCH_TRIALS:-24}"
mkdir -p "$work"
# Three tuned shapes per op, none of them a bench shape: the lookup serves each bench shape with
# the generic kernel from the nearest of them.
sources=("matmul M=256,N=256,K=256" "matmul M=64,N=512,K=128" "matmul M=128,N=128,K=128"
    "conv2d_nchw N=1,C=32,H=28,W=28,F=32" "conv2d_nchw N=1,C=16,H=14,W=14,F=32"
    "conv2d_nchw N=1,C=64,H=56,W=56,F=64"
    "softmax M=256,N=1024" "softmax M=64,N=128" "softmax M=1024,N=256")
shapes=(
    "matmul M=200,N=300,K=150" "matmul M=384,N=128,K=512" "matmul M=100,N=700,K=100"
    "matmul M=333,N=333,K=333" "matmul M=64,N=1000,K=256"
    "conv2d_nchw N=1,C=16,H=56,W=56,F=24" "conv2d_nchw N=1,C=48,H=20,W=20,F=40"
    "conv2d_nchw N=2,C=32,H=14,W=14,F=64" "conv2d_nchw N=1,C=24,H=33,W=33,F=24"
    "conv2d_nchw N=1,C=64,H=7,W=7,F=96"
    "softmax M=100,N=1000" "softmax M=512,N=333" "softmax M=37,N=4096" "softmax M=2000,N=64"
    "softmax M=256,N=1500")
tune() {  # db op shape
    "$opgen" tune --op "$2" --shape "$3" --trials "$trials" --min-time 20 --threads 1 --jobs 1 --quiet \
        --seed 1 --db "$1" >/dev/null
}
case "${1:-}" in
tune)
    cmake -S "$root" -B "$build" -DOPGEN_BUILD_CACHE_BENCH=ON >/dev/null
    cmake --build "$build" -j2 --target opgen_generic_bench opgen >/dev/null
    for s in "${sources[@]}"; do set -- $s; tune "$work/generic.db" "$1" "$2"; done
    "$opgen" db compile --generic --op matmul --op conv2d_nchw --op softmax --db "$work/generic.db"
    for s in "${shapes[@]}"; do set -- $s; echo "full tune: $1 $2"; tune "$work/tuned.db" "$1" "$2"; done
    ;;
time)
    target="$("$opgen" db stats --db "$work/generic.db" --json |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["by_target_and_op"][0]["target"])')"
    echo "generic-bench: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), target $target, $trials trials per tune"
    export HL_NUM_THREADS=1
    for s in "${shapes[@]}"; do
        set -- $s
        "$build/tests/db/opgen_generic_bench" --generic-db "$work/generic.db" --tuned-db "$work/tuned.db" \
            --target "$target" --op "$1" --shape "$2"
    done | tee "$work/ratios.txt"
    python3 - "$work/ratios.txt" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if ' ratio ' in l]
by = {}
for r in rows: by.setdefault(r[0], []).append((float(r[-1]), r[1]))
allr = [x for v in by.values() for x in v]
for op, v in list(by.items()) + [("all", allr)]:
    w = max(v)
    print(f"{op:12s} median {statistics.median([x for x, _ in v]):.3f}  worst {w[0]:.3f} ({w[1]})  n={len(v)}")
PY
    ;;
*)
    echo "usage: generic-bench.sh tune|time" >&2
    exit 2
    ;;
esac
