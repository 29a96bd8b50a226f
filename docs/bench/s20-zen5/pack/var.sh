#!/bin/bash
# var.sh NAME FTILE CBLOCK [FREG]: the kept 7x7 point's generator with another f tile / c block.
set -e
name=$1; ft=$2; cb=$3; fr=${4:-32}
sed -e "s/Y.split(f, f__o, f__t, 32,/Y.split(f, f__o, f__t, $ft,/" -e "s/Y.split(f__t, f__r, f__i, 32,/Y.split(f__t, f__r, f__i, $fr,/" \
    -e "s/split(f, f__ur, f__ui, 32)/split(f, f__ur, f__ui, $fr)/" -e "s/split(c, c__o, c__i, 128)/split(c, c__o, c__i, $cb)/" k0.cpp > $name.cpp
./b.sh $name.cpp $name > /dev/null
