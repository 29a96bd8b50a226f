#!/bin/bash
# bb40e10's ranking (ratios carried by the register tiles' overwork) on session 17's caches: the
# same code and timings, only the lookup's estimate changed. Leave-one-out, reported and held-out.
L="flock -x /tmp/opgen-gate.lock flock -x /tmp/opgen-measure.lock"
export OPGEN_BUILD_DIR=/work/main/build-cache
OPGEN_BENCH_OPS=conv2d_nchw OPGEN_BENCH_WORK=/work/s18/gb1 $L /work/main/scripts/generic-bench.sh time > /work/s18/gb1/time.log 2>&1
OPGEN_BENCH_OPS=conv2d_nchw OPGEN_BENCH_WORK=/work/s18/gb1 $L /work/main/scripts/generic-bench.sh time-heldout > /work/s18/gb1/heldout.log 2>&1
OPGEN_BENCH_OPS="matmul softmax" OPGEN_BENCH_WORK=/work/s18/gb-ms $L /work/main/scripts/generic-bench.sh time > /work/s18/gb-ms/time.log 2>&1
OPGEN_BENCH_OPS="matmul softmax" OPGEN_BENCH_WORK=/work/s18/gb-ms $L /work/main/scripts/generic-bench.sh time-heldout > /work/s18/gb-ms/heldout.log 2>&1
