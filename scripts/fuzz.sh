#!/usr/bin/env bash
# Fuzzes the op-language parser (default) or the kernel-code loader with libFuzzer for SECONDS
# seconds (default 60):
#   scripts/fuzz.sh 600            the parser, seeded with ops/*.op and the op-language dictionary
#   scripts/fuzz.sh 600 loader     the code loader (runtime/CodeLoader.h) on corrupt kernel_code and
#                                  generic_code rows, seeded with a real kernel row and a real
#                                  generic row: the main build's opgen (build/, or
#                                  $OPGEN_BUILD_DIR) tunes a small matmul and builds its generic
#                                  code, and both rows are written out as the fuzzer's input format
#   scripts/fuzz.sh 600 onnx       the model compiler's front half (read, shape inference, folding,
#                                  partition, binding) on model files, seeded with the ONNX backend
#                                  test cases' models and tests/models
# Configures tests/fuzz with clang in its own build folder (build-fuzz, or $OPGEN_FUZZ_BUILD),
# builds the fuzzer with AddressSanitizer and UBSan and runs it on one core. The corpus grows in
# <build>/corpus (<build>/loader-corpus) across runs; a crash leaves its input as
# <build>/crash-* and makes this script exit non-zero.
set -euo pipefail

seconds="${1:-60}"
which="${2:-parser}"
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -lt 1 ] || { [ "$which" != parser ] && [ "$which" != loader ] &&
    [ "$which" != onnx ]; }; then
    echo "usage: scripts/fuzz.sh SECONDS [parser|loader|onnx]" >&2
    exit 2
fi

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${OPGEN_FUZZ_BUILD:-$root/build-fuzz}"
clang_cxx="${CLANGXX:-clang++}"
command -v "$clang_cxx" >/dev/null || { echo "fuzz: $clang_cxx not found (apt-get install clang)" >&2; exit 2; }

# run_fuzzer NAME CORPUS SEEDS [libFuzzer flags...]: runs ./NAME in $build for $seconds seconds,
# reports the time and exits with the fuzzer's status (non-zero when it found a crash).
run_fuzzer() {
    local name="$1" corpus="$2" seeds="$3"
    shift 3
    cd "$build"
    echo "fuzz: running $name for ${seconds}s (corpus $build/$corpus, seeds $build/$seeds)"
    local start status=0
    start=$(date +%s)
    "./$name" "$corpus" "$seeds" -max_total_time="$seconds" -print_final_stats=1 "$@" || status=$?
    echo "fuzz: ran $(($(date +%s) - start))s, exit status $status"
    exit "$status"
}

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
    run_fuzzer code_loader_fuzzer loader-corpus loader-seeds -max_len=65536 -timeout=10 -rss_limit_mb=2048
fi
if [ "$which" = onnx ]; then
    cmake --build "$build" -j2 --target onnx_model_fuzzer
    # Seeds: the ONNX backend test cases' models (libonnx-testdata) and the test models.
    mkdir -p "$build/onnx-corpus" "$build/onnx-seeds"
    data="$(dpkg -L libonnx-testdata 2>/dev/null | grep -m1 '/backend/test/data$' || true)"
    [ -n "$data" ] || { echo "fuzz: libonnx-testdata is not installed (scripts/setup.sh)" >&2; exit 2; }
    i=0
    for model in "$data"/*/*/model.onnx "$root"/tests/models/*.onnx; do
        [ -f "$model" ] && cp "$model" "$build/onnx-seeds/seed-$((i++)).onnx"
    done
    # And one with a symbolic seq, which the target also compiles as a range.
    /usr/bin/python3 "$root/scripts/models/make_models.py" "$build/onnx-seeds" --only bert_tiny_dynamic >/dev/null
    rm -rf "$build/onnx-seeds/bert_tiny_dynamic.inputs"
    echo "fuzz: $((i + 1)) seed models"
    run_fuzzer onnx_model_fuzzer onnx-corpus onnx-seeds -max_len=1048576 -timeout=20 -rss_limit_mb=3072
fi
cmake --build "$build" -j2 --target parser_fuzzer

mkdir -p "$build/corpus" "$build/seeds"
cp "$root"/ops/*.op "$build/seeds/"
run_fuzzer parser_fuzzer corpus seeds -dict="$root/tests/fuzz/op.dict" -max_len=4096 -timeout=10 \
    -rss_limit_mb=2048
