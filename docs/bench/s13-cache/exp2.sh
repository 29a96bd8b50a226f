#!/usr/bin/env bash
set -euo pipefail
cd /work/wt-cache
echo "hold start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
export HL_NUM_THREADS=1
db=/tmp/s13c/sm.db; loo=/tmp/s13c/loo.db
python3 - $db $loo <<'PY'
import shutil, sqlite3, sys
src, dst = sys.argv[1:]
shutil.copyfile(src, dst)
db = sqlite3.connect(dst)
for table in ("kernels", "kernel_code", "generic_code", "generic_timings", "measurements", "kernel_variants", "tuning_runs"):
    db.execute(f"DELETE FROM {table} WHERE op_name = 'softmax' AND shape = 'M=100,N=1000'")
db.execute("DELETE FROM generic_timings WHERE at_shape = 'M=100,N=1000'")
db.commit(); db.execute("VACUUM")
PY
t=x86-64-avx512:t1
b=build/tests/db/opgen_generic_bench
$b --generic-db $loo --tuned-db $db --target $t --op softmax --shape M=100,N=1000
$b --generic-db $loo --tuned-db $db --target $t --op softmax --shape M=37,N=4096 || true
perf record -o /tmp/s13c/perf.data -g $b --generic-db $loo --tuned-db $db --target $t --op softmax --shape M=100,N=1000 --rounds 3 2>&1 | tail -2
echo "hold end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
