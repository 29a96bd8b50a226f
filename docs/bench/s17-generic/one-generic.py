# one-generic.py SRC DST OP FROM: DST = SRC with OP's generic code only from the tuned shape FROM
# and no tuned kernel of OP but FROM's, so that any other shape of OP is served by that code.
import shutil, sqlite3, sys
src, dst, op, frm = sys.argv[1:5]
shutil.copyfile(src, dst)
db = sqlite3.connect(dst)
for t in ("kernels", "kernel_code", "measurements", "kernel_variants", "tuning_runs"):
    db.execute(f"delete from {t} where op_name=? and shape!=?", (op, frm))
db.execute("delete from generic_code where op_name=? and shape!=?", (op, frm))
db.commit()
print(db.execute("select count(*) from generic_code where op_name=?", (op,)).fetchone()[0], "generic row(s)")
