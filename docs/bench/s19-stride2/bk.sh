#!/bin/bash
# bk.sh NAME PARAMS... : generates kernel k with generator params, links harness NAME
T=x86-64-linux-avx-avx2-avx512-avx512_cannonlake-avx512_sapphirerapids-avx512_skylake-f16c-fma-sse41
name=$1; shift; mkdir -p $name.d
./g1 -g g1 -f k -o $name.d -e static_library,h,stmt target=$T-no_runtime "$@" && g++ -O2 -std=c++17 -I/usr/include/halide14 -I$name.d h.cpp $name.d/k.a rt/rt.a -o $name -lpthread -ldl
