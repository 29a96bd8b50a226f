import re, sys, math, collections
def load(files):
    data = collections.defaultdict(list)  # (op,shape) -> [(from, ratio, score, measured)]
    chosen = {}
    for f in files:
        for line in open(f):
            if line.startswith('  '):
                t = line.split()
                op, shape = t[0], t[1]
                d = dict(zip(t[2::2], t[3::2]))
                r, s, m = float(d['ratio']), float(d['score']), float(d['measured'])
                if not math.isnan(m):
                    data[(op, shape)].append((d['generic-from'], r, s, m))
            else:
                t = line.split()
                d = dict(zip(t[2::2], t[3::2]))
                chosen[(t[0], t[1])] = float(d['chosen_ratio'])
    return data, chosen
def med(v):
    v = sorted(v); n = len(v)
    return v[n//2] if n % 2 else math.sqrt(v[n//2-1]*v[n//2])
def evaluate(data, rule):
    out = []
    for k, rows in data.items():
        best = min(rows, key=rule)
        out.append(best[1])
    return out
if __name__ == '__main__':
    for files in [sys.argv[1:]]:
        data, chosen = load(files)
        ops = sorted(set(k[0] for k in data))
        for op in ops:
            d = {k: v for k, v in data.items() if k[0] == op}
            print(op, len(d), 'chosen med %.3f' % med([chosen[k] for k in d]),
                  'oracle %.3f' % med(evaluate(d, lambda r: r[1])))
            for a in [0, 0.05, 0.1, 0.2, 0.3, 0.5, 1, 2, 1e9]:
                rule = (lambda r, a=a: math.log(r[3]) - a * r[2]) if a < 1e8 else (lambda r: -r[2])
                v = evaluate(d, rule)
                print('  a=%g med %.3f worst %.3f gmean %.3f' % (a, med(v), max(v), math.exp(sum(map(math.log, v))/len(v))))
