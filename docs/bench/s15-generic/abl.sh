#!/usr/bin/env bash
# usage: abl.sh GX label  -- times every generic conv row of exp.db at the tuned shapes
set -e
gx=$1; label=$2
cp exp.db abl-$label.db
sqlite3 abl-$label.db "delete from generic_code; delete from generic_timings;"
start=$(date +%s)
OPGEN_GX=$gx HL_NUM_THREADS=1 flock -x /tmp/opgen-gate.lock flock -x /tmp/opgen-measure.lock /work/main/build-exp/opgen/opgen db compile --generic --op conv2d_nchw --db abl-$label.db >/dev/null 2>abl-$label.err || { tail -3 abl-$label.err; }
echo "== $label gx=$gx ($(( $(date +%s)-start )) s, load $(cut -d' ' -f1 /proc/loadavg))"
sqlite3 abl-$label.db "select substr(shape,1,28), substr(at_shape,1,28), printf('%.3f',time_ms), printf('%.3f',tuned_ms), printf('%.3f',ratio) from generic_timings order by at_shape, shape"
