#!/bin/bash
# The stored-code timer (this session's uncommitted tree, then its commit): session 17's caches with every generic
# timing dropped and taken again from the stored code; then the leave-one-out campaign, reported
# and held-out shapes, every generic kernel timed too.
L="flock -x /tmp/opgen-gate.lock flock -x /tmp/opgen-measure.lock"
B=/work/main/build-cache
export OPGEN_BUILD_DIR=$B
for w in aot-conv aot-ms; do
  sqlite3 /work/s18/$w/all.db "DELETE FROM generic_timings"
done
cd /work/s18/aot-conv && HL_NUM_THREADS=1 $L $B/opgen/opgen db compile --generic --op conv2d_nchw --db all.db > retime.log 2>&1
cd /work/s18/aot-ms && HL_NUM_THREADS=1 $L $B/opgen/opgen db compile --generic --op matmul --op softmax --db all.db > retime.log 2>&1
export OPGEN_BENCH_ALL_GENERIC=1
OPGEN_BENCH_OPS=conv2d_nchw OPGEN_BENCH_WORK=/work/s18/aot-conv $L /work/main/scripts/generic-bench.sh time > /work/s18/aot-conv/time.log 2>&1
OPGEN_BENCH_OPS=conv2d_nchw OPGEN_BENCH_WORK=/work/s18/aot-conv $L /work/main/scripts/generic-bench.sh time-heldout > /work/s18/aot-conv/heldout.log 2>&1
OPGEN_BENCH_OPS="matmul softmax" OPGEN_BENCH_WORK=/work/s18/aot-ms $L /work/main/scripts/generic-bench.sh time > /work/s18/aot-ms/time.log 2>&1
OPGEN_BENCH_OPS="matmul softmax" OPGEN_BENCH_WORK=/work/s18/aot-ms $L /work/main/scripts/generic-bench.sh time-heldout > /work/s18/aot-ms/heldout.log 2>&1
