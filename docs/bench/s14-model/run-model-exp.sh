#!/usr/bin/env bash
# Session 14: the retrained cost model's effect on tuning. (1) tuner curve, conv 14x14x256->256 3x3
# (held out of the training data), 3 seeds, with new1 (old data + this host's tuning data minus the
# held-out keys). (2) ResNet-50's 23 conv keys tuned with new5 (old data + this host's suite keys
# only: 19 of the 23 network keys out of sample), then the network bench.
set -euo pipefail
cd /work/main
m=costmodel/models/x86-64-avx512.model
L="flock -x /tmp/opgen-gate.lock flock -x /tmp/opgen-measure.lock"
cp /work/s14/model/new1.model $m
echo "curve start $(date -u +%T)"
$L env SEEDS="1 2 3" OPS=conv2d14 KEEP=/work/s14/curve-new1 scripts/tuner-curve.sh build-bench > /work/s14/curve-new1.log 2>&1
echo "curve end $(date -u +%T)"
cp /work/s14/model/new5.model $m
rm -f /work/s14/net-new5.db*
$L env DB=/work/s14/net-new5.db /work/s13/tune-net.sh > /work/s14/tune-net-new5.log 2>&1
echo "tune end $(date -u +%T)"
cp /work/s14/model/new1.model $m
$L env OPENBLAS_CORETYPE=SkylakeX build-bench/tests/bench/opgen_bench --db /work/s14/net-new5.db --out /work/s14/net-new5 --ops-dir tests/bench/ops --autoschedulers none --no-naive --no-tune --network manifests/resnet50-bert.json --only conv2d_nchw --threads 1,2 > /work/s14/net-new5-bench.log 2>&1
echo "bench end $(date -u +%T)"
