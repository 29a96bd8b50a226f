#!/usr/bin/env bash
# Under flock -x gate, flock -x measure: the same campaign answered by main's lookup (old) and this
# branch's (new): held-out sweep, then the reported shapes; the new reported run only when the
# new held-out sweep keeps the threshold compiled in (1.8).
set -uo pipefail
cd /work/wt-cache
out=docs/bench/s12-cache
mkdir -p $out
stamp() { echo "$1 $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"; }
stamp "hold start"
OPGEN_BUILD_DIR=/tmp/wt-cache-old-build scripts/generic-bench.sh time-heldout > $out/old-heldout.txt 2>&1
stamp "old heldout end"
OPGEN_BUILD_DIR=/tmp/wt-cache-old-build scripts/generic-bench.sh time > $out/old-reported.txt 2>&1
stamp "old reported end"
scripts/generic-bench.sh time-heldout > $out/new-heldout.txt 2>&1
stamp "new heldout end"
best=$(grep "lowest geometric mean at threshold" $out/new-heldout.txt | awk '{print $6}')
echo "new held-out threshold: $best"
if [ "$best" = "1.8" ]; then
  scripts/generic-bench.sh time > $out/new-reported.txt 2>&1
  stamp "new reported end"
fi
stamp "hold end"
