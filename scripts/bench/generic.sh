#!/usr/bin/env bash
# Shape-generic kernels and the lookup's chosen answers against full tunes, on 10
# shapes per op (matmul, conv2d_nchw, softmax) that the answering cache never tuned. Two phases,
# each under its own lock:
#   flock -s /tmp/opgen-measure.lock scripts/bench/generic.sh tune
#       tunes three extra source shapes per op and every bench shape into all.db (one thread,
#       OPGEN_BENCH_TRIALS trials each, default 24), code included, then builds the generic code
#       of every tuned shape (`opgen db compile --generic`). Kept: a second run tunes nothing again.
#   flock -s /tmp/opgen-measure.lock scripts/bench/generic.sh tune-shapes | generic
#       the two halves of `tune`: the tunes alone; the generic code and its timings alone, rebuilt
#       from scratch with this build's generic lowering (every generic row and timing dropped).
#   flock -x /tmp/opgen-measure.lock scripts/bench/generic.sh time
#       for each bench shape S, leave-one-out: a copy of all.db without any row of S (kernel,
#       code, generic code, measurements, runs) answers S, as a cache that never tuned S; S's own
#       full tune in all.db is the reference (and no timing of a generic kernel at S is left). opgen_choice_bench times, in interleaved rounds, the
#       generic kernel the lookup serves (ranked by the cost model), the answer find() chooses
#       (compiled when it is a schedule) and the full tune, and prints medians and worst ratios.
#       With OPGEN_BENCH_ALL_GENERIC=1 it also times every generic kernel that serves each shape
#       and reports the best of them per shape (what a perfect ranking of generic kernels gives).
#       Each line also times the answer find() gives when no measurement may decide (the cost
#       model ranks every candidate: `model`) and prints the best measured estimate of a generic
#       kernel, so the choice any threshold makes (the generic kernel when best_measured <= it,
#       else the model's answer) follows from the line; the summary prints the sweep.
#   flock -x /tmp/opgen-measure.lock scripts/bench/generic.sh time-heldout
#       the threshold's own data: the same leave-one-out run on the 9 source shapes (3 per op),
#       which are never reported; the sweep over them picks the threshold (runtime/Lookup.cpp
#       kMeasuredGoodEnough) that the reported run uses, chosen on shapes it does not report.
#   OPGEN_BUILD_DIR (default build) picks the build folder; it is configured with
#   -DOPGEN_BUILD_CACHE_BENCH=ON. OPGEN_BENCH_WORK (default $OPGEN_BUILD_DIR/generic-bench) is the
#   folder of all.db and the outputs: an earlier campaign's all.db can be timed again there.
#   OPGEN_BENCH_OPS (default "matmul conv2d_nchw softmax") limits `generic`, `time` and
#   `time-heldout` to those ops (`generic` then drops and rebuilds only their generic code).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${OPGEN_BUILD_DIR:-$root/build}"
work="${OPGEN_BENCH_WORK:-$build/generic-bench}"
read -r -a ops <<<"${OPGEN_BENCH_OPS:-matmul conv2d_nchw softmax}"
opgen="$build/bin/opgen"
source "$root/scripts/bench/signing.sh"
trials="${OPGEN_BENCH_TRIALS:-24}"
mkdir -p "$work"
# Tuned shapes that are never bench shapes.
sources=("matmul M=256,N=256,K=256" "matmul M=64,N=512,K=128" "matmul M=128,N=128,K=128"
    "conv2d_nchw N=1,C=32,H=28,W=28,F=32" "conv2d_nchw N=1,C=16,H=14,W=14,F=32"
    "conv2d_nchw N=1,C=64,H=56,W=56,F=64"
    "softmax M=256,N=1024" "softmax M=64,N=128" "softmax M=1024,N=256")
shapes=(
    "matmul M=200,N=300,K=150" "matmul M=384,N=128,K=512" "matmul M=100,N=700,K=100"
    "matmul M=333,N=333,K=333" "matmul M=64,N=1000,K=256" "matmul M=500,N=250,K=100"
    "matmul M=150,N=150,K=600" "matmul M=48,N=768,K=384" "matmul M=700,N=90,K=300"
    "matmul M=260,N=520,K=260"
    "conv2d_nchw N=1,C=16,H=56,W=56,F=24" "conv2d_nchw N=1,C=48,H=20,W=20,F=40"
    "conv2d_nchw N=2,C=32,H=14,W=14,F=64" "conv2d_nchw N=1,C=24,H=33,W=33,F=24"
    "conv2d_nchw N=1,C=64,H=7,W=7,F=96" "conv2d_nchw N=1,C=32,H=40,W=40,F=48"
    "conv2d_nchw N=1,C=8,H=64,W=64,F=16" "conv2d_nchw N=1,C=96,H=10,W=10,F=64"
    "conv2d_nchw N=4,C=16,H=16,W=16,F=16" "conv2d_nchw N=1,C=40,H=25,W=25,F=80"
    "softmax M=100,N=1000" "softmax M=512,N=333" "softmax M=37,N=4096" "softmax M=2000,N=64"
    "softmax M=256,N=1500" "softmax M=300,N=700" "softmax M=64,N=2048" "softmax M=1500,N=128"
    "softmax M=800,N=800" "softmax M=10,N=10000")
