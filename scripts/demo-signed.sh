#!/usr/bin/env bash
# The README's signed-code demo (docs/design.md §2.9): makes a key, tunes a matmul into a fresh
# cache signed with it, and runs the kernel from a C program that links only the installed lookup
# library and trusts that key (tests/consumer/trust.c); then re-signs one row with another key and
# shows the same program refusing the file. Run after scripts/build.sh; works in DIR (default
# build/signed-demo), which it makes afresh.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${OPGEN_BUILD_DIR:-$root/build}"
opgen="$build/bin/opgen"
work="${1:-$build/signed-demo}"
rm -rf "$work"
mkdir -p "$work"

echo "== the program: tests/consumer built against opgen_cache installed into $work/prefix"
cmake --install "$build" --prefix "$work/prefix" --component opgen_cache >/dev/null
cmake -S "$root/tests/consumer" -B "$work/app" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/app" --target consumer_trust >/dev/null

echo "== opgen key new $work/nightly.key"
"$opgen" key new "$work/nightly.key"
echo "== opgen tune ... --signing-key $work/nightly.key"
"$opgen" tune --op matmul --shape M=24,N=56,K=40 --trials 4 --threads 1 --quiet --db "$work/cache.db" \
    --signing-key "$work/nightly.key" >/dev/null
"$opgen" db verify --db "$work/cache.db" --trust "$work/nightly.key.pub"
target=$(sqlite3 "$work/cache.db" "SELECT target FROM kernels LIMIT 1")
key=$(cat "$work/nightly.key.pub")

echo "== the program, trusting $key"
"$work/app/consumer_trust" "$work/cache.db" "$target" "$key" runs

echo "== the row re-signed with another key: the same program refuses the file"
"$opgen" key new "$work/other.key" >/dev/null
"$opgen" db sign --db "$work/cache.db" --signing-key "$work/other.key"
"$work/app/consumer_trust" "$work/cache.db" "$target" "$key" "is not a trusted key"
