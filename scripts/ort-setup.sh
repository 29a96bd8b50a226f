#!/usr/bin/env bash
# Installs ONNX Runtime's CPU build from the npm registry into a project-local folder, as the
# reference and the latency anchor for whole models:
#   npm install --ignore-scripts onnxruntime-node@VERSION   into DIR/node_modules
# The package carries its CPU library; its install script would only fetch GPU extras (and fails
# offline), hence --ignore-scripts. Node.js and npm come from Debian (scripts/setup.sh).
# Idempotent: when DIR already holds the pinned version and it loads, nothing is fetched.
# On failure prints one `error: ...` line and exits 1.
# usage: scripts/ort-setup.sh [DIR]      (default: build/ort under the repository)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="${1:-${OPGEN_ORT_DIR:-$root/build/ort}}"
case "$dir" in /*) ;; *) dir="$PWD/$dir" ;; esac  # node's require() resolves relative paths from its module
version="${OPGEN_ORT_VERSION:-1.30.0}"
pkg="$dir/node_modules/onnxruntime-node"

fail() {
    echo "error: $*" >&2
    exit 1
}

# Loads the binding and runs nothing: proves the shared library and the addon match this Node.
loads() {
    node -e "require(process.argv[1]).InferenceSession" "$pkg" >/dev/null 2>&1
}

installed_version() {
    node -p "require(process.argv[1]).version" "$pkg/package.json" 2>/dev/null || true
}

command -v node >/dev/null 2>&1 || fail "node not found: install Node.js (scripts/setup.sh installs Debian's nodejs and npm)"
command -v npm >/dev/null 2>&1 || fail "npm not found: install it (scripts/setup.sh installs Debian's nodejs and npm)"

if [ "$(installed_version)" = "$version" ] && loads; then
    echo "ort-setup: onnxruntime-node $version present in $dir"
    exit 0
fi

mkdir -p "$dir" || fail "cannot create '$dir'"
if [ ! -f "$dir/package.json" ]; then
    echo '{"name": "opgen-ort", "private": true}' >"$dir/package.json"
fi
log="$dir/npm-install.log"
echo "ort-setup: installing onnxruntime-node $version into $dir (log: $log)"
if ! npm install --prefix "$dir" --ignore-scripts --no-audit --no-fund --loglevel=error \
        "onnxruntime-node@$version" >"$log" 2>&1; then
    reason="$(grep -m1 -E 'npm (ERR|error) (code|network|request|notarget|404)' "$log" || tail -n1 "$log")"
    fail "npm could not install onnxruntime-node $version into '$dir': ${reason:-see $log}"
fi
[ "$(installed_version)" = "$version" ] || fail "npm finished but '$pkg' is not version $version"
loads || fail "onnxruntime-node $version is installed in '$dir' but does not load in node $(node --version)"
echo "ort-setup: onnxruntime-node $version ready in $dir"
