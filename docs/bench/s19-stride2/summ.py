import collections,statistics,sys
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    w=l.split(); i=w.index('p10'); j=w.index('p50'); e=w[w.index('err')+1]
    d[w[0]].append((float(w[i+1]),float(w[j+1]),e))
for k,v in d.items(): print(f"{k:12s}", "p10 %5.0f"%statistics.median(a for a,b,e in v), "p50 %5.0f"%statistics.median(b for a,b,e in v), [round(b) for a,b,e in v], "err", max(float(e) for a,b,e in v))
