#!/usr/bin/env python3
"""Summary of opgen_choice_bench lines (scripts/bench/generic.sh time / time-heldout).

Per op: the median and worst ratio over a full tune of the generic kernel the lookup serves, the
answer find() chose, and the model's answer (find() with no measurement deciding). Then the
threshold sweep: find() answers with the generic kernel exactly when the best measured estimate
(best_measured) is at most its threshold, else with the model's answer, so each threshold's
choice per shape follows from the line. The threshold with the lowest geometric mean of the
chosen ratios over every shape of the file is printed last (ties: the highest, which answers
more shapes at once, with no compile); run on shapes the report does not use, it is the held-out
choice of runtime/Lookup.cpp's kMeasuredGoodEnough.
"""
import math
import statistics
import sys

THRESHOLDS = [0.0, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.8, 2.0, 2.5, 3.0, math.inf]


def read_rows(path):
    rows = []
    for line in open(path):
        if ' chosen_ratio ' not in line:
            continue
        words = line.split('[')[0].split()
        fields = dict(zip(words[2::2], words[3::2]))
        fields['op'], fields['shape'] = words[0], words[1]
        rows.append(fields)
    return rows


def chosen_at(row, threshold):
    best = float(row['best_measured'])
    return float(row['generic_ratio'] if not math.isnan(best) and best <= threshold else row['model_ratio'])


def print_medians(by_op):
    for op, rows in by_op.items():
        for what in ('generic', 'chosen', 'model'):
            ratios = [(float(r[what + '_ratio']), r['shape']) for r in rows]
            worst = max(ratios)
            print(f"{op:12s} {what:8s} median {statistics.median(x for x, _ in ratios):.3f}  "
                  f"worst {worst[0]:.3f} ({worst[1]})  n={len(ratios)}")


def print_lookup_costs(rows):
    kinds = {}
    for r in rows:
        kinds[r['chosen']] = kinds.get(r['chosen'], 0) + 1
    print("chosen kinds: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    costs = ["find_first_us", "predict_us", "rank_us", "find_again_us", "candidates"]
    print("lookup: " + ", ".join(
        f"{k} median {statistics.median(float(r[k]) for r in rows):.1f} max {max(float(r[k]) for r in rows):.1f}"
        for k in costs))


def print_best_generic(path):
    best = {}
    for line in open(path):
        if ' generic-from ' not in line:
            continue
        w = line.split()
        key = (w[0], w[1])
        best[key] = min(best.get(key, math.inf), float(w[w.index('ratio') + 1]))
    ops = {}
    for (op, shape), b in best.items():
        ops.setdefault(op, []).append((b, shape))
    for op, v in ops.items():
        w = max(v)
        print(f"{op:12s} best-generic median {statistics.median(x for x, _ in v):.3f}  worst {w[0]:.3f} ({w[1]})  n={len(v)}")


def sweep(by_op, rows):
    print("threshold sweep (per-op median of the chosen ratio; all: geometric mean):")
    best = None
    for t in THRESHOLDS:
        medians = {op: statistics.median(chosen_at(r, t) for r in v) for op, v in by_op.items()}
        geo = math.exp(statistics.mean(math.log(chosen_at(r, t)) for r in rows))
        print(f"  {t:>5}: " + "  ".join(f"{op} {m:.3f}" for op, m in medians.items()) + f"  all {geo:.4f}")
        if best is None or geo <= best[1]:
            best = (t, geo)
    print(f"lowest geometric mean at threshold {best[0]} ({best[1]:.4f})")


def main():
    path = sys.argv[1]
    rows = read_rows(path)
    by_op = {}
    for r in rows:
        by_op.setdefault(r['op'], []).append(r)
    print_lookup_costs(rows)
    print_medians(by_op)
    print_best_generic(path)
    sweep(by_op, rows)


if __name__ == '__main__':
    main()
