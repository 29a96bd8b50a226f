#!/bin/bash
# matmul and softmax: their generic code rebuilt by c55ae2a's workers (SLP off), against the same
# cache with the generic code as session 16 left it (SLP on), each timed leave-one-out.
while pgrep -f run-gb1.sh >/dev/null; do sleep 10; done
L="flock -x /tmp/opgen-gate.lock flock -x /tmp/opgen-measure.lock"
export OPGEN_BUILD_DIR=/work/main/build-cache OPGEN_BENCH_OPS="matmul softmax"
OPGEN_BENCH_WORK=/work/s17/gb-ms $L /work/main/scripts/generic-bench.sh generic > /work/s17/gb-ms/generic.log 2>&1
OPGEN_BENCH_WORK=/work/s17/gb-ms-base $L /work/main/scripts/generic-bench.sh time > /work/s17/gb-ms-base/time.log 2>&1
OPGEN_BENCH_WORK=/work/s17/gb-ms $L /work/main/scripts/generic-bench.sh time > /work/s17/gb-ms/time.log 2>&1
