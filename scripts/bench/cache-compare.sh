#!/usr/bin/env bash
# Derived and predicted answers against full tunings: tunes 3 base shapes each of
# matmul and conv2d_nchw into a cache on the host (1 thread), then for 10 shapes never tuned
# measures, interleaved in 3 rounds, the kernel of a full tuning of that shape, the library's
# derived answer and the model's predicted answer, and prints time ratios over the tuned kernel.
# CPU-heavy (16 tunings): run it when the machine is otherwise quiet.
#
#   scripts/bench/cache-compare.sh [--db FILE] [--trials N]   (default: a new cache, 24 trials per tuning)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${OPGEN_CACHE_BENCH_BUILD_DIR:-$root/build-cache-bench}"
db="$build/cache-compare.db"
trials=24
while [ $# -gt 0 ]; do
    case "$1" in
        --db) db="$2"; shift 2 ;;
        --trials) trials="$2"; shift 2 ;;
        -h|--help) sed -n '2,8p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "error: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
if [ ! -f "$build/build.ninja" ]; then
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPGEN_BUILD_CACHE_BENCH=ON >/dev/null
fi
nice cmake --build "$build" -j2 --target opgen_cache_bench opgen-worker >/dev/null
"$build/tests/runtime/opgen_cache_bench" compare --db "$db" --trials "$trials"
