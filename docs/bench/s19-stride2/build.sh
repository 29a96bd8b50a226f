#!/bin/bash
# build.sh GEN.cpp NAME : compiles the generator, runs it, links the harness into NAME.
set -e
gen=$1; name=$2
sed 's/conv2d_nchw_kernel/kern/g; s/Conv2dNchwKernelGenerator/KernGen/g' $gen > $name.gen.cpp
g++ -O1 -std=c++17 -I/usr/include/halide14 $name.gen.cpp /usr/src/halide14/GenGen.cpp -o $name.gen -lHalide14 -lpthread -ldl 2>&1 | grep -v warning | head -5
mkdir -p $name.d && ./$name.gen -g kern -o $name.d -e static_library,h,assembly target=x86-64-linux-avx-avx2-avx512-avx512_cannonlake-avx512_sapphirerapids-avx512_skylake-f16c-fma-sse41-no_runtime 2>&1 | tail -2
./$name.gen -r rt -o $name.d -e static_library target=x86-64-linux-avx-avx2-avx512-avx512_cannonlake-avx512_sapphirerapids-avx512_skylake-f16c-fma-sse41 2>/dev/null || true
g++ -O2 -std=c++17 -I/usr/include/halide14 -I$name.d harness.cpp $name.d/kern.a $name.d/rt.a -o $name -lpthread -ldl
