# classes.py PERF_TXT ASM REGION...: samples of a cached kernel (perf report --sort sym of the
# memfd'd .so, as buckets.py of s16-generic reads them) summed per instruction class, over the whole
# kernel and per address region (lo:hi in hex). The classes: FMA, broadcast, insert/extract
# (gathers and transposed stores), vector move, other (scalar address work, branches, spills).
import collections, re, sys
samples = collections.Counter()
for line in open(sys.argv[1]):
    m = re.match(r'\s*([\d.]+)%\s+\[\.\]\s+0x([0-9a-f]+)', line)
    if m: samples[int(m.group(2), 16)] += float(m.group(1))
ins = {}
for line in open(sys.argv[2]):
    m = re.match(r'\s*([0-9a-f]+):\s+(\S+)', line)
    if m: ins[int(m.group(1), 16)] = m.group(2)
def kind(op):
    if 'fmadd' in op: return 'fma'
    if 'broadcast' in op: return 'broadcast'
    if 'extract' in op or 'insert' in op: return 'insert/extract'
    if op.startswith('vmov'): return 'vmov'
    return 'other'
total = collections.Counter()
for a, v in samples.items(): total[kind(ins.get(a, '?'))] += v
print('all', {k: round(v, 1) for k, v in total.most_common()})
for region in sys.argv[3:]:
    lo, hi = (int(x, 16) for x in region.split(':'))
    t = sum(v for a, v in samples.items() if lo <= a < hi)
    o = sum(v for a, v in samples.items() if lo <= a < hi and kind(ins.get(a, '?')) == 'other')
    print(f'{region}: {t:.1f}% of samples, other {o:.1f}%')
