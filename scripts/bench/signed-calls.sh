#!/usr/bin/env bash
# What signature checking costs a runtime (docs/design.md §2.9): the first call in a
# fresh process (open + find + load + call) and the repeated lookup + call, for the same kernels
# stored signed (trusted through OPGEN_TRUST_FILE) and unsigned (run under the development opt-out
# OPGEN_TRUST_UNSIGNED=1, which skips verification), the two interleaved process by process in one
# run. Uses kernel-calls.sh's cache (a matmul 64^3 and a conv 16->16 14x14 3x3, tuned once, kept).
# Run under the exclusive measurement lock:
#   flock -x /tmp/opgen-measure.lock scripts/bench/signed-calls.sh [ROUNDS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${OPGEN_BUILD_DIR:-$root/build}"
rounds="${1:-40}"
cmake -S "$root" -B "$build" -DOPGEN_BUILD_CACHE_BENCH=ON >/dev/null
cmake --build "$build" -j2 --target opgen_kernel_bench opgen >/dev/null
opgen="$build/bin/opgen"
source "$root/scripts/bench/signing.sh"
bench="$build/tests/runtime/opgen_kernel_bench"
signed="$build/signed-bench.db"
unsigned="$build/unsigned-bench.db"
matmul="M=64,N=64,K=64"
conv="N=1,C=16,H=14,W=14,F=16,KH=3,KW=3,stride=1,pad=1,dilation=1"
if [ ! -f "$signed" ]; then
    "$opgen" tune --op matmul --shape "$matmul" --trials 8 --threads 1 --quiet --db "$signed" >/dev/null
    "$opgen" tune --op conv2d_nchw --shape "$conv" --trials 8 --threads 1 --quiet --db "$signed" >/dev/null
fi
rm -f "$unsigned"*
sqlite3 "$signed" ".backup '$unsigned'"
sqlite3 "$unsigned" "UPDATE kernel_code SET signed_by = '', ed25519_signature = ''"
target="$(sqlite3 "$signed" "SELECT target FROM kernels LIMIT 1")"
echo "signed-calls: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), target $target, $rounds rounds"
export HL_NUM_THREADS=1
for op_shape in "matmul $matmul" "conv2d_nchw $conv"; do
    set -- $op_shape
    for ((r = 0; r < rounds; r++)); do
        echo "signed $("$bench" child --db "$signed" --target "$target" --op "$1" --shape "$2")"
        echo "unsigned $(OPGEN_TRUST_UNSIGNED=1 OPGEN_TRUST_FILE= "$bench" child --db "$unsigned" --target "$target" \
            --op "$1" --shape "$2")"
    done | python3 -c '
import sys, statistics
rows = {}
for line in sys.stdin:
    kind, *v = line.split()
    rows.setdefault(kind, []).append([float(x) / 1000 for x in v])
for kind, r in rows.items():
    total = sorted(x[0] for x in r)
    find = sorted(x[2] for x in r)
    print("  %-8s first call p50 %.3f ms, p90 %.3f ms; find (verify + load) p50 %.3f ms" % (
        kind, statistics.median(total), total[int(0.9 * (len(total) - 1))], statistics.median(find)))
print("  signed / unsigned first call p50: %.3f" % (
    statistics.median(x[0] for x in rows["signed"]) / statistics.median(x[0] for x in rows["unsigned"])))
' | sed "1i first call, $1 $2:"
    echo "repeated lookup + call, $1:"
    echo "  signed:   $("$bench" repeat --db "$signed" --target "$target" --op "$1" --shape "$2" --calls 200000)"
    echo "  unsigned: $(OPGEN_TRUST_UNSIGNED=1 OPGEN_TRUST_FILE= "$bench" repeat --db "$unsigned" --target "$target" \
        --op "$1" --shape "$2" --calls 200000)"
done
