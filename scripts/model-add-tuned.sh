#!/usr/bin/env bash
# Adds the measurements of real tuning runs (the `measurements` table of kernel caches that
# `opgen tune` or `opgen_bench` filled) to the cost model's data: every task (op, shape, target
# key, 1 or 2 threads) goes into DATA_DIR/train.db, except the shapes listed in HOLDOUT_FILE (one
# shape string per line, as the cache writes it), which go into DATA_DIR/holdout.db. Random samples
# (scripts/model-collect.sh) teach the model the whole legal space; a tuner's trials are the points
# it actually has to rank, near the best ones.
#   scripts/model-add-tuned.sh DATA_DIR HOLDOUT_FILE CACHE.db...
# DATA_DIR's databases must exist (model-collect.sh writes them, or unpack costmodel/data/).
# Only successful measurements are copied; their tuning-run links are dropped. An op and shape that
# either database already holds, at any thread count (from model-collect.sh on another machine, or
# from an earlier CACHE), is left out: one task's times must come from one run on one machine, and
# no held-out shape may reach the training data under another thread count.
set -euo pipefail
[[ $# -ge 3 ]] || { echo "usage: $0 DATA_DIR HOLDOUT_FILE CACHE.db..." >&2; exit 2; }
data=$1 holdout_file=$2
shift 2
for part in train holdout; do
    [[ -f $data/$part.db ]] || { echo "error: $data/$part.db: no such database (scripts/model-collect.sh writes it)" >&2; exit 1; }
done
[[ -f $holdout_file ]] || { echo "error: $holdout_file: no such file of held-out shapes" >&2; exit 1; }
for cache in "$@"; do
    [[ -f $cache ]] || { echo "error: $cache: no such kernel cache" >&2; exit 1; }
done
cols="op_name, op_hash, shape, dtype, target, halide_version, tuner_version, schedule_json, features,
      feature_rows, time_ms, gflops, status, error, created_at"
# The held-out shapes as an SQL list; a quote inside a shape is doubled.
held=$(grep -v '^[[:space:]]*\(#\|$\)' "$holdout_file" | sed "s/'/''/g; s/.*/'&'/" | paste -sd, -)
[[ -n $held ]] || held="''"
for cache in "$@"; do
    for part in train holdout; do
        if [[ $part == train ]]; then where="shape not in ($held)"; else where="shape in ($held)"; fi
        sqlite3 "$data/$part.db" "attach '${cache//\'/\'\'}' as tuned;
            attach '$data/train.db' as tr; attach '$data/holdout.db' as ho;
            create temp table known as select op_name, shape from tr.measurements
                union select op_name, shape from ho.measurements;
            select 'model-add-tuned: left out ' || op_name || ' ' || shape || ' ' || target || ': shape already there'
                from (select distinct op_name, shape, target from tuned.measurements) t
                where $where and exists (select 1 from known k where k.op_name = t.op_name and
                    k.shape = t.shape);
            insert into measurements ($cols) select $cols from tuned.measurements m
            where status = 'ok' and $where and not exists (select 1 from known k
                where k.op_name = m.op_name and k.shape = m.shape);"
    done
    echo "model-add-tuned: $cache"
done
for part in train holdout; do
    echo "$data/$part.db: $(sqlite3 "$data/$part.db" "select count(*) || ' measurements, ' || count(distinct op_name || shape || target) || ' tasks' from measurements")"
done
