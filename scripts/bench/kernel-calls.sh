#!/usr/bin/env bash
# Kernels straight from the cache: tunes a small matmul and a conv2d_nchw into a cache
# with their code (once; kept), then measures with opgen_kernel_bench, which links opgen_cache
# alone: the first call in a fresh process (open + find + load + call) over 30 processes, and the
# overhead of a lookup + call over the kernel alone, over 200,000 calls. Run it under the
# exclusive measurement lock: flock -x /tmp/opgen-measure.lock scripts/bench/kernel-calls.sh
#   OPGEN_BUILD_DIR (default build) picks the build folder; it is configured with
#   -DOPGEN_BUILD_CACHE_BENCH=ON.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${OPGEN_BUILD_DIR:-$root/build}"
cmake -S "$root" -B "$build" -DOPGEN_BUILD_CACHE_BENCH=ON >/dev/null
cmake --build "$build" -j2 --target opgen_kernel_bench opgen >/dev/null
db="$build/kernel-bench.db"
opgen="$build/bin/opgen"
source "$root/scripts/bench/signing.sh"
bench="$build/tests/runtime/opgen_kernel_bench"
matmul="M=64,N=64,K=64"
conv="N=1,C=16,H=14,W=14,F=16,KH=3,KW=3,stride=1,pad=1,dilation=1"
if [ ! -f "$db" ]; then
    "$opgen" tune --op matmul --shape "$matmul" --trials 8 --threads 1 --quiet --db "$db" >/dev/null
    "$opgen" tune --op conv2d_nchw --shape "$conv" --trials 8 --threads 1 --quiet --db "$db" >/dev/null
fi
target="$("$opgen" db stats --db "$db" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["by_target_and_op"][0]["target"])')"
echo "kernel-bench: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), target $target"
export HL_NUM_THREADS=1
for op_shape in "matmul $matmul" "conv2d_nchw $conv"; do
    set -- $op_shape
    "$bench" first --db "$db" --target "$target" --op "$1" --shape "$2" --runs 30
    "$bench" repeat --db "$db" --target "$target" --op "$1" --shape "$2" --calls 200000
done
