#!/bin/bash
# var2.sh NAME FTILE CBLOCK [FREG]: as var.sh, with the weight pack walking one vector of filters at a time.
set -e
name=$1; ft=$2; cb=$3; fr=${4:-32}
sed -e "s/Y.split(f, f__o, f__t, 32,/Y.split(f, f__o, f__t, $ft,/" -e "s/Y.split(f__t, f__r, f__i, 32,/Y.split(f__t, f__r, f__i, $fr,/" \
    -e "s/split(f, f__ur, f__ui, 32)/split(f, f__ur, f__ui, $fr)/" -e "s/split(c, c__o, c__i, 128)/split(c, c__o, c__i, $cb)/" \
    -e 's/Wt_panel.reorder(_3, _0, _1, _2);/Var p3o("p3o"), p3i("p3i"); Wt_panel.split(_3, p3o, p3i, 16, TailStrategy::GuardWithIf).reorder(p3i, _0, _1, _2, p3o);/' \
    -e 's/Wt_panel.vectorize(_3, 16, TailStrategy::GuardWithIf);/Wt_panel.vectorize(p3i);/' k0.cpp > $name.cpp
./b.sh $name.cpp $name > /dev/null
