#!/usr/bin/env bash
# First call in a fresh process on session 14's full-size campaign cache (13 tuned shapes and 13
# generic rows an op: 3.4 MB of generic conv code), the generic rows read with their bytes (old
# library, build-exp) and without (new, build-cache), alternated twice in one hold.
set -euo pipefail
db=/work/s15/fullsize.db
cp /work/s14/campaign/all.db $db
T=x86-64-avx512:t1
export HL_NUM_THREADS=1
echo "first calls $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
for round in 1 2; do
  for lib in old new; do
    if [ $lib = old ]; then B=/work/main/build-exp/tests/db/opgen_kernel_bench; else B=/work/main/build-cache/tests/db/opgen_kernel_bench; fi
    echo "== round $round, $lib library"
    for os in "conv2d_nchw N=1,C=32,H=40,W=40,F=48,KH=3,KW=3,stride=1,pad=1,dilation=1" "conv2d_nchw N=1,C=20,H=30,W=30,F=36" \
              "softmax M=333,N=777" "matmul M=128,N=128,K=128" "matmul M=100,N=200,K=300"; do
      set -- $os
      $B first --db $db --target $T --op $1 --shape $2 --runs 20
    done
  done
done
echo "end $(date -u +%T)"
