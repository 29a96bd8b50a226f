#!/usr/bin/env bash
# Session 18: ResNet-50's 23 conv keys tuned as in session 14 (24 trials, seed 1, 1 then 2 threads,
# the model trained without the network keys' own measurements: s14's new5, 19 of 23 keys out of
# sample), then the network bench against oneDNN with the shipped model back in place.
set -euo pipefail
out=${OUT:-/work/s18/net}  # where the cache, logs and report go (session 19: OUT=/work/s19/net)
cd /work/main
m=costmodel/models/x86-64-avx512.model
L="flock -x /tmp/opgen-gate.lock flock -x /tmp/opgen-measure.lock"
cp /work/s14/model/new5.model $m
trap 'git -C /work/main checkout -- costmodel/models/x86-64-avx512.model' EXIT
rm -f $out/net.db*
echo "tune start $(date -u +%T)"
$L env DB=$out/net.db OPGEN=/work/main/build-bench/opgen/opgen /work/s13/tune-net.sh > $out/tune-net.log 2>&1
echo "tune end $(date -u +%T)"
git -C /work/main checkout -- costmodel/models/x86-64-avx512.model
$L env OPENBLAS_CORETYPE=SkylakeX build-bench/tests/bench/opgen_bench --db $out/net.db --out $out/out --ops-dir tests/bench/ops --autoschedulers none --no-naive --no-tune --network manifests/resnet50-bert.json --only conv2d_nchw --threads 1,2 > $out/bench.log 2>&1
echo "bench end $(date -u +%T)"
