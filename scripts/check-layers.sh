#!/usr/bin/env bash
# Checks that no source file includes a header from a folder of a higher layer (docs/design.md,
# "The layers"). Prints one `error: FILE:LINE: ...` line per violation and exits 1 on any; prints
# the layer table and "layers: N includes checked, 0 violations" otherwise.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

# Layer numbers, bottom first. Folders on one layer may include each other's headers only where
# the list below says so: store and costmodel are both on layer 1 and independent.
declare -A layer=([base]=0 [store]=1 [costmodel]=1 [runtime]=2 [core]=3 [codegen]=4 [tuner]=5
                  [onnx]=6 [cli]=7)

checked=0
violations=0
for folder in "${!layer[@]}"; do
    [ -d "$folder" ] || { echo "error: $folder/: layer folder missing"; violations=$((violations + 1)); continue; }
    while IFS=: read -r file line text; do
        inc="$(sed -E 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1/' <<<"$text")"
        top="${inc%%/*}"
        [ "$top" != "$inc" ] || continue           # a file-local include ("naive.h")
        [ -n "${layer[$top]+x}" ] || continue       # a system or third-party header
        checked=$((checked + 1))
        mine=${layer[$folder]}
        theirs=${layer[$top]}
        if [ "$theirs" -gt "$mine" ] || { [ "$theirs" -eq "$mine" ] && [ "$top" != "$folder" ]; }; then
            echo "error: $file:$line: $folder (layer $mine) includes $inc (layer $theirs)"
            violations=$((violations + 1))
        fi
    done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$folder" \
                 --include='*.h' --include='*.cpp' --include='*.c' || true)
done

if [ "$violations" -ne 0 ]; then
    echo "layers: $checked includes checked, $violations violations"
    exit 1
fi
for folder in base store costmodel runtime core codegen tuner onnx cli; do
    printf '  layer %s  %s/\n' "${layer[$folder]}" "$folder"
done
echo "layers: $checked includes checked, 0 violations"
