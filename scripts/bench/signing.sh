# Sourced by the benchmarks that run code from a cache (kernel-calls.sh, generic.sh,
# generic-calls.sh): code runs only when signed by a trusted key (runtime/CodeTrust.h), so the
# benchmarks sign what they tune with a key of their own, made once in the build folder, and trust
# it. A caller's own OPGEN_SIGNING_KEY and OPGEN_TRUST_FILE are kept. Needs $build and $opgen.
if [ -z "${OPGEN_SIGNING_KEY:-}" ]; then
    bench_key="$build/bench-keys/bench.key"
    if [ ! -f "$bench_key" ]; then
        mkdir -p "$build/bench-keys"
        "$opgen" key new "$bench_key" >/dev/null
    fi
    export OPGEN_SIGNING_KEY="$bench_key"
    export OPGEN_TRUST_FILE="${OPGEN_TRUST_FILE:-$bench_key.pub}"
fi
