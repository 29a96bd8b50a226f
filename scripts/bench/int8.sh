#!/usr/bin/env bash
# The int8 and bf16 matmul benchmark (docs/design.md §8.2): tunes opgen's int8 matmul (matmul_u8s8), bf16
# matmul (matmul_bf16) and float32 matmul at each shape into a cache (skipped for keys the cache
# has), then times them in ONE interleaved run against oneDNN 2.6's int8 matmul (u8 x s8 -> s32),
# bf16 matmul (f32 out) and float32 matmul, oneDNN's weights reordered into its own layout before
# timing, beside the host's measured int8 (vpdpbusd; AMX tdpbusd where the host has AMX tiles) and
# fp32 FMA peaks (tests/bench/Int8Bench.cpp); then the requantizing int8 matmul (matmul_u8s8_requant,
# at the same shapes) and convolution (conv2d_nhwc_u8s8_requant, ResNet-50 layers) against oneDNN's int8
# matmul and convolution with the same output scales and zero point. Only the timed run holds the measurement lock
# (/tmp/opgen-measure.lock); the tuner takes its own hold lock for its finalists.
#
#   scripts/bench/int8.sh                       1024³, 128x768x768, 128x3072x768 at 1 thread
#   scripts/bench/int8.sh --threads "1 2" --trials 16 --db FILE --shapes "MxNxK;..."
#   scripts/bench/int8.sh --requant-only --convs "N=1,H=56,W=56,C=64,F=64;..."   only the requantizing rows
#
# Builds opgen_int8_bench in $OPGEN_BENCH_BUILD_DIR (default build-bench, -DOPGEN_BUILD_BENCH=ON).
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/bench-build.sh"

db="$root/int8-bench.db"
shapes="1024x1024x1024;128x768x768;128x3072x768"
threads="1"
trials=16
rounds=7
convs="N=1,H=56,W=56,C=64,F=64;N=1,H=56,W=56,C=256,F=64,KH=1,KW=1,pad=0;N=1,H=14,W=14,C=256,F=256"
requant_only=""
while [ $# -gt 0 ]; do
    case "$1" in
        --db) db="$2"; shift 2 ;;
        --shapes) shapes="$2"; shift 2 ;;
        --threads) threads="$2"; shift 2 ;;
        --trials) trials="$2"; shift 2 ;;
        --rounds) rounds="$2"; shift 2 ;;
        --convs) convs="$2"; shift 2 ;;
        --requant-only) requant_only="--requant-only"; shift ;;
        -h|--help) sed -n '2,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "int8.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done

bench_build opgen_int8_bench opgen opgen-worker

# Tuning: every op, shape and thread count, into the one cache.
matmul_ops="matmul_u8s8 matmul matmul_bf16 matmul_u8s8_requant"
[ -n "$requant_only" ] && matmul_ops="matmul_u8s8_requant"
IFS=';' read -r -a shape_list <<< "$shapes"
IFS=';' read -r -a conv_list <<< "$convs"
for t in $threads; do
    for s in "${shape_list[@]}"; do
        IFS=x read -r m n k <<< "$s"
        for op in $matmul_ops; do
            "$build/bin/opgen" tune --op "$op" --shape "M=$m,N=$n,K=$k" --trials "$trials" \
                --threads "$t" --db "$db" --quiet
        done
    done
    for c in "${conv_list[@]}"; do
        "$build/bin/opgen" tune --op conv2d_nhwc_u8s8_requant --shape "$c" --trials "$trials" \
            --threads "$t" --db "$db" --quiet
    done
done

# OpenBLAS's idle workers otherwise spin after each call (the thread setter links it), and
# oneDNN's OpenMP workers spin after each call of theirs, taking the core Halide's next call needs:
# at 2 threads every oneDNN call then took 8 ms (tests/bench/main.cpp sets the same two).
export OPENBLAS_THREAD_TIMEOUT="${OPENBLAS_THREAD_TIMEOUT:-4}"
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
# shellcheck disable=SC2086
exec flock -x /tmp/opgen-measure.lock "$build/tests/bench/opgen_int8_bench" --db "$db" --shapes "$shapes" \
    --convs "$convs" $requant_only --threads $threads --rounds "$rounds"
