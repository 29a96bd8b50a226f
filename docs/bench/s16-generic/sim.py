# Replays the lookup's choice of a generic kernel on opgen_choice_bench lines (argv[1]) with one
# rule: a generic kernel whose cost-model score trails the best generic score by more than a gap
# is skipped; the lowest measured estimate among the rest answers. Each pick's ratio is its paired
# timing at the shape in the campaign's all.db (argv[2], every generic kernel timed at every tuned
# shape). Prints the median, worst and geometric mean per gap, and the best generic kernel's.
import re, sqlite3, statistics, sys
db = sqlite3.connect(sys.argv[2] if len(sys.argv) > 2 else 'all.db')
actual = {}
for shape, at, r in db.execute("select shape, at_shape, ratio from generic_timings where op_name='conv2d_nchw'"):
    actual[(shape, at)] = r
queries = []
for line in open(sys.argv[1]):
    q = line.split()[1]
    cands = re.findall(r'generic\(([^)]*)\)=([-\d.e]+)/m([\d.]+)', line)
    queries.append((q, [(s, float(sc), float(m)) for s, sc, m in cands]))
def rule(cands, gap):
    top = max(c[1] for c in cands)
    ok = [c for c in cands if top - c[1] <= gap] or cands
    return min(ok, key=lambda c: c[2])
for gap in [float('inf'), 6, 5, 4, 3, 2.5, 2, 1.5, 1, 0.5]:
    rs = []
    for q, cands in queries:
        best = rule(cands, gap)
        rs.append(actual[(best[0], q)])
    print(f"gap {gap}: median {statistics.median(rs):.3f} worst {max(rs):.3f} geo {statistics.geometric_mean(rs):.3f}  ", ' '.join(f'{r:.2f}' for r in rs))
best = [min(actual[(c[0], q)] for c in cands) for q, cands in queries]
print('oracle', f"{statistics.median(best):.3f}", ' '.join(f'{r:.2f}' for r in best))
