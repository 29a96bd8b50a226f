#!/usr/bin/env bash
# Kernel-cache lookup benchmark: builds opgen_cache_bench and opgen in a build folder
# (-DOPGEN_BUILD_CACHE_BENCH=ON), fills a cache with 100,000 kernel rows (once; kept at --db), then
# prints p50/p99 answer times through the library (exact; derived and predicted for matmul and
# conv2d_nchw, and for the issue's four shapes computed afresh 50 times each, with how those answers
# compare with the enumerated legal space's) and per process through the command line
# (`opgen query`: process start, op parsing and, for derived, reading the op's tuned shapes).
#
#   scripts/bench/cache-lookup.sh [--db FILE] [--lookups N] [--cli-runs N]
#   OPGEN_CACHE_BENCH_BUILD_DIR (default build-cache-bench) picks the build folder.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${OPGEN_CACHE_BENCH_BUILD_DIR:-$root/build-cache-bench}"
db="$build/cache-bench.db"
lookups=20000
cli_runs=30
while [ $# -gt 0 ]; do
    case "$1" in
        --db) db="$2"; shift 2 ;;
        --lookups) lookups="$2"; shift 2 ;;
        --cli-runs) cli_runs="$2"; shift 2 ;;
        -h|--help) sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "error: unknown argument '$1'" >&2; exit 2 ;;
    esac
done

if [ ! -f "$build/build.ninja" ]; then
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPGEN_BUILD_CACHE_BENCH=ON >/dev/null
fi
nice cmake --build "$build" -j2 --target opgen_cache_bench opgen >/dev/null

"$build/tests/runtime/opgen_cache_bench" lookup --db "$db" --lookups "$lookups"

# The command line: one process per query (start-up, op parsing, target detection, the lookup).
cli() {
    local label="$1"; shift
    local times=()
    for _ in $(seq "$cli_runs"); do
        local start end
        start=$(date +%s%N)
        "$build/bin/opgen" query --db "$db" --target x86-64-avx512 --threads 1 "$@" >/dev/null
        end=$(date +%s%N)
        times+=($(( (end - start) / 1000 )))
    done
    printf '%s\n' "${times[@]}" | sort -n | awk -v label="$label" '
        { t[NR] = $1 } END { printf "%-34s n=%-6d p50 %9.1f us   p99 %9.1f us\n", label, NR, t[int(NR * 0.5) + 1], t[NR < 100 ? NR : int(NR * 0.99) + 1] }'
}
cli "command line, exact (--exact)" --op matmul --shape M=496,N=496,K=496 --exact
cli "command line, exact" --op matmul --shape M=496,N=496,K=496
cli "command line, derived" --op matmul --shape M=500,N=500,K=500
cli "command line, derived conv2d" --op conv2d_nchw --shape N=1,C=64,H=56,W=56,F=64
