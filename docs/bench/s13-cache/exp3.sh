#!/usr/bin/env bash
set -uo pipefail
cd /work/wt-cache
echo "hold start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
export HL_NUM_THREADS=1
o=build/opgen/opgen; t=x86-64-avx512:t1
db=/tmp/s13c/sm4096.db; loo=/tmp/s13c/loo4096.db
python3 - /tmp/s13c/sm.db $db <<'PY'
import shutil, sqlite3, sys
src, dst = sys.argv[1:]
shutil.copyfile(src, dst)
db = sqlite3.connect(dst)
(j,) = db.execute("SELECT schedule_json FROM kernels WHERE shape='M=37,N=4096'").fetchone()
j2 = j.replace('"tile":2048', '"tile":4096')
assert j2 != j
db.execute("UPDATE kernels SET schedule_json=? WHERE shape='M=37,N=4096'", (j2,))
db.execute("DELETE FROM kernel_code WHERE shape='M=37,N=4096'")
db.execute("DELETE FROM generic_timings"); db.execute("DELETE FROM generic_code")
db.commit()
PY
$o db compile --target host --db $db >/dev/null 2>&1 || $o db compile --db $db | tail -1
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
build/tests/db/opgen_generic_bench --generic-db $loo --tuned-db $db --target $t --op softmax --shape M=100,N=1000
build/tests/db/opgen_kernel_bench first --db /tmp/s13c/loo.db --target $t --op softmax --shape M=333,N=777 --runs 20
perf record -o /tmp/s13c/perf-first.data -F 20000 -g build/tests/db/opgen_kernel_bench first --db /tmp/s13c/loo.db --target $t --op softmax --shape M=333,N=777 --runs 5 2>&1 | tail -1
echo "hold end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
