#!/bin/bash
# b.sh GEN.cpp NAME: builds the generator GEN.cpp (class KernGenerator, kern) and links h3 into NAME.
set -e
T=x86-64-linux-avx-avx2-avx512-avx512_cannonlake-avx512_sapphirerapids-avx512_skylake-f16c-fma-sse41
gen=$1; name=$2; mkdir -p $name.d
g++ -O1 -std=c++17 -I/usr/include/halide14 $gen /usr/src/halide14/GenGen.cpp -o $name.gen -lHalide14 -lpthread -ldl 2>&1 | grep -v warning | head -5
./$name.gen -g kern -o $name.d -e static_library,h,assembly,stmt target=$T-no_runtime
[ -f rt.a ] || ./$name.gen -r rt -o . -e static_library target=$T
g++ -O2 -std=c++17 -I/usr/include/halide14 -I$name.d h3.cpp $name.d/kern.a rt.a -o $name -lpthread -ldl
