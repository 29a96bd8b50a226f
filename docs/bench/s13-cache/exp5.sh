#!/usr/bin/env bash
set -uo pipefail
cd /work/wt-cache
echo "hold start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
export HL_NUM_THREADS=1
o=build/opgen/opgen; t=x86-64-avx512:t1; db=/tmp/s13c/conv.db
rm -f $db
for s in N=1,C=32,H=28,W=28,F=32 N=1,C=16,H=14,W=14,F=32; do
  $o tune --op conv2d_nchw --shape $s --trials 12 --min-time 20 --threads 1 --jobs 1 --quiet --seed 1 --db $db >/dev/null
  echo "tuned $s $(date -u +%T)"
done
$o db compile --generic --op conv2d_nchw --db $db | tail -2
python3 -c "
import sqlite3
for r in sqlite3.connect('$db').execute('select shape, length(bytes) from generic_code'): print('generic blob', r)"
build/tests/db/opgen_kernel_bench first --db $db --target $t --op conv2d_nchw --shape N=1,C=20,H=30,W=30,F=36 --runs 20
echo "hold end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
