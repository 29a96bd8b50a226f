#!/usr/bin/env bash
cd /work/wt-cache
echo "hold start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
export HL_NUM_THREADS=1
t=x86-64-avx512:t1
build/tests/db/opgen_generic_bench --generic-db /tmp/wt-cache-s12/loo-sm.db --tuned-db build/generic-bench/all.db --target $t --op softmax --shape M=100,N=1000
build/tests/db/opgen_choice_bench --db /tmp/wt-cache-s12/loo-sm.db --tuned-db build/generic-bench/all.db --target $t --op softmax --shape M=100,N=1000 | cut -c1-400
echo "hold end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
