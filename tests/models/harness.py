"""What the whole-model tests share: failing with one line, running a command,
Debian's python (the one python3-onnx is importable by), and refusing an absent ONNX Runtime."""
import os
import subprocess
import sys

PY = "/usr/bin/python3"


def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True)


def require_ort(ort_dir):
    check(os.path.isdir(os.path.join(ort_dir, "node_modules", "onnxruntime-node")),
          "ONNX Runtime is not installed in %s (scripts/ort-setup.sh %s failed or was not run)" %
          (ort_dir, ort_dir))
