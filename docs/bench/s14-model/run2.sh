#!/usr/bin/env bash
# After run-model-exp.sh: stride-2 1x1 hand points, then the retrained model (new6) installed,
# replay recordings remade, tuner curve and the suite rows with it.
set -euo pipefail
cd /work/main
while ! grep -q "bench end" /work/s14/run-model-exp.log; do sleep 10; done
L="flock -x /tmp/opgen-gate.lock flock -x /tmp/opgen-measure.lock"
echo "points start $(date -u +%T)"
rm -f /work/s14/h/s2.db*
$L env OPENBLAS_CORETYPE=SkylakeX build-bench/tests/bench/opgen_bench --suite /work/s14/h/s2suite.json --db /work/s14/h/s2.db --out /work/s14/h/s2 --ops-dir tests/bench/ops --autoschedulers none --no-naive --no-tune --threads 1 --points /work/s14/h/s2.json > /work/s14/h/s2.log 2>&1 || echo "points failed"
echo "points end $(date -u +%T)"
cp /work/s14/model/new6.model costmodel/models/x86-64-avx512.model
$L scripts/record-replay.sh build > /work/s14/replay.log 2>&1
echo "replay end $(date -u +%T)"
$L env SEEDS="1 2 3" OPS=conv2d14 KEEP=/work/s14/curve-new6 scripts/tuner-curve.sh build-bench > /work/s14/curve-new6.log 2>&1
echo "curve end $(date -u +%T)"
rm -f /work/s14/suite.db*
$L env OPENBLAS_CORETYPE=SkylakeX build-bench/tests/bench/opgen_bench --suite docs/bench/s12-conv/suite18.json --db /work/s14/suite.db --out /work/s14/rows --ops-dir tests/bench/ops --autoschedulers none --no-naive --trials 24 --threads 1,2 > /work/s14/rows.log 2>&1
echo "rows end $(date -u +%T)"
