#!/usr/bin/env bash
# Trains the host's default cost model from the data scripts/model-collect.sh measured, evaluates
# it on the held-out tasks beside the roofline heuristic and random choice, writes the bundled
# model file costmodel/models/<target>.model and stores the model with its figures in the cache.
#   scripts/model-train.sh [DATA_DIR] [OPGEN] [DB]
# (defaults: model-data, build/opgen/opgen, opgen.db). The model's settings are written here once.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data=${1:-model-data}
opgen=${2:-$root/build/opgen/opgen}
db=${3:-opgen.db}
target=$("$opgen" target show | sed -n 's/^  "name": "\(.*\)",$/\1/p')
"$opgen" model train --data "$data/train.db" --holdout "$data/holdout.db" --threads 1 \
    --objective pairwise --weight-by-gap --rounds 200 --max-depth 4 --eta 0.1 --seed 1 \
    --out "$root/costmodel/models/$target.model" --store --db "$db"
