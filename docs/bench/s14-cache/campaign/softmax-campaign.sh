#!/usr/bin/env bash
# Issue 20's campaign for softmax only (scripts/generic-bench.sh's shapes and steps, one op), after
# the generic tile clamp (68efc16): tune the 3 source and 10 bench shapes (24 trials, one thread),
# build the generic code, then time each bench shape leave-one-out with opgen_choice_bench.
set -euo pipefail
root=/work/main
build=$root/build-cache
work=/work/s14/campaign
opgen=$build/opgen/opgen
mkdir -p "$work"
L="flock -x /tmp/opgen-gate.lock flock -x /tmp/opgen-measure.lock"
sources=("softmax M=256,N=1024" "softmax M=64,N=128" "softmax M=1024,N=256")
shapes=("softmax M=100,N=1000" "softmax M=512,N=333" "softmax M=37,N=4096" "softmax M=2000,N=64"
    "softmax M=256,N=1500" "softmax M=300,N=700" "softmax M=64,N=2048" "softmax M=1500,N=128"
    "softmax M=800,N=800" "softmax M=10,N=10000")
echo "tune start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
for s in "${sources[@]}" "${shapes[@]}"; do set -- $s
  $L "$opgen" tune --op "$1" --shape "$2" --trials 24 --min-time 20 --threads 1 --jobs 1 --quiet --seed 1 --db "$work/all.db" >/dev/null
done
echo "generic start $(date -u +%T)"
$L env HL_NUM_THREADS=1 "$opgen" db compile --generic --op softmax --db "$work/all.db"
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
done | tee "$work/choices.txt"
python3 "$root/scripts/generic-choices.py" "$work/choices.txt"
echo "end $(date -u +%T)"
