#!/usr/bin/env bash
# Installs everything opgen needs from Debian's packages. Idempotent: a second run installs
# nothing and exits 0. Nothing is downloaded from anywhere but the Debian archive.
set -euo pipefail

packages=(
    cmake ninja-build g++ pkg-config
    libhalide14-0-dev llvm-14-dev zlib1g-dev libpng-dev libjpeg-dev libxml2-dev
    libxgboost-dev xgboost libsqlite3-dev sqlite3 xz-utils libcli11-dev nlohmann-json3-dev libgtest-dev
    libdnnl-dev ocl-icd-opencl-dev libopenblas-dev
    libonnx-dev libprotobuf-dev protobuf-compiler python3-onnx libonnx-testdata
    libsodium-dev
)
# Node.js and npm run ONNX Runtime from the npm registry (scripts/ort-setup.sh), the whole-model
# reference and anchor. A Node.js that already brings its own npm (NodeSource's nodejs package
# does) is used as it is: Debian's npm would conflict with it.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    packages+=(nodejs npm)
fi
# Optional extras a script needs only for itself (scripts/slurm: slurm-wlm munge; nightly: chromium).
packages+=("$@")

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "setup: all ${#packages[@]} packages present"
    exit 0
fi

echo "setup: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done"
