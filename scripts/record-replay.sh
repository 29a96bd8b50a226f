#!/usr/bin/env bash
# Makes the recordings that tests/tuner/TuneReplayTest.cpp replays: three real tuning runs of one
# matmul shape (seeds 1-3) on this machine, each written with its measurements and what the loop
# did. Run it after a deliberate change to what the tuning loop measures (the space, the search,
# the cost model), from a build that has the change (the timings need not be quiet: the test
# replays whatever was measured):
#   scripts/record-replay.sh [BUILD_DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-${OPGEN_BUILD_DIR:-$root/build}}"
out="$root/tests/tuner/replay"
mkdir -p "$out"
for seed in 1 2 3; do
    tmp="$(mktemp "$out/.matmul-seed$seed.XXXXXX")"
    "$build/tests/tuner/record_tuning" matmul M=192,N=256,K=128 "$seed" "$tmp"
    chmod 644 "$tmp"
    mv "$tmp" "$out/matmul-seed$seed.json"
    echo "record-replay: wrote $out/matmul-seed$seed.json"
done
