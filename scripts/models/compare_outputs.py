#!/usr/bin/python3
"""Checks two sets of model outputs against each other within a relative tolerance:
every REFERENCE_DIR/<name>.npy must have a CANDIDATE_DIR/<name>.npy of the same shape with

    max |candidate - reference|  <=  rtol * max |reference|

The error is scaled by the output's largest magnitude rather than element by element, so an
element that happens to sit near zero (a logit, a centred activation) does not make a correct
result fail; a non-finite value anywhere fails. Prints one line per output; on a mismatch, the
last line is `error: ...` and the exit status is 1.

usage: compare_outputs.py REFERENCE_DIR CANDIDATE_DIR [--rtol 1e-4]
"""
import argparse
import os
import sys

import numpy as np


def compare(reference_dir, candidate_dir, rtol):
    """Returns a list of failure messages (empty when everything matches); prints a line per
    output."""
    names = sorted(f[:-4] for f in os.listdir(reference_dir) if f.endswith(".npy"))
    if not names:
        return ["no .npy outputs in reference directory '%s'" % reference_dir]
    failures = []
    for name in names:
        ref = np.load(os.path.join(reference_dir, name + ".npy")).astype(np.float64)
        path = os.path.join(candidate_dir, name + ".npy")
        if not os.path.exists(path):
            failures.append("output '%s' missing from '%s'" % (name, candidate_dir))
            continue
        got = np.load(path).astype(np.float64)
        if got.shape != ref.shape:
            failures.append("output '%s' has shape %s, reference %s" % (name, got.shape,
                                                                        ref.shape))
            continue
        if not np.all(np.isfinite(got)):
            failures.append("output '%s' has non-finite values" % name)
            continue
        scale = max(np.abs(ref).max(), np.finfo(np.float32).tiny)
        diff = np.abs(got - ref).max()
        rel = diff / scale
        verdict = "ok" if rel <= rtol else "MISMATCH"
        print("%s: shape %s, max |ref| %.4g, max abs diff %.3g, relative %.3g (rtol %g): %s" % (
            name, "x".join(map(str, ref.shape)), scale, diff, rel, rtol, verdict))
        if rel > rtol:
            failures.append("output '%s' differs: relative error %.3g > %g" % (name, rel, rtol))
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("reference_dir")
    parser.add_argument("candidate_dir")
    parser.add_argument("--rtol", type=float, default=1e-4)
    args = parser.parse_args()
    failures = compare(args.reference_dir, args.candidate_dir, args.rtol)
    if failures:
        sys.exit("error: " + "; ".join(failures))


if __name__ == "__main__":
    main()
