# mkexact.py SRC DST SHAPE: DST = SRC's C=16 F=32 14x14 tuned row (and its generic code) plus a
# "tuned" row at SHAPE whose schedule is that row's, its f tile following F (as the generic kernel's
# does), so `opgen db compile` gives the exact code of the same schedule at SHAPE.
import json, shutil, sqlite3, sys
src, dst, shape = sys.argv[1:4]
shutil.copyfile(src, dst)
db = sqlite3.connect(dst)
row = db.execute("select * from kernels where shape like 'C=16,F=32,H=14%'").fetchone()
cols = [d[1] for d in db.execute("pragma table_info(kernels)")]
r = dict(zip(cols, row))
vals = dict(p.split('=') for p in shape.split(','))
p = json.loads(r['schedule_json'])
for a in p['axes']:
    if a['var'] == 'f': a['tile'] = int(vals['F'])
r['schedule_json'] = json.dumps(p)
r['shape'] = shape
r['schedule_source'] = 'hand: the C=16 F=32 14x14 schedule, f tile = F'
db.execute(f"insert into kernels ({','.join(cols)}) values ({','.join('?'*len(cols))})", [r[c] for c in cols])
db.commit()
