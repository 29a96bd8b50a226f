#!/usr/bin/env bash
# Winners that hold: tunes one task from an empty cache once per seed and prints each kept
# winner's time (the median of the final interleaved rounds, taken in the tune's quiet hold), the
# other load the hold saw, and the spread of the winners' times (slowest / fastest). The goal is a
# spread within 1.05 over three seeds.
#
#   scripts/bench/winner-spread.sh [--op OP] [--shape SHAPE] [--trials N] [--threads N] [--seeds "1 2 3"]
#   (default: ResNet-50's conv 14x14x256 -> 256 3x3, conv2d_nchw N=1,C=256,H=14,W=14,F=256, 24
#   trials, 1 thread, seeds 1 2 3). OPGEN_BUILD_DIR picks the build (default build).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
opgen="${OPGEN_BUILD_DIR:-$root/build}/bin/opgen"
op=conv2d_nchw
shape=N=1,C=256,H=14,W=14,F=256
trials=24
threads=1
seeds="1 2 3"
while [ $# -gt 0 ]; do
    case "$1" in
        --op) op="$2"; shift 2 ;;
        --shape) shape="$2"; shift 2 ;;
        --trials) trials="$2"; shift 2 ;;
        --threads) threads="$2"; shift 2 ;;
        --seeds) seeds="$2"; shift 2 ;;
        -h|--help) sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "error: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
[ -x "$opgen" ] || { echo "error: $opgen not built (scripts/build.sh)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; $op $shape, $trials trials, $threads thread(s)"
times=()
for seed in $seeds; do
    "$opgen" tune --op "$op" --shape "$shape" --trials "$trials" --threads "$threads" --seed "$seed" \
        --db "$work/seed$seed.db" --quiet --json > "$work/seed$seed.json"
    line=$(/usr/bin/python3 - "$work/seed$seed.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
r = j["run"]
print("%.6f %.1f %s %.2f" % (j["time_ms"], j["gflops"], str(r["final_held"]).lower(), r["final_other_load"]))
PY
)
    read -r ms gflops held load <<<"$line"
    printf 'seed %-3s winner %9.4f ms  %7.1f GFLOP/s  hold lock %-5s  other load %s cores\n' "$seed" "$ms" "$gflops" "$held" "$load"
    times+=("$ms")
done
printf '%s\n' "${times[@]}" | sort -g | awk '{ t[NR] = $1 } END { printf "spread (slowest / fastest): %.3f over %d seeds\n", t[NR] / t[1], NR }'
