# Sourced by the benchmarks that build their own binaries (suite.sh, int8.sh): the bench build
# folder ($OPGEN_BENCH_BUILD_DIR, default build-bench; Release, benchmarks on, tests off) and
# `bench_build TARGET...`, which configures it once and builds the targets with
# $OPGEN_BENCH_JOBS jobs (default 2). Sets $root, $build and $jobs; the caller sets nothing.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${OPGEN_BENCH_BUILD_DIR:-$root/build-bench}"
jobs="${OPGEN_BENCH_JOBS:-2}"

bench_build() {
    local generator=()
    if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
    if [ ! -f "$build/CMakeCache.txt" ]; then
        cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
            -DOPGEN_BUILD_BENCH=ON -DOPGEN_BUILD_TESTS=OFF
    fi
    cmake --build "$build" -j "$jobs" --target "$@"
}
