#!/usr/bin/env bash
# The first README command: sets up, builds, tunes the bundled demo manifest into ./opgen.db,
# prints the winners, and answers one query from the cache.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
opgen="${OPGEN_BUILD_DIR:-$root/build}/bin/opgen"

echo
echo "== tuning the demo manifest into ./opgen.db (incremental: cached shapes are skipped)"
"$opgen" batch "$root/scripts/demo-manifest.json" --db opgen.db --trials "${OPGEN_DEMO_TRIALS:-24}"

echo
echo "== opgen query --op matmul --shape M=512,N=512,K=512"
"$opgen" query --op matmul --shape M=512,N=512,K=512 --db opgen.db
