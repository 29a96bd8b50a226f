import sys, collections, math
R = collections.defaultdict(dict); M = {}
def short(s):
    v = dict(p.split('=') for p in s.split(','))
    return ' '.join(v.get(k, '') for k in ['C', 'F', 'H', 'N', 'M', 'K']).strip()
if __name__ == "__main__":
  for f in sys.argv[2:]:
      for line in open(f):
          if not line.startswith('  '): continue
          t = line.split()
          if t[0] != sys.argv[1]: continue
          d = dict(zip(t[2::2], t[3::2]))
          R[t[1]][d['generic-from']] = (float(d['ratio']), d['measured'])
  froms = sorted({f for r in R.values() for f in r})
  print('%-14s' % 'at \\ from', ' '.join('%9s' % short(f)[:9] for f in froms))
  for S in sorted(R):
      print('%-14s' % short(S), ' '.join(('%8.2f%s' % (R[S][f][0], '*' if R[S][f][1] == 'nan' else ' ')) if f in R[S] else '        -' for f in froms))
