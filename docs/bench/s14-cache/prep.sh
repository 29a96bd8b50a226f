#!/usr/bin/env bash
# Session 14: builds the n:4096 generic softmax caches with a given build (s13's recipe, exp3/exp4):
# s13's sm4096.db (M=37,N=4096 tuned with tile n:4096, M=100,N=1000 tuned) without its generic
# rows, `db compile --generic --op softmax`, then the leave-one-out copy without M=100,N=1000.
#   prep.sh BUILD_DIR OUT_PREFIX   (shared gate lock: it compiles)
set -euo pipefail
build=$1; out=$2
export HL_NUM_THREADS=1
python3 - /tmp/s14/sm4096.db $out.db <<'PY'
import shutil, sqlite3, sys
shutil.copyfile(*sys.argv[1:])
db = sqlite3.connect(sys.argv[2])
db.execute("DELETE FROM generic_timings"); db.execute("DELETE FROM generic_code"); db.commit()
PY
$build/opgen/opgen db compile --generic --op softmax --db $out.db | tail -1
python3 - $out.db $out-loo.db <<'PY'
import shutil, sqlite3, sys
src, dst = sys.argv[1:]
db = sqlite3.connect(src)
for r in db.execute("select shape, at_shape, time_ms, tuned_ms, ratio from generic_timings"): print(r)
shutil.copyfile(src, dst)
db = sqlite3.connect(dst)
for table in ("kernels", "kernel_code", "generic_code", "generic_timings", "measurements", "kernel_variants", "tuning_runs"):
    db.execute(f"DELETE FROM {table} WHERE op_name = 'softmax' AND shape = 'M=100,N=1000'")
db.execute("DELETE FROM generic_timings WHERE at_shape = 'M=100,N=1000'")
db.commit(); db.execute("VACUUM")
PY
