#!/usr/bin/env bash
# Submits a sharded batch to Slurm: an array of N shard jobs, then the merge, which waits for every
# shard to succeed. Prints the two job ids ("ARRAY_ID MERGE_ID").
#   scripts/slurm/submit.sh MANIFEST OUTDIR N [opgen batch flags...]
# Paths should be on storage every node sees. Extra sbatch options: SBATCH_EXTRA="--partition=x".
# The jobs inherit the environment: with OPGEN_SIGNING_KEY set (a key file every node can read,
# mode 0600), each shard signs the code it stores and the merge keeps the signatures.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ $# -lt 3 ]; then
    echo "usage: $0 MANIFEST OUTDIR N [opgen batch flags...]" >&2
    exit 2
fi
manifest="$(realpath "$1")"
mkdir -p "$2"
outdir="$(realpath "$2")"
n="$3"
shift 3
[[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "error: shard count '$n' must be a positive integer" >&2; exit 2; }
[ -f "$manifest" ] || { echo "error: manifest '$manifest' does not exist" >&2; exit 2; }
# Validate the manifest once here, so a typo fails now rather than in N jobs.
"${OPGEN:-opgen}" batch "$manifest" --dry-run --shard "0/$n" "$@" >/dev/null
# shellcheck disable=SC2086
array=$(sbatch --parsable ${SBATCH_EXTRA:-} --chdir="$outdir" --array="0-$((n - 1))" \
    --export="ALL,OPGEN_SHARDS=$n" "$here/opgen-shard.sbatch" "$manifest" "$outdir" "$@")
array="${array%%;*}"
# shellcheck disable=SC2086
merge=$(sbatch --parsable ${SBATCH_EXTRA:-} --chdir="$outdir" --dependency="afterok:$array" \
    "$here/opgen-merge.sbatch" "$outdir" "$n")
echo "$array ${merge%%;*}"
