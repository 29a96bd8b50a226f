#!/usr/bin/env bash
# Schedule variants under memory-bandwidth contention: builds opgen and
# opgen_variants_bench in a build folder (-DOPGEN_BUILD_VARIANTS_BENCH=ON), tunes matmul
# M=32,N=1024,K=2048 and conv2d_nhwc N=1,H=7,W=7,C=512,F=512 3x3 (ResNet-50's last stage) with
# their contention variants (`opgen tune --variants`, one kernel thread) into a cache file, then runs
# the benchmark for each: calls through the dispatcher vs the quiet winner alone, with and without
# opgen's streaming load.
# Why these shapes: their big operand (B 8 MB; the filter 9.4 MB) stays in the 32 MB L3 from call
# to call on a quiet machine and is evicted by the load, and the load slows their quiet winners
# 1.2-2.5x depending on the schedule (measured 2026-11-21). matmul M=64,N=1024,K=4096, the shape
# before, is compute-bound enough that the load slowed its winner 1.01x; 1x1 NCHW convs (64-2048
# channels, 7-112 pixels square) 1.0-1.3x with every candidate within 3-6% of the winner under load:
# no variant can win much there.
#
#   scripts/bench/variants.sh [--db FILE] [--levels 1] [--trials N] [--load-level L]
#                             [--calls N] [--rounds N] [--only matmul|conv2d_nhwc] [--seed N]
#   scripts/bench/variants.sh --only matmul-64x1024x4096   the shape before, alone (not in the default run)
#   OPGEN_VARIANTS_BENCH_BUILD_DIR (default build-variants-bench) picks the build folder.
# On a shared machine run it under the measurement lock: flock -x /tmp/opgen-measure.lock ...
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${OPGEN_VARIANTS_BENCH_BUILD_DIR:-$root/build-variants-bench}"
db="$build/variants.db"
levels=1
trials=48
only=
seed=1
load_level=1
calls=100
rounds=7
while [ $# -gt 0 ]; do
    case "$1" in
        --db) db="$2"; shift 2 ;;
        --levels) levels="$2"; shift 2 ;;
        --trials) trials="$2"; shift 2 ;;
        --load-level) load_level="$2"; shift 2 ;;
        --calls) calls="$2"; shift 2 ;;
        --rounds) rounds="$2"; shift 2 ;;
        --only) only="$2"; shift 2 ;;
        --seed) seed="$2"; shift 2 ;;
        -h|--help) sed -n '2,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "error: unknown argument '$1'" >&2; exit 2 ;;
    esac
done

if [ ! -f "$build/build.ninja" ]; then
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPGEN_BUILD_VARIANTS_BENCH=ON >/dev/null
fi
nice cmake --build "$build" -j2 --target opgen opgen_variants_bench >/dev/null

run_one() {
    local op="$1" shape="$2"
    echo "== $op $shape"
    # The tuning log goes to a file; its variant lines (the search under each level) are shown.
    local log="$build/variants-tune-$op.log"
    "$build/bin/opgen" tune --op "$op" --shape "$shape" --threads 1 --trials "$trials" --variants "$levels" \
        --seed "$seed" --db "$db" 2> "$log"
    grep '^variants: ' "$log" | grep -v ' round ' || true
    "$build/tests/tuner/opgen_variants_bench" --db "$db" --op "$op" --shape "$shape" --threads 1 \
        --level "$load_level" --calls "$calls" --rounds "$rounds"
}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -z "$only" ] || [ "$only" = matmul ]; then
    run_one matmul M=32,N=1024,K=2048
fi
if [ -z "$only" ] || [ "$only" = conv2d_nhwc ]; then
    run_one conv2d_nhwc N=1,H=7,W=7,C=512,F=512,KH=3,KW=3,pad=1
fi
if [ "$only" = matmul-64x1024x4096 ]; then
    run_one matmul M=64,N=1024,K=4096
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
