#!/usr/bin/env bash
# Session 20, a new host (AMD EPYC, Zen 5): ResNet-50's 23 conv keys tuned as in sessions 13-19
# (24 trials, seed 1, 1 then 2 threads) with the shipped cost model (trained on session 14's Intel
# host: no key of this host is in its sample), then the network bench against oneDNN.
set -euo pipefail
out=${OUT:-/work/s20/net}  # where the cache, logs and report go
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." && pwd)
cd "$root"
L="flock -x /tmp/opgen-gate.lock flock -x /tmp/opgen-measure.lock"
mkdir -p "$out"
rm -f "$out"/net.db*
echo "tune start $(date -u +%T)"
$L env DB=$out/net.db OPGEN=$root/build-bench/opgen/opgen bash docs/bench/s13-gemm/tune-net.sh > "$out"/tune-net.log 2>&1
echo "tune end $(date -u +%T)"
$L build-bench/tests/bench/opgen_bench --db "$out"/net.db --out "$out"/out --ops-dir tests/bench/ops --autoschedulers none --no-naive --no-tune --network manifests/resnet50-bert.json --only conv2d_nchw --threads 1,2 > "$out"/bench.log 2>&1
echo "bench end $(date -u +%T)"
