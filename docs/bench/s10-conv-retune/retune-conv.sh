#!/usr/bin/env bash
# Quiet re-tunes (exclusive lock) of the suite's four 1-thread conv rows under 0.9x oneDNN, with
# merged main (s10-conv's space, carried points from the 2-thread winners), 24 trials, then one
# bench run of those rows at 1 thread.
cd /work/main
export OPGEN_OPS_PATH=tests/bench/ops
uptime
for spec in "conv2d_nchw N=1,C=128,H=28,W=28,F=128,KH=3,KW=3,pad=1" "conv2d_nchw N=1,C=64,H=56,W=56,F=256,KH=1,KW=1,pad=0" \
            "conv2d_nchwc N=1,CB=16,H=14,W=14,FB=16,KH=3,KW=3,pad=1" "conv2d_nchwc N=1,CB=4,H=56,W=56,FB=16,KH=1,KW=1,pad=0"; do
  set -- $spec
  timeout 400 build/opgen/opgen tune --op $1 --shape $2 --threads 1 --trials 24 --force --jobs 1 --db /tmp/s10-suite.db 2>&1 | grep -E "legal space|trial [2-5]/|stopped|^$1 "
done
uptime
timeout 500 build-bench/tests/bench/opgen_bench --db /tmp/s10-suite.db --no-tune --threads 1 --only "conv 28²×128→128 3×3" --only "conv 56²×64→256 1×1" --only "conv nChw16c 14²×256→256 3×3" --only "conv nChw16c 56²×64→256 1×1" --autoschedulers none --no-naive --ops-dir tests/bench/ops --out /work/s10/conv-retune-out 2>&1 | grep -E "^== |GFLOP/s"
uptime
