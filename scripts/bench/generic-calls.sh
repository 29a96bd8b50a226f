#!/usr/bin/env bash
# Shape-generic kernels straight from the cache, on the campaign cache that
# scripts/bench/generic.sh builds (WORK/all.db: its tunes, their code and their generic code):
# the first call in a fresh process (open + find + load + call; 20 processes, two rounds) of one
# exact conv key and of shapes that no key tuned, served by a generic kernel (a conv shape given
# without KH, KW, stride, pad and dilation misses every exact key); then the overhead of a
# repeated lookup + call of a generic matmul at a shape never tuned (200,000 calls). One thread.
# Run `scripts/bench/generic.sh tune` first, then time under the exclusive lock:
#   flock -x /tmp/opgen-measure.lock scripts/bench/generic-calls.sh
#   OPGEN_BUILD_DIR (default build; configured with -DOPGEN_BUILD_CACHE_BENCH=ON) and
#   OPGEN_BENCH_WORK (default $OPGEN_BUILD_DIR/generic-bench) as for generic.sh.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${OPGEN_BUILD_DIR:-$root/build}"
work="${OPGEN_BENCH_WORK:-$build/generic-bench}"
opgen="$build/bin/opgen"
source "$root/scripts/bench/signing.sh"
bench="$build/tests/runtime/opgen_kernel_bench"
db="$work/all.db"
[ -f "$db" ] || { echo "error: no campaign cache '$db' (run scripts/bench/generic.sh tune first)" >&2; exit 1; }
cmake -S "$root" -B "$build" -DOPGEN_BUILD_CACHE_BENCH=ON >/dev/null
cmake --build "$build" -j2 --target opgen_kernel_bench opgen >/dev/null
target="$("$opgen" db stats --db "$db" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["by_target_and_op"][0]["target"])')"
echo "generic-calls: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), target $target, cache $db"
export HL_NUM_THREADS=1
for round in 1 2; do
    echo "== round $round"
    for op_shape in "conv2d_nchw N=1,C=32,H=40,W=40,F=48,KH=3,KW=3,stride=1,pad=1,dilation=1" \
        "conv2d_nchw N=1,C=20,H=30,W=30,F=36" "conv2d_nchw N=1,C=8,H=50,W=50,F=16" \
        "softmax M=333,N=777" "matmul M=100,N=200,K=300"; do
        set -- $op_shape
        "$bench" first --db "$db" --target "$target" --op "$1" --shape "$2" --runs 20
    done
done
"$bench" repeat --db "$db" --target "$target" --op matmul --shape M=20,N=50,K=30 --calls 200000
