#!/usr/bin/env bash
# Session 14, after the fix: the n:4096 generic softmax served from the cache at M=100,N=1000,
# old code (s13's stored code) and new code (prep.sh with this build) alternated in one hold,
# and the new lowering's JIT and AOT in one process (jit-vs-aot.cpp).
set -uo pipefail
cd /work/wt-s14
echo "hold start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
export HL_NUM_THREADS=1
t=x86-64-avx512:t1; d=/tmp/s14; b=build/tests/db/opgen_generic_bench
for i in 1 2; do
  echo -n "old code: "; $b --generic-db $d/loo4096.db --tuned-db $d/sm4096.db --target $t --op softmax --shape M=100,N=1000
  echo -n "new code: "; $b --generic-db $d/new-loo.db --tuned-db $d/new.db --target $t --op softmax --shape M=100,N=1000
done
/tmp/s14-jit-vs-aot-new "$(cat $d/p4096.json)" M=37,N=4096 M=100,N=1000 $d/new 5 softmax x86-64-avx512
echo "hold end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
