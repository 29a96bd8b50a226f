#!/usr/bin/env bash
# Session 16's conv campaign (issue 20), as scripts/generic-bench.sh's modes. Session 14's 24-trial
# tunes (/work/s14/campaign/all.db: 3 source and 10 bench shapes per op) are kept; only the conv
# generic code is rebuilt with this build's lowering (cfc8b08), timed, and each shape answered
# leave-one-out. Runs 1 and 2 (choices-conv.txt, choices-conv-repeat.txt, choices-conv-heldout.txt)
# ran these same steps from a one-off copy of the script's leave-one-out loop; run 3 and the
# held-out repeat ran through the script itself.
set -euo pipefail
export OPGEN_BUILD_DIR=/work/main/build-cache OPGEN_BENCH_WORK=/work/s16/gb OPGEN_BENCH_OPS=conv2d_nchw
L="flock -x /tmp/opgen-gate.lock flock -x /tmp/opgen-measure.lock"
mkdir -p "$OPGEN_BENCH_WORK"
cp /work/s14/campaign/all.db "$OPGEN_BENCH_WORK/all.db"
$L /work/main/scripts/generic-bench.sh generic       # about 14 minutes: 13 rows compiled, 169 timings
$L /work/main/scripts/generic-bench.sh time          # choices.txt: the 10 bench shapes
$L /work/main/scripts/generic-bench.sh time-heldout  # heldout.txt: the 3 source shapes
python3 sim.py "$OPGEN_BENCH_WORK/choices.txt" "$OPGEN_BENCH_WORK/all.db"
