#!/usr/bin/env bash
# Session 14, first hold: s13's n:4096 caches (/tmp/s13c, copied to /tmp/s14) served by
# opgen_generic_bench as s13 ran them, the same generic code rebuilt by this build's
# `db compile --generic`, and jit-vs-aot.cpp (JIT and AOT compiled in one process, alternated).
set -uo pipefail
cd /work/wt-s14
echo "hold start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
export HL_NUM_THREADS=1
o=build/opgen/opgen; t=x86-64-avx512:t1; d=/tmp/s14
echo "s13's stored code:"
build/tests/db/opgen_generic_bench --generic-db $d/loo4096.db --tuned-db $d/sm4096.db --target $t --op softmax --shape M=100,N=1000
echo "jit-vs-aot, target x86-64-avx512:"
/tmp/s14-jit-vs-aot "$(cat $d/p4096.json)" M=37,N=4096 M=100,N=1000 $d/x512 5 softmax x86-64-avx512
echo "hold end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
