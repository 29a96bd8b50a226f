#!/usr/bin/env bash
# Builds the retraining data: the shipped (AMD host) measurements plus this host's session-13
# tuning measurements (net.db: ResNet-50's 23 conv keys; suite.db: the suite's conv and matmul
# keys; 1 and 2 threads, 24 trials each, current legal space), with some of this host's keys held
# out.
set -euo pipefail
cols="op_name, op_hash, shape, dtype, target, halide_version, tuner_version, schedule_json, features, feature_rows, time_ms, gflops, status, error, created_at"
held="(shape in ('C=512,F=128,H=1,KH=1,KW=1,N=1,W=784,dilation=1,pad=0,stride=1',
                 'C=256,F=256,H=14,KH=3,KW=3,N=1,W=14,dilation=1,pad=1,stride=1',
                 'C=1024,F=2048,H=14,KH=1,KW=1,N=1,W=14,dilation=1,pad=0,stride=2',
                 'C=512,F=512,H=7,KH=3,KW=3,N=1,W=7,dilation=1,pad=1,stride=1',
                 'K=512,M=512,N=512', 'K=4096,M=64,N=1024',
                 'CB=8,FB=8,H=28,KH=3,KW=3,N=1,W=28,cb=16,dilation=1,fb=16,pad=1,stride=1'))"
rm -f train.db host-train.db host-holdout.db
cp old-train.db train.db
sqlite3 old-holdout.db ".schema" | grep -v sqlite_sequence > schema.sql
for d in host-train.db host-holdout.db; do cp old-holdout.db $d; sqlite3 $d "delete from measurements; vacuum;"; done
for src in /work/s13/net.db /work/s13/suite.db; do
  sqlite3 train.db "attach '$src' as s; insert into measurements ($cols) select $cols from s.measurements where status='ok' and not $held;"
  sqlite3 host-train.db "attach '$src' as s; insert into measurements ($cols) select $cols from s.measurements where status='ok' and not $held;"
  sqlite3 host-holdout.db "attach '$src' as s; insert into measurements ($cols) select $cols from s.measurements where status='ok' and $held;"
done
for d in train.db host-train.db host-holdout.db; do echo "$d: $(sqlite3 $d 'select count(*), count(distinct op_name||shape||target) from measurements')"; done
