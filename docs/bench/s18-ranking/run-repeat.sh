#!/bin/bash
# 760294e: first calls on the campaign caches (their generic timings now from the stored code),
# then two more leave-one-out timing runs per op (the answers' kernels timed again).
L="flock -x /tmp/opgen-gate.lock flock -x /tmp/opgen-measure.lock"
B=/work/main/build-cache
export OPGEN_BUILD_DIR=$B
T=x86-64-avx512:t1
{
echo "first calls $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg)"
for round in 1 2; do
  echo "== round $round"
  for dos in "aot-conv conv2d_nchw N=1,C=32,H=40,W=40,F=48,KH=3,KW=3,stride=1,pad=1,dilation=1" "aot-conv conv2d_nchw N=1,C=20,H=30,W=30,F=36" \
             "aot-conv conv2d_nchw N=1,C=8,H=50,W=50,F=16" "aot-ms softmax M=333,N=777" "aot-ms matmul M=128,N=128,K=128" "aot-ms matmul M=100,N=200,K=300"; do
    set -- $dos
    HL_NUM_THREADS=1 $L $B/tests/db/opgen_kernel_bench first --db /work/s18/$1/all.db --target $T --op $2 --shape $3 --runs 20
  done
done
echo "end $(date -u +%T)"
} > /work/s18/firstcall.txt 2>&1
for run in 2 3; do
  OPGEN_BENCH_OPS=conv2d_nchw OPGEN_BENCH_WORK=/work/s18/aot-conv $L /work/main/scripts/generic-bench.sh time > /work/s18/aot-conv/time-run$run.log 2>&1
  cp /work/s18/aot-conv/choices.txt /work/s18/aot-conv/choices-run$run.txt
  OPGEN_BENCH_OPS="matmul softmax" OPGEN_BENCH_WORK=/work/s18/aot-ms $L /work/main/scripts/generic-bench.sh time > /work/s18/aot-ms/time-run$run.log 2>&1
  cp /work/s18/aot-ms/choices.txt /work/s18/aot-ms/choices-run$run.txt
done
