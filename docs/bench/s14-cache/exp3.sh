#!/usr/bin/env bash
# Session 14: the other generic kernels, old library (jit-vs-aot.cpp built on 68efc16^) and new
# (68efc16), alternated in one hold; each line times the AOT code and the JIT of one lowering at
# a shape nobody tuned. matmul and conv lower to the same statement before and after (checked by
# a diff of the normalized statements), so their lines only show the noise; softmax's M=100
# winner (n:1000, m:20) is served at N=777 < 1000, where its tile is now clamped.
set -uo pipefail
echo "hold start $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
export HL_NUM_THREADS=1
d=/tmp/s14
MM=$(python3 -c "import json;print(json.dumps(json.load(open('/work/wt-s14/tests/golden/matmul_blocked_packed.json'))))")
SM100='{"axes":[{"reg":48,"tile":1000,"var":"n"},{"reg":10,"tile":20,"var":"m"}],"fast_math":true,"outer_order":["m","n"],"packed":[],"parallel_loops":0,"reduce":[],"stages":[{"at":"tile","lanes":1,"tensor":"rmax"},{"at":"row","lanes":1,"tensor":"ex"},{"at":"row","lanes":1,"tensor":"rsum"}],"unroll":true,"vector_width":16}'
for v in old new old new; do
  bin=/tmp/s14-jit-vs-aot; [ $v = new ] && bin=/tmp/s14-jit-vs-aot-new
  echo -n "$v "; $bin "$SM100" M=100,N=1000 M=333,N=777 $d/e3 5 softmax x86-64-avx512 | tail -1
  echo -n "$v "; $bin "$(cat $d/p4096.json)" M=37,N=4096 M=100,N=1000 $d/e3 5 softmax x86-64-avx512 | tail -1
done
echo -n "old "; /tmp/s14-jit-vs-aot "$MM" M=256,N=256,K=256 M=100,N=70,K=300 $d/e3 5 matmul x86-64-avx512 | tail -1
echo -n "new "; /tmp/s14-jit-vs-aot-new "$MM" M=256,N=256,K=256 M=100,N=70,K=300 $d/e3 5 matmul x86-64-avx512 | tail -1
echo "hold end $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
