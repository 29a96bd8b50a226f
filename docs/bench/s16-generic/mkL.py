import sqlite3, shutil, sys
src, dst, prefix = sys.argv[1:4]
shutil.copyfile(src, dst)
db=sqlite3.connect(dst)
key=[s for (s,) in db.execute("select shape from kernels where op_name='conv2d_nchw' and shape like ?", (prefix+'%',))][0]
for t in ("kernels","kernel_code","measurements","kernel_variants","tuning_runs"):
    db.execute(f"delete from {t} where op_name='conv2d_nchw' and shape=?", (key,))
db.execute("delete from generic_code where op_name='conv2d_nchw' and shape != ?", (key,))
db.commit()
(b,)=db.execute("select bytes from generic_code where op_name='conv2d_nchw'").fetchone()
open(dst.replace('.db','.so'),'wb').write(b)
db=sqlite3.connect(src)
(b,)=db.execute("select bytes from kernel_code where op_name='conv2d_nchw' and shape=?", (key,)).fetchone()
open(dst.replace('.db','-exact.so'),'wb').write(b)
print(key)
