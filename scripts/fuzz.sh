#!/usr/bin/env bash
# Fuzzes the op-language parser (default) or the kernel-code loader with libFuzzer for SECONDS
# seconds (default 60):
#   scripts/fuzz.sh 600            the parser, seeded with ops/*.op and the op-language dictionary
#   scripts/fuzz.sh 600 loader     the code loader (runtime/CodeLoader.h) on corrupt kernel_code and
#                                  generic_code rows, seeded with a real kernel row and a real
#                                  generic row: the main build's opgen (build/, or
#                                  $OPGEN_BUILD_DIR) tunes a small matmul and builds its generic
#                                  code, and both rows are written out as the fuzzer's input format
# Configures tests/fuzz with clang in its own build folder (build-fuzz, or $OPGEN_FUZZ_BUILD),
# builds the fuzzer with AddressSanitizer and UBSan and runs it on one core. The corpus grows in
# <build>/corpus (<build>/loader-corpus) across runs; a crash leaves its input as
# <build>/crash-* and makes this script exit non-zero.
set -euo pipefail

seconds="${1:-60}"
which="${2:-parser}"
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -lt 1 ] || { [ "$which" != parser ] && [ "$which" != loader ]; }; then
    echo "usage: scripts/fuzz.sh SECONDS [parser|loader]" >&2
    exit 2
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${OPGEN_FUZZ_BUILD:-$root/build-fuzz}"
clang_cxx="${CLANGXX:-clang++}"
command -v "$clang_cxx" >/dev/null || { echo "fuzz: $clang_cxx not found (apt-get install clang)" >&2; exit 2; }

generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
cmake -S "$root/tests/fuzz" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER="$clang_cxx" -DOPGEN_BUILD_FUZZER=ON >/dev/null
if [ "$which" = loader ]; then
    cmake --build "$build" -j2 --target code_loader_fuzzer
    opgen="${OPGEN_BUILD_DIR:-$root/build}/bin/opgen"
    [ -x "$opgen" ] || { echo "fuzz: $opgen not found; build opgen first (scripts/build.sh)" >&2; exit 2; }
    mkdir -p "$build/loader-corpus" "$build/loader-seeds"
    seed_db="$build/loader-seeds/seed.db"
    rm -f "$seed_db"* "$build/loader-seeds/seed.key"*
    # The seed rows are signed, as a deployed cache's are (runtime/CodeTrust.h).
    "$opgen" key new "$build/loader-seeds/seed.key" >/dev/null
    export OPGEN_SIGNING_KEY="$build/loader-seeds/seed.key"
    "$opgen" tune --op matmul --shape M=24,N=56,K=40 --trials 2 --min-time 5 --threads 1 --jobs 1 \
        --quiet --db "$seed_db" >/dev/null
    "$opgen" db compile --generic --op matmul --db "$seed_db" >/dev/null
    python3 - "$seed_db" "$build/loader-seeds" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
row = db.execute(
    "SELECT format, abi_version, halide_target, cpu_features, signature, size, digest, bytes "
    "FROM kernel_code").fetchone()
head = "\n".join(str(v) for v in row[:7]) + "\n"
# The first byte even: the digest is the row's own, so the row goes through load_kernel_code.
open(sys.argv[2] + "/row", "wb").write(b"\x00" + head.encode() + row[7])
# Bit 1 set: a generic row, with its symbols, fixed values, defaults, a shape to bind and its
# schedule.
g = db.execute(
    "SELECT format, abi_version, halide_target, cpu_features, signature, size, digest, symbols, fixed, "
    "defaults, schedule_json, bytes FROM generic_code").fetchone()
head = "\n".join(str(v) for v in g[:10]) + "\nM=61,N=129,K=67\n" + g[10] + "\n"
open(sys.argv[2] + "/generic-row", "wb").write(b"\x02" + head.encode() + g[11])
# And with bit 0 set: the digest recomputed, so every check behind it sees the generic fields.
open(sys.argv[2] + "/generic-row-checked", "wb").write(b"\x03" + head.encode() + g[11])
# Bit 3 set: signed by the fuzzer's own trusted key, so the rows get past trust to the loader.
open(sys.argv[2] + "/row-signed", "wb").write(b"\x08" + open(sys.argv[2] + "/row", "rb").read()[1:])
open(sys.argv[2] + "/generic-row-signed", "wb").write(b"\x0a" + open(sys.argv[2] + "/generic-row", "rb").read()[1:])
open(sys.argv[2] + "/generic-row-checked-signed", "wb").write(
    b"\x0b" + open(sys.argv[2] + "/generic-row-checked", "rb").read()[1:])
PY
    rm -f "$seed_db"* "$build/loader-seeds/seed.key"*
    cd "$build"
    echo "fuzz: running code_loader_fuzzer for ${seconds}s (corpus $build/loader-corpus)"
    start=$(date +%s)
    status=0
    ./code_loader_fuzzer loader-corpus loader-seeds -max_total_time="$seconds" -max_len=65536 \
        -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 || status=$?
    end=$(date +%s)
    echo "fuzz: ran $((end - start))s, exit status $status"
    exit "$status"
fi
cmake --build "$build" -j2 --target parser_fuzzer

mkdir -p "$build/corpus" "$build/seeds"
cp "$root"/ops/*.op "$build/seeds/"

cd "$build"
echo "fuzz: running parser_fuzzer for ${seconds}s (corpus $build/corpus, seeds from ops/)"
start=$(date +%s)
status=0
./parser_fuzzer corpus seeds -dict="$root/tests/fuzz/op.dict" -max_total_time="$seconds" \
    -max_len=4096 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 || status=$?
end=$(date +%s)
echo "fuzz: ran $((end - start))s, exit status $status"
exit "$status"
