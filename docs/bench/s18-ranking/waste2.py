# Replay of the generic choice: estimates from timings at tuned shapes where the kernel fits, each
# corrected by the register-tile waste (ceil(e/reg)*reg/e per output axis) at the timed shape and
# at the requested one. Axis i of a schedule is output dim i counted from the innermost.
import math, sqlite3, sys, collections, json
sys.path.insert(0, '/work/s18'); from replay import med
op, db, src = sys.argv[1], sys.argv[2], sys.argv[3]; files = sys.argv[4:]
con = sqlite3.connect(db)
SCHED = {s: json.loads(j) for s, j in con.execute("select shape, schedule_json from generic_code where op_name=? and target like '%:t1'", (op,))}
J = collections.defaultdict(dict)
for shape, at, r in con.execute("select shape, at_shape, ratio from generic_timings where op_name=? and target like '%:t1'", (op,)):
    J[shape][at] = math.log(r)
A = collections.defaultdict(dict); cand = collections.defaultdict(list); LOOK = {}
for f in files:
    for line in open(f):
        t = line.split()
        if t[0] != op: continue
        d = dict(zip(t[2::2], t[3::2]))
        if not line.startswith('  '):
            LOOK[t[1]] = float(d['chosen_ratio']); continue
        A[d['generic-from']][t[1]] = math.log(float(d['ratio']))
        cand[t[1]].append((d['generic-from'], float(d['ratio'])))
T = J if src == 'jit' else A
def vals(s): return {a: int(b) for a, b in (p.split('=') for p in s.split(','))}
def out_dims(S):  # innermost first
    v = vals(S)
    if op == 'conv2d_nchw':
        oh = (v['H'] + 2*v['pad'] - v['dilation']*(v['KH']-1) - 1)//v['stride'] + 1
        ow = (v['W'] + 2*v['pad'] - v['dilation']*(v['KW']-1) - 1)//v['stride'] + 1
        return [ow, oh, v['F'], v['N']]
    return [v['N'], v['M']]
def fits(frm, S):
    e = out_dims(S)
    return all(a['reg'] <= e[i] for i, a in enumerate(SCHED[frm]['axes']))
def waste(frm, S):
    e = out_dims(S)
    return sum(math.log(math.ceil(e[i]/a['reg'])*a['reg']/e[i]) for i, a in enumerate(SCHED[frm]['axes']))
def dist(a, b):
    a, b = vals(a), vals(b)
    return sum(abs(math.log2(a[k]) - math.log2(b[k])) for k in a if k in b and a[k] > 0 and b[k] > 0)
def est(row, S, K, nw, sp, W, F):
    ts = [(dist(S, at), lr - (waste(row, at) if W else 0)) for at, lr in T[row].items() if at != S and (not F or fits(row, at))]
    if not ts: return None
    m = sum(l for _, l in ts) / len(ts)
    spread = math.sqrt(max(0, sum(l*l for _, l in ts)/len(ts) - m*m))
    ts.sort(); near = ts[:K]
    w = [1/(nw + d) for d, _ in near]
    return sum(wi*l for wi, (_, l) in zip(w, near)) / sum(w) + sp * spread + (waste(row, S) if W else 0)
def run(K, nw, sp, W, F, verbose=False):
    picks = []
    for S in sorted(cand):
        rows = [(f, r) for f, r in cand[S] if f != S and f in SCHED]
        fit = [x for x in rows if fits(x[0], S)] or rows
        c = sorted(x for x in ((est(f, S, K, nw, sp, W, F), r, f) for f, r in fit) if x[0] is not None)
        picks.append(c[0][1])
        if verbose: print('    %-34s pick %.3f est %.3f best %.3f lookup %.3f' % (S[:34], c[0][1], math.exp(c[0][0]), min(x[1] for x in c), LOOK[S]))
    return picks
def summary(p): return 'med %.3f gmean %.3f worst %.3f' % (med(p), math.exp(sum(map(math.log, p))/len(p)), max(p))
print(op, src, 'lookup chose:', summary(list(LOOK.values())), ' oracle:', summary([min(r for f, r in cand[S] if f != S) for S in cand]))
for W, F in [(0, 0), (0, 1), (1, 1)]:
    for sp in [0, 0.5]:
        print('  waste=%d fit-only=%d sp=%.1f K=6 nw=.25: %s' % (W, F, sp, summary(run(6, 0.25, sp, W, F))))
if len(sys.argv) > 0 and src == 'aot': run(6, .25, 0, 1, 1, True)
