import json,sys
d=json.load(open(sys.argv[1]))
for e in d['entries']:
    c={x['name']:x for x in e['contenders']}
    op=c.get('opgen',{}).get('gflops')
    if not op: continue
    fam=[x for x in e['contenders'] if x['family'] in ('oneDNN','OpenBLAS') and x['status']=='ok']
    if e.get('op','').startswith('matmul') or 'sgemm' in e.get('label','') or 'GEMM' in e.get('label',''):
        best=max(x['gflops'] for x in fam if x['family']=='OpenBLAS' or x.get('counts_as_onednn'))
    else:
        best=max(x['gflops'] for x in fam if x.get('counts_as_onednn'))
    print(f"{e.get('label',e.get('op')):40s} t{e.get('threads')} {op:6.1f} {best:6.1f} {op/best:5.2f} {'~' if c['opgen']['max_ms']>2*c['opgen']['min_ms'] else ''}")
