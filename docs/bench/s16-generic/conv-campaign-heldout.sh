#!/usr/bin/env bash
# Issue 20's conv2d_nchw campaign after the constant-stride channel panel and the filled border (cfc8b08): session 14's 24-trial tunes
# (/work/s14/campaign/all.db, same 3 source and 10 bench shapes) kept; only the generic code is
# rebuilt, timed, and each bench shape answered leave-one-out with opgen_choice_bench.
set -euo pipefail
root=/work/main
build=$root/build-cache
work=/work/s16/campaign
opgen=$build/opgen/opgen
L="flock -x /tmp/opgen-gate.lock flock -x /tmp/opgen-measure.lock"
shapes=(  # the three source shapes (tuned, never reported): the data a ranking rule is chosen on
    "conv2d_nchw N=1,C=32,H=28,W=28,F=32" "conv2d_nchw N=1,C=16,H=14,W=14,F=32"
    "conv2d_nchw N=1,C=64,H=56,W=56,F=64")
# Timing only: the generic code and timings of the first run (conv-campaign.sh) are kept.
echo "time start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
target=$("$opgen" db stats --db "$work/all.db" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["by_target_and_op"][0]["target"])')
export HL_NUM_THREADS=1
for s in "${shapes[@]}"; do set -- $s
  python3 - "$work/all.db" "$work/loo.db" "$1" "$2" <<'PY'
import shutil, sqlite3, sys
src, dst, op, shape = sys.argv[1:]
shutil.copyfile(src, dst)
want = dict(p.split('=') for p in shape.split(','))
db = sqlite3.connect(dst)
keys = [s for (s,) in db.execute("SELECT DISTINCT shape FROM kernels WHERE op_name = ?", (op,))
        if all(dict(p.split('=') for p in s.split(',')).get(k) == v for k, v in want.items())]
assert len(keys) == 1, f"{op} {shape}: {len(keys)} tuned rows"
for table in ("kernels", "kernel_code", "generic_code", "generic_timings", "measurements", "kernel_variants", "tuning_runs"):
    db.execute(f"DELETE FROM {table} WHERE op_name = ? AND shape = ?", (op, keys[0]))
db.execute("DELETE FROM generic_timings WHERE op_name = ? AND at_shape = ?", (op, keys[0]))
db.commit()
db.execute("VACUUM")
PY
  $L "$build/tests/db/opgen_choice_bench" --db "$work/loo.db" --tuned-db "$work/all.db" --target "$target" --op "$1" --shape "$2"
done | tee "$work/choices-conv-heldout.txt"
python3 "$root/scripts/generic-choices.py" "$work/choices-conv-heldout.txt"
echo "end $(date -u +%T)"
