#!/bin/bash
# Re-tunes the given conv2d_nchw shapes at T threads in /tmp/s10conv/s10.db, each key's old rows removed first.
set -u
T=$1; shift
cd /work/wt-conv
for S in "$@"; do
  canon=$(python3 -c "
import sys
kv=dict(x.split('=') for x in sys.argv[1].split(','))
kv.setdefault('dilation','1')
print(','.join(f'{k}={kv[k]}' for k in sorted(kv)))" "$S")
  for tbl in measurements kernels kernel_code; do
    sqlite3 /tmp/s10conv/s10.db "delete from $tbl where op_name='conv2d_nchw' and shape='$canon' and target='x86-64-avx512:t$T'"
  done
  echo "== $S ($canon) t$T $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
  flock -s /tmp/opgen-gate.lock true
  flock -s /tmp/opgen-measure.lock env OPGEN_OPS_PATH=tests/bench/ops build/opgen/opgen tune --op conv2d_nchw --shape "$S" \
     --threads $T --trials 24 --seed 1 --jobs 1 --quiet --db /tmp/s10conv/s10.db --force 2>&1 | tail -3
  sqlite3 /tmp/s10conv/s10.db "select round(gflops,1), schedule_json from kernels where shape='$canon' and target='x86-64-avx512:t$T'" | cut -c1-300
done
