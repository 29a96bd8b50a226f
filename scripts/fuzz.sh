#!/usr/bin/env bash
# Fuzzes the op-language parser with libFuzzer for SECONDS seconds (default 60):
#   scripts/fuzz.sh 600
# Configures tests/fuzz with clang in its own build folder (build-fuzz, or $OPGEN_FUZZ_BUILD),
# builds parser_fuzzer with AddressSanitizer and UBSan, seeds the corpus with ops/*.op, and runs
# it with the op-language dictionary on one core. The corpus grows in <build>/corpus across runs;
# a crash leaves its input as <build>/crash-* and makes this script exit non-zero.
set -euo pipefail

seconds="${1:-60}"
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -lt 1 ]; then
    echo "usage: scripts/fuzz.sh SECONDS" >&2
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
