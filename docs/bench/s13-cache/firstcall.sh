#!/usr/bin/env bash
# First call of generic kernels (helper's small caches), old libopgen_cache (portable SHA-256)
# against the new one (SHA extensions), alternated in one hold.
set -uo pipefail
cd /work/wt-cache
echo "hold start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
export HL_NUM_THREADS=1
t=x86-64-avx512:t1; b=build/tests/db/opgen_kernel_bench
for i in 1 2; do
  for lib in old new; do
    if [ $lib = new ]; then export LD_LIBRARY_PATH=/work/main/build/db; else unset LD_LIBRARY_PATH; fi
    echo "== $lib"
    $b first --db /tmp/s13c/conv.db --target $t --op conv2d_nchw --shape N=1,C=20,H=30,W=30,F=36 --runs 20
    $b first --db /tmp/s13c/loo.db --target $t --op softmax --shape M=333,N=777 --runs 20
  done
done
echo "hold end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
