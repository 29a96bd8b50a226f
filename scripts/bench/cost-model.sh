#!/usr/bin/env bash
# The bundled cost model's held-out ranking figures (docs/cost-model.md): pairwise accuracy,
# Kendall tau, top-1 and top-5 regret of costmodel/models/<target>.model, beside the roofline and
# random choice, on the held-out measurements shipped in costmodel/data/<target>-holdout.db.xz
# (random samples and tuning trials; none of their shapes is trained on), at 1 and 2 threads
# (`opgen model eval`). Nothing is timed: it gives the same figures on any machine.
# usage: scripts/bench/cost-model.sh [TARGET (x86-64-avx512)]
#   OPGEN_BUILD_DIR (default build) holds bin/opgen.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
target="${1:-x86-64-avx512}"
opgen="${OPGEN_BUILD_DIR:-$root/build}/bin/opgen"
model="$root/costmodel/models/$target.model"
shipped="$root/costmodel/data/$target-holdout.db.xz"
[ -f "$shipped" ] || { echo "error: no held-out measurements shipped for target '$target' ($shipped)" >&2; exit 1; }
[ -f "$model" ] || { echo "error: no bundled model for target '$target' ($model)" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
xz -dc "$shipped" >"$tmp/holdout.db"
for t in 1 2; do
    echo "== held-out tasks at $t thread(s), $model"
    "$opgen" model eval --data "$tmp/holdout.db" --target "$target" --threads "$t" --model "$model"
done
