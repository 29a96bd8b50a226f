#!/usr/bin/env bash
# Under flock -x gate, flock -s measure: the generic code and its timings, then kernel-bench.db.
set -uo pipefail
cd /work/wt-cache
echo "generic start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
scripts/generic-bench.sh generic; echo "generic rc $?"
echo "generic end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
db=build/kernel-bench.db
if [ ! -f "$db" ]; then
  build/opgen/opgen tune --op matmul --shape M=64,N=64,K=64 --trials 8 --threads 1 --quiet --db "$db" >/dev/null
  build/opgen/opgen tune --op conv2d_nchw --shape N=1,C=16,H=14,W=14,F=16,KH=3,KW=3,stride=1,pad=1,dilation=1 --trials 8 --threads 1 --quiet --db "$db" >/dev/null
fi
echo "kernel-bench.db end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
