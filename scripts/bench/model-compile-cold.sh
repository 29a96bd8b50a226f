#!/usr/bin/env bash
# Whole models: compiles ResNet-50 and BERT-base from an empty cache with the manifest's
# budget (24 trials a kernel, weights timed cold) at each thread count, each compile in its own hold
# of the shared measurement lock; prints the wall time (tuning included), the compile's peak RSS and
# the load. Each model gets a fresh cache WORK/<model>-empty.db; the libraries WORK/<model>.e<T> are
# what scripts/bench/models.sh times with TAG 'e{t}', and model-compile-warm.sh recompiles them.
# usage: scripts/bench/model-compile-cold.sh WORK [MODELS (resnet50,bert)] [THREADS (1,2)]
#   WORK gets <model>.onnx and <model>.inputs/ from scripts/models/make_models.py when it lacks them.
#   env: OPGEN (default $OPGEN_BUILD_DIR/bin/opgen, OPGEN_BUILD_DIR default build)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="${1:?usage: model-compile-cold.sh WORK [MODELS] [THREADS]}"
models="${2:-resnet50,bert}"
threads="${3:-1,2}"
opgen="${OPGEN:-${OPGEN_BUILD_DIR:-$root/build}/bin/opgen}"
mkdir -p "$work"
for m in ${models//,/ }; do
  [ -f "$work/$m.onnx" ] || /usr/bin/python3 "$root/scripts/models/make_models.py" "$work" --only "$m"
  rm -f "$work/$m-empty.db"*
  for t in ${threads//,/ }; do
    flock -s /tmp/opgen-gate.lock true
    flock -s /tmp/opgen-measure.lock bash -c "
      echo \"== $m t$t start \$(date -u +%T) load \$(cut -d' ' -f1-3 /proc/loadavg)\"
      /usr/bin/time -f 'wall %e s, max RSS %M KiB' '$opgen' compile '$work/$m.onnx' -o '$work/$m.e$t' --threads $t --db '$work/$m-empty.db' --trials 24 --quiet
      echo \"rc=\$? end \$(date -u +%T) load \$(cut -d' ' -f1-3 /proc/loadavg)\""
  done
done
