#!/usr/bin/env bash
# Trains the host's default cost model from measured data, evaluates it on the held-out tasks
# beside the roofline heuristic and random choice, writes the bundled model file
# costmodel/models/<target>.model and stores the model with its figures in the cache.
#   scripts/model-train.sh [DATA_DIR] [OPGEN] [DB]
# DATA_DIR holds train.db and holdout.db as scripts/model-collect.sh writes them; without it, the
# measurements shipped in costmodel/data/ (<target>-train.db.xz, <target>-holdout.db.xz) are used,
# so a change of the features retrains without re-measuring (features are recomputed from each
# record's schedule). Defaults: OPGEN build/bin/opgen, DB opgen.db. The settings are written here once.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data=${1:-}
opgen=${2:-$root/build/bin/opgen}
db=${3:-opgen.db}
target=$("$opgen" target show | sed -n 's/^  "name": "\(.*\)",$/\1/p')
if [[ -z $data ]]; then
    data=$(mktemp -d)
    trap 'rm -rf "$data"' EXIT
    for part in train holdout; do
        shipped="$root/costmodel/data/$target-$part.db.xz"
        [[ -f $shipped ]] || { echo "error: no measurements shipped for target '$target' ($shipped); measure them with scripts/model-collect.sh" >&2; exit 1; }
        xz -dc "$shipped" > "$data/$part.db"
        # Shipped files keep the schema they were measured with; training reads the current one.
        "$opgen" db upgrade --db "$data/$part.db" >/dev/null
    done
fi
"$opgen" model train --data "$data/train.db" --holdout "$data/holdout.db" --threads 1 \
    --objective pairwise --formulation concat --rounds 400 --max-depth 6 --eta 0.1 \
    --subsample 0.7 --colsample 0.7 --seed 1 \
    --out "$root/costmodel/models/$target.model" --store --db "$db"
