#!/usr/bin/env bash
# Schedule variants under memory-bandwidth contention (issue #11): builds opgen and
# opgen_variants_bench in a build folder (-DOPGEN_BUILD_VARIANTS_BENCH=ON), tunes matmul
# M=64,N=1024,K=4096 and a 1x1 conv2d_nchw N=1,C=64,H=56,W=56,F=256 with their contention variants
# (`opgen tune --variants`, one kernel thread) into a cache file, then runs the benchmark for each:
# calls through the dispatcher vs the quiet winner alone, with and without opgen's streaming load.
#
#   scripts/variants-bench.sh [--db FILE] [--levels 0.5,1] [--trials N] [--load-level L]
#                             [--calls N] [--rounds N]
#   OPGEN_VARIANTS_BENCH_BUILD_DIR (default build-variants-bench) picks the build folder.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${OPGEN_VARIANTS_BENCH_BUILD_DIR:-$root/build-variants-bench}"
db="$build/variants.db"
levels=0.5,1
trials=24
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
        -h|--help) sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
    "$build/opgen/opgen" tune --op "$op" --shape "$shape" --threads 1 --trials "$trials" --variants "$levels" \
        --db "$db" --quiet
    "$build/tests/tuner/opgen_variants_bench" --db "$db" --op "$op" --shape "$shape" --threads 1 \
        --level "$load_level" --calls "$calls" --rounds "$rounds"
}
run_one matmul M=64,N=1024,K=4096
run_one conv2d_nchw N=1,C=64,H=56,W=56,F=256,KH=1,KW=1,pad=0
