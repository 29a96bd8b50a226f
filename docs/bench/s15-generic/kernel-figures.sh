#!/usr/bin/env bash
# Issue 20's two call figures on the campaign's full-size cache (13 tuned shapes an op, 13 generic
# rows an op): first call in a fresh process, and repeated lookup + call overhead.
set -euo pipefail
db=/work/s15/campaign/all.db
bench=/work/main/build-cache/tests/db/opgen_kernel_bench
opgen=/work/main/build-cache/opgen/opgen
target=$("$opgen" db stats --db "$db" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["by_target_and_op"][0]["target"])')
L="flock -x /tmp/opgen-gate.lock flock -x /tmp/opgen-measure.lock"
export HL_NUM_THREADS=1
echo "kernel figures $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg), target $target, $(du -h $db | cut -f1) cache"
sqlite3 "$db" "select op_name, count(*), sum(length(bytes)) from generic_code group by op_name"
for os in "conv2d_nchw N=1,C=32,H=40,W=40,F=48" "conv2d_nchw N=1,C=20,H=30,W=30,F=36" \
          "softmax M=333,N=777" "matmul M=128,N=128,K=128" "matmul M=100,N=200,K=300"; do
  set -- $os
  $L "$bench" first --db "$db" --target "$target" --op "$1" --shape "$2" --runs 30
done
for os in "matmul M=4,N=4,K=4 200000" "matmul M=128,N=128,K=128 20000" "conv2d_nchw N=1,C=16,H=14,W=14,F=32 50000" \
          "conv2d_nchw N=1,C=20,H=30,W=30,F=36 5000"; do
  set -- $os
  $L "$bench" repeat --db "$db" --target "$target" --op "$1" --shape "$2" --calls "$3"
done
echo "end $(date -u +%T)"
