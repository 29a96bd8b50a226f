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
shapes=(
    "conv2d_nchw N=1,C=16,H=56,W=56,F=24" "conv2d_nchw N=1,C=48,H=20,W=20,F=40"
    "conv2d_nchw N=2,C=32,H=14,W=14,F=64" "conv2d_nchw N=1,C=24,H=33,W=33,F=24"
    "conv2d_nchw N=1,C=64,H=7,W=7,F=96" "conv2d_nchw N=1,C=32,H=40,W=40,F=48"
    "conv2d_nchw N=1,C=8,H=64,W=64,F=16" "conv2d_nchw N=1,C=96,H=10,W=10,F=64"
    "conv2d_nchw N=4,C=16,H=16,W=16,F=16" "conv2d_nchw N=1,C=40,H=25,W=25,F=80")
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
done | tee "$work/choices-conv-repeat.txt"
python3 "$root/scripts/generic-choices.py" "$work/choices-conv-repeat.txt"
echo "end $(date -u +%T)"
