#!/bin/bash
# Experiment (issue 18): ResNet-50's stride-2 1x1 convolutions as conv2d_nchw against the same with
# the strided input gathered first (ops/conv1x1_s2g.op), 32 trials each, then one interleaved run
# against oneDNN at 1 thread.
cd /work/s18/s2
flock -x /tmp/opgen-gate.lock flock -x /tmp/opgen-measure.lock /work/main/build-bench/tests/bench/opgen_bench \
  --suite suite-s2.json --ops-dir ops  # ops/conv1x1_s2g.op is conv1x1_s2g.op.txt here --db s2.db --out out --threads 1 --trials 32 --autoschedulers none --no-naive
