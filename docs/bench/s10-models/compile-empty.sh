#!/usr/bin/env bash
# Issue 21: compile ResNet-50 and BERT-base from an empty cache with the manifest's budget (24 trials),
# each compile in its own shared-lock hold; wall time and load recorded.
cd /work/main
W=/work/s10/big
for m in resnet50 bert; do
  for t in 1 2; do
    flock -s /tmp/opgen-gate.lock true
    flock -s /tmp/opgen-measure.lock bash -c "
      echo \"== $m t$t start \$(date -u +%T) load \$(cut -d' ' -f1-3 /proc/loadavg)\"
      /usr/bin/time -f 'wall %e s, max RSS %M KiB' build/opgen/opgen compile $W/$m.onnx -o $W/$m.e$t --threads $t --db $W/$m-empty.db --trials 24 --quiet
      echo \"rc=\$? end \$(date -u +%T) load \$(cut -d' ' -f1-3 /proc/loadavg)\""
  done
done
