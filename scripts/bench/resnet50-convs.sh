#!/usr/bin/env bash
# ResNet-50's convolutions against oneDNN: tunes the manifest's 23
# conv keys into an empty cache (resnet50-convs-tune.sh: 24 trials, seed 1, 1 then 2 threads),
# then runs the network bench: every key's time weighted by its count in the network (53 layers),
# opgen's cached winner against oneDNN, one interleaved run at 1 and 2 threads. The report is
# OUT/out/bench.md ("opgen ms", "oneDNN ms" per thread count); logs beside it.
#   OUT (default $OPGEN_BUILD_DIR/resnet50-convs; the cache OUT/net.db is made afresh),
#   OPGEN_BUILD_DIR (default build-bench, the folder scripts/bench/suite.sh configures and builds).
# Run it on a quiet machine; on a shared one take the exclusive locks as the figures did:
#   flock -x /tmp/opgen-gate.lock flock -x /tmp/opgen-measure.lock scripts/bench/resnet50-convs.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${OPGEN_BUILD_DIR:-$root/build-bench}"
out="${OUT:-$build/resnet50-convs}"
cd "$root"
mkdir -p "$out"
rm -f "$out"/net.db*
echo "tune start $(date -u +%T)"
DB="$out/net.db" OPGEN="$build/bin/opgen" "$root/scripts/bench/resnet50-convs-tune.sh" > "$out"/tune-net.log 2>&1
echo "tune end $(date -u +%T)"
OPENBLAS_THREAD_TIMEOUT="${OPENBLAS_THREAD_TIMEOUT:-4}" \
"$build/tests/bench/opgen_bench" --db "$out"/net.db --out "$out"/out --ops-dir tests/bench/ops \
    --autoschedulers none --no-naive --no-tune --network manifests/resnet50-bert.json \
    --only conv2d_nchw --threads 1,2 > "$out"/bench.log 2>&1
echo "bench end $(date -u +%T); report: $out/out/bench.md"