tune() {  # op shape
    "$opgen" tune --op "$1" --shape "$2" --trials "$trials" --min-time 20 --threads 1 --jobs 1 --quiet \
        --seed 1 --db "$work/all.db" >/dev/null
}
target_of() {  # db
    "$opgen" db stats --db "$1" --json |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["by_target_and_op"][0]["target"])'
}
# The entries of "$@" ("op shape") whose op is one of OPGEN_BENCH_OPS.
of_ops() {
    local s
    for s in "$@"; do
        case " ${ops[*]} " in *" ${s%% *} "*) echo "$s" ;; esac
    done
}
# Per op, the median ratios of the generic kernels, the chosen answers and the model's answers in
# `$1` (opgen_choice_bench lines), and the choice each threshold of the sweep would make.
summarize() {
    python3 "$root/scripts/bench/generic-choices.py" "$1"
}
tune_all() {
    cmake -S "$root" -B "$build" -DOPGEN_BUILD_CACHE_BENCH=ON >/dev/null
    cmake --build "$build" -j2 --target opgen_choice_bench opgen >/dev/null
    for s in "${sources[@]}" "${shapes[@]}"; do set -- $s; tune "$1" "$2"; done
}
# Generic code of every tuned shape, each timed at the op's other tuned shapes (one thread).
# Existing generic code and its timings are dropped first: the code follows this build's lowering.
generic_all() {
    python3 - "$work/all.db" "${ops[@]}" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
ops = sys.argv[2:]
for table in ("generic_timings", "generic_code"):
    db.execute(f"DELETE FROM {table} WHERE op_name IN ({','.join('?' * len(ops))})", ops)
db.commit()
PY
    local op_flags=()
    for op in "${ops[@]}"; do op_flags+=(--op "$op"); done
    HL_NUM_THREADS=1 "$opgen" db compile --generic "${op_flags[@]}" --db "$work/all.db"
}
# Leave-one-out: for each shape S (after the output file), a copy of all.db without any row of S
# answers S through opgen_choice_bench, S's own tune in all.db the reference; then the summary.
time_shapes() {  # output shape...
    local out="$1"
    shift
    local target
    target="$(target_of "$work/all.db")"
    echo "generic-bench: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), target $target, $trials trials per tune"
    export HL_NUM_THREADS=1
    extra=()
    if [ "${OPGEN_BENCH_ALL_GENERIC:-0}" = 1 ]; then extra=(--all-generic 1); fi
    for s in "$@"; do
        set -- $s
        # A copy of all.db that never tuned this shape: every row of the shape removed.
        python3 - "$work/all.db" "$work/loo.db" "$1" "$2" <<'PY'
import shutil, sqlite3, sys
src, dst, op, shape = sys.argv[1:]
shutil.copyfile(src, dst)
want = dict(p.split('=') for p in shape.split(','))
db = sqlite3.connect(dst)
keys = [s for (s,) in db.execute("SELECT DISTINCT shape FROM kernels WHERE op_name = ?", (op,))
        if all(dict(p.split('=') for p in s.split(',')).get(k) == v for k, v in want.items())]
assert len(keys) == 1, f"{op} {shape}: {len(keys)} tuned rows"
for table in ("kernels", "kernel_code", "generic_code", "generic_timings", "measurements", "kernel_variants", "tuning_runs"):
    db.execute(f"DELETE FROM {table} WHERE op_name = ? AND shape = ?", (op, keys[0]))
# Nor timed any generic kernel at it.
db.execute("DELETE FROM generic_timings WHERE op_name = ? AND at_shape = ?", (op, keys[0]))
db.commit()
db.execute("VACUUM")
PY
        "$build/tests/runtime/opgen_choice_bench" --db "$work/loo.db" --tuned-db "$work/all.db" \
            --target "$target" --op "$1" --shape "$2" "${extra[@]}"
    done | tee "$out"
    summarize "$out"
}
case "${1:-}" in
tune)
    tune_all
    generic_all
    ;;
tune-shapes)  # the tunes alone (shared lock)
    tune_all
    ;;
generic)  # generic code and its timings again, from this build's lowering (shared lock)
    generic_all
    ;;
time)  # the reported shapes (exclusive lock)
    mapfile -t picked < <(of_ops "${shapes[@]}")
    time_shapes "$work/choices.txt" "${picked[@]}"
    ;;
time-heldout)  # the source shapes, for the threshold (exclusive lock)
    mapfile -t picked < <(of_ops "${sources[@]}")
    time_shapes "$work/heldout.txt" "${picked[@]}"
    ;;
*)
    echo "usage: generic.sh tune|tune-shapes|generic|time|time-heldout" >&2
    exit 2
    ;;
esac
