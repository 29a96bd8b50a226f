#!/usr/bin/env bash
# Benchmarks opgen against the anchors: builds opgen_bench in build-bench (Release,
# -DOPGEN_BUILD_BENCH=ON, tests off), then runs the suite of tests/bench/suite.json. opgen's column
# is the kernel cache's winner for each entry and thread count; keys the cache lacks are tuned first,
# with the tuner library, and stored (the first run therefore takes longer). The report goes to
# bench-out/ (bench.md, bench.html, bench.json) and the markdown table to stdout.
#
#   scripts/bench/suite.sh           the whole suite, 1 thread and all cores
#   scripts/bench/suite.sh --quick   sgemm 256³ and 1024³, one convolution, one softmax; 3 rounds
#   scripts/bench/suite.sh --db FILE --out DIR [any opgen_bench option, see --help]
#   scripts/bench/suite.sh --network manifests/resnet50-bert.json --autoschedulers none --no-naive
#                                    the manifest's counted shapes (ResNet-50's 23 convolutions)
#                                    and the network's total, each time weighted by its count,
#                                    tuned with the manifest's trial budget
#
# The suite is also an `opgen batch` manifest, so a cache can be filled ahead of time:
#   OPGEN_OPS_PATH=tests/bench/ops build-bench/bin/opgen batch tests/bench/suite.json --threads 1
# (tests/bench/ops holds the suite's user ops, not bundled: rmsnorm; always passed as --ops-dir.)
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/bench-build.sh"

db="$root/opgen.db"
out="$root/bench-out"
args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --db) db="$2"; shift 2 ;;
        --db=*) db="${1#--db=}"; shift ;;
        --out) out="$2"; shift 2 ;;
        --out=*) out="${1#--out=}"; shift ;;
        -h|--help) sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; args+=("--help"); shift ;;
        *) args+=("$1"); shift ;;
    esac
done

bench_build opgen_bench opgen

# OpenBLAS's idle workers otherwise spin for up to 2^28 cycles after each call, stealing a core from
# whichever contender runs next; with the smallest timeout they sleep at once.
export OPENBLAS_THREAD_TIMEOUT="${OPENBLAS_THREAD_TIMEOUT:-4}"

cd "$root"
exec "$build/tests/bench/opgen_bench" --db "$db" --out "$out" --ops-dir "$root/tests/bench/ops" "${args[@]}"
