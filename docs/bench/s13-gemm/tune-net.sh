#!/usr/bin/env bash
# Tunes every ResNet-50 conv shape of the manifest, 24 trials, seed 1, at the given thread counts.
set -euo pipefail
opgen=${OPGEN:-/work/main/build-bench/opgen/opgen}
db=${DB:-/work/s13/net.db}
threads=${THREADS:-"1 2"}
shapes=$(python3 -c "
import json;m=json.load(open('/work/main/manifests/resnet50-bert.json'))
for e in m['entries']:
    if e['op']=='conv2d_nchw':
        for s in e['shapes']: print(s)")
for t in $threads; do
  for s in $shapes; do
    start=$(date +%s)
    $opgen tune --op conv2d_nchw --shape "$s" --threads $t --trials 24 --seed 1 --jobs 1 --quiet --db "$db" ${EXTRA:-} >/dev/null
    echo "$(date -u +%H:%M:%S) t=$t $s $(( $(date +%s)-start ))s load $(cut -d' ' -f1 /proc/loadavg)"
  done
done
