#!/bin/bash
# mk.sh NAME SHAPE POINTJSON: emit with opgen, fix the X pack wrapper, build the harness binary NAME.
set -e
name=$1; shape=$2; pt=$3
rm -rf em_$name && /work/main/build-bench/opgen/opgen emit --op conv2d_nchw --shape "$shape" --point $pt --out em_$name --threads 1 >/dev/null
sed 's/Func X_panel = X.in(Y_acc)/Func X_panel = X_padded.in(Y_acc)/' em_$name/conv2d_nchw_kernel_generator.cpp > $name.cpp
./build.sh $name.cpp $name >/dev/null 2>&1
