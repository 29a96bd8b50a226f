#!/bin/bash
# The conv campaign with c55ae2a (generic code compiled by workers without the SLP vectorizer;
# timings in the compiling process, JIT, default LLVM options): session 14's tunes, generic code
# rebuilt, each bench shape answered leave-one-out; then the held-out source shapes.
export OPGEN_BUILD_DIR=/work/main/build-cache OPGEN_BENCH_WORK=/work/s17/gb1 OPGEN_BENCH_OPS=conv2d_nchw
L="flock -x /tmp/opgen-gate.lock flock -x /tmp/opgen-measure.lock"
$L /work/main/scripts/generic-bench.sh generic > /work/s17/gb1/generic.log 2>&1
$L /work/main/scripts/generic-bench.sh time > /work/s17/gb1/time.log 2>&1
$L /work/main/scripts/generic-bench.sh time-heldout > /work/s17/gb1/heldout.log 2>&1
