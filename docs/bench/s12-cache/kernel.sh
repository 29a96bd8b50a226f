#!/usr/bin/env bash
# Under flock -x gate, flock -x measure: first call and repeated lookup + call (issue 20's first two
# goals): exact kernels (scripts/kernel-bench.sh), then never-tuned shapes served by generic code
# from the campaign's all.db (session 8's shapes).
set -uo pipefail
cd /work/wt-cache
stamp() { echo "$1 $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"; }
stamp "hold start"
scripts/kernel-bench.sh
export HL_NUM_THREADS=1
db=build/generic-bench/all.db
target=$(build/opgen/opgen db stats --db $db --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["by_target_and_op"][0]["target"])')
echo "generic: target $target"
for op_shape in "matmul M=90,N=200,K=333" "softmax M=333,N=777" "conv2d_nchw N=1,C=20,H=30,W=30,F=36"; do
  set -- $op_shape
  build/tests/db/opgen_kernel_bench first --db $db --target "$target" --op "$1" --shape "$2" --runs 30
  timeout 120 build/tests/db/opgen_kernel_bench repeat --db $db --target "$target" --op "$1" --shape "$2" --calls 20000
done
stamp "hold end"
