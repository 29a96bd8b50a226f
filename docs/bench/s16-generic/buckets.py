import sys,re,collections
b=collections.Counter()
for l in open(sys.argv[1]):
    m=re.match(r'\s*([\d.]+)%\s+\[\.\]\s+0x([0-9a-f]+)',l)
    if m: b[int(m.group(2),16)//int(sys.argv[2],16)]+=float(m.group(1))
tot=sum(b.values())
print('kernel total %.1f%%'%tot)
for k,v in sorted(b.items()):
    if v>1: print(hex(k*int(sys.argv[2],16)), '%.1f'%v)
