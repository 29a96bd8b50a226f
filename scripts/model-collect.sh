#!/usr/bin/env bash
# Measures the cost model's training and held-out data on this machine: a seeded random sample of
# legal points per task, each verified against the reference, one core per kernel, with a fixed
# reference kernel interleaved every 20 candidates (it corrects for the clock's wander).
#   scripts/model-collect.sh [train|holdout|all|lowp] [OUT_DIR] [OPGEN]
# writes OUT_DIR/train.db and OUT_DIR/holdout.db (default OUT_DIR: model-data). A rerun resumes.
# The held-out tasks are shapes never trained on: matmul 384^3 and conv2d C=64 F=64 28x28, and
# (since 2026-11-25, with the stage plans and channel orders) softmax
# 128x2048, layernorm 64x3072 and conv2d C=256 F=256 14x14.
# `lowp` (issue 40, 2026-12-01) adds the int8 and bf16 tasks to both files (also part of `all`):
# their kernels are keyed with the instruction features they use (x86-64-avx512+avx512_vnni:t1)
# and `opgen model train` reads those keys too. Held out: int8 matmul 384^3 and int8 conv 28x28 64->64.
set -euo pipefail
what=${1:-all}
out=${2:-model-data}
opgen=${3:-build/bin/opgen}
mkdir -p "$out"
common=(--threads 1 --min-time-ms 15 --seed 1 --quiet)

collect() {  # db op shape sample
    "$opgen" model collect --db "$1" --op "$2" --shape "$3" --sample "$4" "${common[@]}"
}

if [[ $what == holdout || $what == all ]]; then
    collect "$out/holdout.db" matmul M=384,N=384,K=384 500
    collect "$out/holdout.db" conv2d_nchw N=1,C=64,H=28,W=28,F=64 500
    collect "$out/holdout.db" softmax M=128,N=2048 300
    collect "$out/holdout.db" layernorm M=64,N=3072 300
    collect "$out/holdout.db" conv2d_nchw N=1,C=256,H=14,W=14,F=256 200
fi
if [[ $what == train || $what == all ]]; then
    for shape in M=256,N=256,K=256 M=128,N=512,K=256 M=512,N=192,K=128 M=192,N=320,K=384 \
                 M=512,N=512,K=512 M=64,N=1024,K=512 M=1024,N=64,K=256 M=320,N=448,K=160 \
                 M=96,N=96,K=1024 M=768,N=256,K=64 M=448,N=640,K=256 M=200,N=300,K=500 \
                 M=352,N=416,K=320 M=32,N=2048,K=256 M=2048,N=48,K=192 M=640,N=640,K=96; do
        collect "$out/train.db" matmul "$shape" 400
    done
    for shape in N=1,C=32,H=28,W=28,F=32 N=1,C=64,H=14,W=14,F=128 N=1,C=16,H=56,W=56,F=32 \
                 N=1,C=128,H=14,W=14,F=128 N=1,C=32,H=56,W=56,F=64 N=1,C=128,H=28,W=28,F=64 \
                 N=1,C=256,H=7,W=7,F=256 N=1,C=64,H=56,W=56,F=32 N=1,C=48,H=20,W=20,F=96 \
                 N=1,C=512,H=7,W=7,F=128; do
        collect "$out/train.db" conv2d_nchw "$shape" 400
    done
    # Row ops (where their statements are computed) and convolutions with the channel order knob.
    collect "$out/train.db" softmax M=64,N=1024 300
    collect "$out/train.db" layernorm M=256,N=512 300
    collect "$out/train.db" conv2d_nchw N=1,C=96,H=14,W=14,F=192 200
    collect "$out/train.db" conv2d_nchw N=1,C=64,H=28,W=28,F=128 200
fi
if [[ $what == lowp || $what == all ]]; then
    collect "$out/holdout.db" matmul_u8s8 M=384,N=384,K=384 200
    collect "$out/holdout.db" conv2d_nhwc_u8s8_requant N=1,H=28,W=28,C=64,F=64 150
    for shape in M=256,N=256,K=256 M=128,N=768,K=768 M=512,N=192,K=512 M=64,N=1024,K=256; do
        collect "$out/train.db" matmul_u8s8 "$shape" 150
    done
    collect "$out/train.db" matmul_u8s8_requant M=128,N=3072,K=768 150
    collect "$out/train.db" conv2d_nhwc_u8s8_requant N=1,H=14,W=14,C=128,F=128 150
    collect "$out/train.db" conv2d_nhwc_u8s8_requant N=1,H=56,W=56,C=64,F=64,KH=1,KW=1,pad=0 150
    for shape in M=256,N=256,K=256 M=128,N=768,K=768; do
        collect "$out/train.db" matmul_bf16 "$shape" 150
    done
fi
