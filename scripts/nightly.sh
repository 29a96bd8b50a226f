#!/usr/bin/env bash
# Nightly regeneration: re-tunes what is stale or new, re-measures a sample of cached winners for
# regressions, and writes one self-contained HTML report.
#
#   scripts/nightly.sh [--manifest FILE] [--db FILE] [--out DIR] [--sample N] [--threshold X]
#                      [--bench bench.json] [--screenshot] [opgen batch flags, e.g. --threads 1]
#
# 1. `opgen batch MANIFEST` into the cache: a task whose key is cached is skipped; a task whose
#    key changed (op definition, Halide version, tuner version, or a target/thread count never
#    tuned) is tuned, and the report names what changed for keys that were tuned before.
# 2. `--remeasure N`: N cached winners (seeded sample) measured again, interleaved with Halide's
#    default schedule; a winner whose time relative to the default grew by more than the threshold
#    (default 0.25) is flagged as a regression.
# 3. scripts/nightly_report.py: OUT/YYYY-MM-DD/report.html, a table plus charts of GFLOP/s per task
#    against the previous night (the newest earlier OUT/*/batch.json) and against oneDNN when a
#    benchmark result is given (--bench, default bench-out/bench.json when it exists).
# 4. --screenshot: scripts/nightly-screenshot.sh renders the report in headless Chromium and
#    checks the picture.
# Exit status: non-zero when a task failed or a regression was found (the report is written first).
# Defaults: manifest manifests/nightly.json, db opgen.db, out nightly/, sample 4.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${OPGEN_BUILD_DIR:-$root/build}"
opgen="$build/bin/opgen"
manifest="$root/manifests/nightly.json"
db="opgen.db"
out="nightly"
sample=4
threshold=0.25
bench=""
[ -f "$root/bench-out/bench.json" ] && bench="$root/bench-out/bench.json"
screenshot=0
flags=()
while [ $# -gt 0 ]; do
    case "$1" in
        --manifest) manifest="$2"; shift 2 ;;
        --db) db="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        --sample) sample="$2"; shift 2 ;;
        --threshold) threshold="$2"; shift 2 ;;
        --bench) bench="$2"; shift 2 ;;
        --screenshot) screenshot=1; shift ;;
        -h|--help) sed -n '2,24p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) flags+=("$1"); shift ;;
    esac
done
[ -x "$opgen" ] || { echo "error: no opgen command at '$opgen' (build first, or set OPGEN_BUILD_DIR)" >&2; exit 2; }

night="$out/${OPGEN_NIGHT:-$(date -u +%Y-%m-%d)}"
mkdir -p "$night"
previous=""
for d in $(ls -1d "$out"/*/ 2>/dev/null | sort -r); do
    d="${d%/}"
    if [ "$d" != "$night" ] && [ -f "$d/batch.json" ] && [[ "$(basename "$d")" < "$(basename "$night")" ]]; then
        previous="$d/batch.json"
        break
    fi
done

echo "== nightly $(basename "$night"): $manifest into $db (previous: ${previous:-none})"
status=0
"$opgen" batch "$manifest" --db "$db" --report "$night/batch.json" --remeasure "$sample" \
    --regression-threshold "$threshold" "${flags[@]}" | tee "$night/batch.txt" || status=$?
[ -f "$night/batch.json" ] || { echo "error: the batch wrote no report (exit $status)" >&2; exit 1; }

args=(--batch "$night/batch.json" -o "$night/report.html" --title "opgen nightly $(basename "$night")")
[ -n "$previous" ] && args+=(--previous "$previous")
[ -n "$bench" ] && args+=(--bench "$bench")
python3 "$root/scripts/nightly_report.py" "${args[@]}"

if [ "$screenshot" = 1 ]; then
    "$root/scripts/nightly-screenshot.sh" "$night/report.html" "$night/report.png"
fi
if grep -q '"regressed": true' "$night/batch.json"; then
    echo "nightly: regressions found (see $night/report.html)" >&2
    [ "$status" = 0 ] && status=4
fi
exit "$status"
