#!/bin/bash
# cmp.sh ROUNDS ARGS -- BINARIES: interleaved rounds, one line per run.
rounds=$1; shift; args=(); while [ "$1" != "--" ]; do args+=("$1"); shift; done; shift
for r in $(seq 1 $rounds); do for b in "$@"; do echo "$b $(./$b "${args[@]}")"; done; done
