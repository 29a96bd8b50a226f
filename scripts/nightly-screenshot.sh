#!/usr/bin/env bash
# Renders an HTML report in headless Chromium (Debian's chromium) to a PNG and checks the picture:
# the requested size, and not blank (enough distinct colours and non-white pixels, which the table
# text and the chart bars give). Installs chromium through scripts/setup.sh when it is missing.
#   scripts/nightly-screenshot.sh REPORT.html OUT.png [WIDTHxHEIGHT]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
html="$1"
png="$2"
size="${3:-1400x1800}"
[ -f "$html" ] || { echo "error: no report '$html'" >&2; exit 2; }
command -v chromium >/dev/null 2>&1 || "$root/scripts/setup.sh" chromium
rm -f "$png"
# --no-sandbox: root in a container has no user namespaces for Chromium's sandbox.
timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
    --window-size="${size/x/,}" --screenshot="$(realpath -m "$png")" "file://$(realpath "$html")" \
    >/dev/null 2>&1 || true
[ -s "$png" ] || { echo "error: chromium wrote no screenshot '$png'" >&2; exit 1; }
python3 "$root/scripts/png_check.py" "$png" "$size"
