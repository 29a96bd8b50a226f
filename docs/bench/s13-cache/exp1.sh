#!/usr/bin/env bash
set -euo pipefail
cd /work/wt-cache
echo "hold start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
export HL_NUM_THREADS=1
o=build/opgen/opgen
db=/tmp/s13c/sm.db
rm -f $db
for s in M=37,N=4096 M=100,N=1000; do
  $o tune --op softmax --shape $s --trials 24 --min-time 20 --threads 1 --jobs 1 --quiet --seed 1 --db $db >/dev/null
  echo "tuned $s $(date -u +%T)"
done
$o db compile --generic --op softmax --db $db
python3 - $db <<'PY'
import sqlite3,sys
db=sqlite3.connect(sys.argv[1])
for r in db.execute("select shape, at_shape, time_ms, tuned_ms, ratio from generic_timings"): print(r)
PY
echo "hold end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
