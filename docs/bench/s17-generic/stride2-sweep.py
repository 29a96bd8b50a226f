import json, subprocess, sys, os
# sweep.py N C H W F S  name:xr/xt,yr/yt,fr/ft,cb[,order] ...
N,C,H,W,F,S = map(int, sys.argv[1:7])
shape=f"N={N},C={C},H={H},W={W},F={F},KH=1,KW=1,stride={S},pad=0"
for spec in sys.argv[7:]:
    name, rest = spec.split(':')
    parts = rest.split(',')
    (xr,xt),(yr,yt),(fr,ft) = [tuple(map(int,p.split('/'))) for p in parts[:3]]
    cb = int(parts[3]); order = parts[4].split('-') if len(parts)>4 else ["x","y","f","n"]
    pt = {"axes":[{"reg":xr,"tile":xt,"var":"x"},{"reg":yr,"tile":yt,"var":"y"},{"reg":fr,"tile":ft,"var":"f"},{"reg":1,"tile":1,"var":"n"}],
          "outer_order":order,"packed":["Wt"],"parallel_loops":0,
          "reduce":[{"block":1,"var":"rx"},{"block":1,"var":"ry"},{"block":cb,"var":"c"}],
          "unroll":True,"vector_axis":2,"vector_width":16}
    d=f"pts/{C}-{name}"; os.makedirs(d, exist_ok=True)
    json.dump(pt, open(d+"/p.json","w"))
    subprocess.run(["flock","-s","/tmp/opgen-gate.lock","/work/main/build/opgen/opgen","emit","--op","conv2d_nchw","--shape",shape,"--point",d+"/p.json","--threads","1","--out",d], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["/work/s17/drv/build.sh", "/work/s17/"+d], check=True)
    print(name, spec, flush=True)
