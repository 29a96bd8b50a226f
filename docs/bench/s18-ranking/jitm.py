import sqlite3, sys, collections
sys.path.insert(0, '/work/s18'); from matrix import short
con = sqlite3.connect(sys.argv[1])
T = collections.defaultdict(dict)
for shape, at, r in con.execute("select shape, at_shape, ratio from generic_timings where op_name=? and target like '%:t1'", (sys.argv[2],)):
    T[at][shape] = r
froms = sorted({f for r in T.values() for f in r})
print('%-14s' % 'at \\ from', ' '.join('%9s' % short(f)[:9] for f in froms))
for S in sorted(T):
    print('%-14s' % short(S), ' '.join(('%9.2f' % T[S][f]) if f in T[S] else '        -' for f in froms))
