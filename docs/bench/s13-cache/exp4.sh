#!/usr/bin/env bash
set -uo pipefail
cd /work/wt-cache
echo "hold start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
export HL_NUM_THREADS=1
o=build/opgen/opgen; t=x86-64-avx512:t1
for v in 4096 2048; do
db=/tmp/s13c/fix$v.db; loo=/tmp/s13c/fixloo$v.db
src=/tmp/s13c/sm$v.db; [ $v = 2048 ] && src=/tmp/s13c/sm.db
python3 - $src $db <<'PY'
import shutil, sqlite3, sys
shutil.copyfile(*sys.argv[1:])
db = sqlite3.connect(sys.argv[2])
db.execute("DELETE FROM generic_timings"); db.execute("DELETE FROM generic_code"); db.commit()
PY
$o db compile --generic --op softmax --db $db | tail -1
python3 - $db $loo <<'PY'
import shutil, sqlite3, sys
src, dst = sys.argv[1:]
db=sqlite3.connect(src)
for r in db.execute("select shape, at_shape, time_ms, tuned_ms, ratio from generic_timings"): print(r)
shutil.copyfile(src, dst)
db = sqlite3.connect(dst)
for table in ("kernels", "kernel_code", "generic_code", "generic_timings", "measurements", "kernel_variants", "tuning_runs"):
    db.execute(f"DELETE FROM {table} WHERE op_name = 'softmax' AND shape = 'M=100,N=1000'")
db.execute("DELETE FROM generic_timings WHERE at_shape = 'M=100,N=1000'")
db.commit(); db.execute("VACUUM")
PY
echo "tile n:$v"; build/tests/db/opgen_generic_bench --generic-db $loo --tuned-db $db --target $t --op softmax --shape M=100,N=1000
done
echo "hold end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
