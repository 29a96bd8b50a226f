#!/usr/bin/env python3
"""Compares the winners of two kernel caches (a local run and a merged sharded run).

The set of keys must be identical (exit 1 otherwise). For each key the winning schedules are
compared and reported: identical, or different with the ratio of the two winners' times, each as
measured in its own run. Timing noise can swap two close candidates, so a different schedule is
reported, not counted as a failure.
usage: compare-winners.py LOCAL.db MERGED.db
"""
import sqlite3
import sys

KEY = "op_name, op_hash, shape, dtype, target, halide_version, tuner_version"


def winners(path):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = con.execute(f"SELECT {KEY}, schedule_json, time_ms, verified FROM kernels").fetchall()
    con.close()
    return {tuple(r[:7]): r[7:] for r in rows}


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    local, merged = winners(sys.argv[1]), winners(sys.argv[2])
    only_local = sorted(set(local) - set(merged))
    only_merged = sorted(set(merged) - set(local))
    same = sum(1 for k in local if k in merged and local[k][0] == merged[k][0])
    print(f"keys: local {len(local)}, merged {len(merged)}, only local {len(only_local)}, only merged {len(only_merged)}")
    for k in sorted(set(local) & set(merged)):
        a, b = local[k], merged[k]
        tag = "same schedule" if a[0] == b[0] else f"different schedule, time merged/local {b[1] / a[1]:.2f}"
        print(f"  {k[0]} {k[2]} {k[4]}: {tag}; verified local={bool(a[2])} merged={bool(b[2])}")
    for k in only_local:
        print(f"  missing from merged: {k}")
    for k in only_merged:
        print(f"  only in merged: {k}")
    unverified = [k for k in merged if not merged[k][2]]
    if only_local or only_merged or unverified or not local:
        print("FAIL: the key sets differ (or a winner is unverified, or nothing was tuned)")
        return 1
    print(f"OK: same {len(local)} keys; {same} of {len(local)} winners have the same schedule")
    return 0


if __name__ == "__main__":
    sys.exit(main())
