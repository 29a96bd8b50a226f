#!/bin/bash
# First call, old (98a8cf3) and new (760294e) lookup library alternated, on the campaign cache and on
# a copy with one generic conv row (the same kernel chosen by both).
T=x86-64-avx512:t1
export HL_NUM_THREADS=1
echo "first calls $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
for round in 1 2; do
  for lib in old new; do
    if [ $lib = old ]; then B=/work/wt-old/build-k/tests/db/opgen_kernel_bench; else B=/work/main/build-cache/tests/db/opgen_kernel_bench; fi
    for db in aot-conv/all.db one-row.db; do
      echo "== round $round, $lib library, $db"
      $B first --db /work/s18/$db --target $T --op conv2d_nchw --shape N=1,C=20,H=30,W=30,F=36 --runs 20
    done
  done
done
