#!/usr/bin/env bash
# Session 17's measurements, in order (paths as they were on the host; L is the exclusive lock).
L="flock -x /tmp/opgen-gate.lock flock -x /tmp/opgen-measure.lock"
K=/work/main/build-cache/tests/db/opgen_kernel_bench
# Section 1 (issue 18): the stride-2 1x1 points, emitted and timed by stride2-drv.cpp.txt.
#   python3 stride2-sweep.py 1 256 56 56 512 2 win:2/28,2/28,64/64,64 ...   (then timeall over the dirs)
# Section 2: perf of the cached generic and exact kernels of C=16 F=32 14x14 (mkL.py of s16-generic).
python3 ../s16-generic/mkL.py /work/s16/campaign/all.db L32.db C=16,F=32,H=14
$L perf record -o pg.data $K repeat --db L32.db --target x86-64-avx512:t1 --op conv2d_nchw \
    --shape N=1,C=16,H=14,W=14,F=32 --calls 60000
$L perf record -o pe.data $K repeat --db /work/s16/campaign/all.db --target x86-64-avx512:t1 --op conv2d_nchw \
    --shape N=1,C=16,H=14,W=14,F=32,KH=3,KW=3,stride=1,pad=1,dilation=1 --calls 60000
python3 classes.py perf-generic-slp.txt L32.s 3c00:4000 4000:4600 4600:5000 5400:5700
# The same generic row built with and without the SLP vectorizer (one-slp.db, one-noslp.db: the
# campaign cache cut to C=16 F=32 14x14's row, `opgen db compile --generic` with and without
# HL_LLVM_ARGS=-vectorize-slp=false), then after c55ae2a (one-new.db), each timed by
#   $L $K repeat --db one-X.db --target x86-64-avx512:t1 --op conv2d_nchw --shape N=1,C=16,H=14,W=14,F=32 --calls 20000
# Sections 4 and 5: run-noslp.sh (crude), run-gb1.sh (conv), run-ms.sh (matmul, softmax); runs 2
# and 3 of the conv timing: OPGEN_BENCH_WORK=/work/s17/gb1 ... scripts/generic-bench.sh time.
# Section 4's same-schedule comparison: mkexact.py, `opgen db compile`, then repeat on both caches.
# Section 5's same-kernel comparison: one-generic.py on both caches, then repeat at four shapes.
