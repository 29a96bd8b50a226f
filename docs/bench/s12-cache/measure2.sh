#!/usr/bin/env bash
set -uo pipefail
cd /work/wt-cache
out=docs/bench/s12-cache
stamp() { echo "$1 $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"; }
stamp "hold start"
scripts/generic-bench.sh time > $out/new-reported.txt 2>&1
stamp "new reported end"
/tmp/wt-cache-s12/kernel.sh > $out/kernel-bench.txt 2>&1
stamp "hold end"
