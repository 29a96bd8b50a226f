#!/usr/bin/env bash
# Tunes every ResNet-50 conv shape of manifests/resnet50-bert.json (its 23 conv2d_nchw keys), 24
# trials, seed 1, one job, at each thread count in turn: the tuning half of resnet50-convs.sh.
#   DB (cache file; default $OPGEN_BUILD_DIR/resnet50-convs.db), THREADS (default "1 2"),
#   OPGEN (default $OPGEN_BUILD_DIR/bin/opgen, OPGEN_BUILD_DIR default build-bench), EXTRA (more
#   `opgen tune` flags). One line per key: time, threads, shape, seconds, load.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${OPGEN_BUILD_DIR:-$root/build-bench}"
opgen="${OPGEN:-$build/bin/opgen}"
db="${DB:-$build/resnet50-convs.db}"
threads="${THREADS:-"1 2"}"
shapes=$(python3 -c "
import json, sys
m = json.load(open(sys.argv[1]))
for e in m['entries']:
    if e['op'] == 'conv2d_nchw':
        for s in e['shapes']: print(s)" "$root/manifests/resnet50-bert.json")
for t in $threads; do
  for s in $shapes; do
    start=$(date +%s)
    # shellcheck disable=SC2086
    "$opgen" tune --op conv2d_nchw --shape "$s" --threads "$t" --trials 24 --seed 1 --jobs 1 --quiet --db "$db" ${EXTRA:-} >/dev/null
    echo "$(date -u +%H:%M:%S) t=$t $s $(( $(date +%s)-start ))s load $(cut -d' ' -f1 /proc/loadavg)"
  done
done
