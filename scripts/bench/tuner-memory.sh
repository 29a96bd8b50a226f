#!/usr/bin/env bash
# Peak resident memory of a 50- and a 500-candidate tuning run (the goal: the 500-candidate run
# within 1.2x of the 50-candidate one). Both runs tune the same small matmul from scratch into
# throw-away databases; `opgen tune --json` reports the tuner's own peak (VmHWM) and the largest
# worker's. A small shape keeps 500 candidates to about 10-15 minutes here; the figure still
# means something because what could grow per candidate (JIT modules, compiled candidates held
# by a worker, the tuner's memos, training rows, trial records) does so per candidate, not per
# element: a leak of one module or of the 3 buffers a candidate binds shows over 450 extra
# candidates, and the tuner's own state does not depend on the shape's size.
# Usage: scripts/bench/tuner-memory.sh [build-dir] (default: build)
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$here/build}"
opgen="$build/bin/opgen"
shape="${SHAPE:-M=64,N=64,K=64}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
declare -A tuner worker
for n in 50 500; do
    "$opgen" tune --op matmul --shape "$shape" --threads 1 --trials "$n" --jobs 2 --min-time 2 \
        --db "$tmp/m$n.db" --json --quiet >"$tmp/m$n.json"
    tuner[$n]=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run"]["peak_rss_kb"])' "$tmp/m$n.json")
    worker[$n]=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run"]["worker_peak_rss_kb"])' "$tmp/m$n.json")
    measured=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run"]["measured"])' "$tmp/m$n.json")
    echo "trials=$n measured=$measured tuner_peak_kb=${tuner[$n]} worker_peak_kb=${worker[$n]}"
done
python3 - "${tuner[50]}" "${tuner[500]}" "${worker[50]}" "${worker[500]}" <<'PY'
import sys
t50, t500, w50, w500 = map(float, sys.argv[1:])
rt, rw = t500 / t50, w500 / w50
rs = (t500 + w500) / (t50 + w50)
print(f"ratio 500/50: tuner {rt:.3f}  worker {rw:.3f}  tuner+worker {rs:.3f}  "
      f"(goal <= 1.2: {'met' if max(rt, rw, rs) <= 1.2 else 'NOT met'})")
PY
