#!/usr/bin/env bash
# The second README command: sets up, builds and runs every test suite through CTest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
cd "${OPGEN_BUILD_DIR:-$root/build}"
ctest --output-on-failure -j 2 --timeout 900
