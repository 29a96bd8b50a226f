#!/bin/bash
# Crude check: the conv campaign's generic code rebuilt with LLVM's SLP vectorizer off for the whole
# `db compile --generic` process (the tuned kernels' cached AOT code is untouched), then timed.
export OPGEN_BUILD_DIR=/work/main/build-cache OPGEN_BENCH_WORK=/work/s17/gb-noslp OPGEN_BENCH_OPS=conv2d_nchw
L="flock -x /tmp/opgen-gate.lock flock -x /tmp/opgen-measure.lock"
HL_LLVM_ARGS=-vectorize-slp=false $L /work/main/scripts/generic-bench.sh generic > /work/s17/gb-noslp/generic.log 2>&1
$L /work/main/scripts/generic-bench.sh time > /work/s17/gb-noslp/time.log 2>&1
