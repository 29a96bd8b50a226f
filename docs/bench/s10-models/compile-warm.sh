#!/usr/bin/env bash
# Issue 21: compile from the warm cache (every kernel cached), 1 and 2 compile workers; exclusive lock.
cd /work/main
W=/work/s10/big
uptime
for m in resnet50 bert; do
  for t in 1 2; do
    for j in 1 2; do
      out=$W/$m.w$t; [ $j = 1 ] && out=$W/$m.w${t}j1
      rm -rf $out
      s=$(date +%s.%N)
      build/opgen/opgen compile $W/$m.onnx -o $out --threads $t --db $W/$m-empty.db --no-tune --compile-jobs $j 2>&1 | grep -E "^kernels:|^tune:"
      e=$(date +%s.%N)
      echo "$m t$t jobs$j: whole compile $(echo "$e - $s" | bc) s"
    done
  done
done
uptime
