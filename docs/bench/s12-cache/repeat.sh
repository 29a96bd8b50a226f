#!/usr/bin/env bash
cd /work/wt-cache
echo "hold start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
export HL_NUM_THREADS=1
db=build/kernel-bench.db
target=$(build/opgen/opgen db stats --db $db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["by_target_and_op"][0]["target"])')
for i in 1 2; do
build/tests/db/opgen_kernel_bench repeat --db $db --target "$target" --op matmul --shape M=64,N=64,K=64 --calls 200000
build/tests/db/opgen_kernel_bench repeat --db $db --target "$target" --op conv2d_nchw --shape N=1,C=16,H=14,W=14,F=16,KH=3,KW=3,stride=1,pad=1,dilation=1 --calls 200000
done
echo "hold end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
