#!/usr/bin/env bash
# Whole models: compiles from the warm cache (every kernel cached by
# model-compile-cold.sh, so nothing is tuned) with 1 and then 2 compile workers, under the exclusive
# measurement lock; prints the kernels line and the whole compile's wall time. The speed-up of the
# object compile is the "compiled in N worker(s): X s wall" figures, 1 worker over 2.
# usage: scripts/bench/model-compile-warm.sh WORK [MODELS (resnet50,bert)] [THREADS (1,2)]
#   The 2-worker libraries are WORK/<model>.w<T> (scripts/bench/models.sh TAG 'w{t}').
#   env: OPGEN (default $OPGEN_BUILD_DIR/bin/opgen, OPGEN_BUILD_DIR default build)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="${1:?usage: model-compile-warm.sh WORK [MODELS] [THREADS]}"
models="${2:-resnet50,bert}"
threads="${3:-1,2}"
opgen="${OPGEN:-${OPGEN_BUILD_DIR:-$root/build}/bin/opgen}"
exec 9>/tmp/opgen-measure.lock
flock -x 9
uptime
for m in ${models//,/ }; do
  [ -f "$work/$m-empty.db" ] || { echo "error: no cache '$work/$m-empty.db' (run scripts/bench/model-compile-cold.sh first)" >&2; exit 1; }
  for t in ${threads//,/ }; do
    for j in 1 2; do
      out="$work/$m.w$t"; [ "$j" = 1 ] && out="$work/$m.w${t}j1"
      rm -rf "$out"
      s=$(date +%s.%N)
      if ! "$opgen" compile "$work/$m.onnx" -o "$out" --threads "$t" --db "$work/$m-empty.db" --no-tune \
          --compile-jobs "$j" 9>&- >"$out.log" 2>&1; then
          cat "$out.log" >&2
          exit 1
      fi
      e=$(date +%s.%N)
      grep -E "^kernels:|^tune:" "$out.log" || true
      echo "$m t$t jobs$j: whole compile $(echo "$e - $s" | bc) s"
    done
  done
done
uptime
