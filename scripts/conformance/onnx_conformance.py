#!/usr/bin/python3
"""The ONNX backend conformance suite through `opgen compile` and `opgen run` (docs/onnx-support.md).

Every case of the four suites of Debian's libonnx-testdata (node, pytorch-converted,
pytorch-operator, simple) is compiled with heuristic schedules (`--no-tune`), run on each of its
test data sets, and every output compared with the expected `.pb`: floats within 1e-4 of the
output's largest magnitude, integers and booleans exactly.

A case is in scope when every operator it uses is in docs/onnx-support.md's list (IN_SCOPE_OPS) and every
tensor it holds is float32, int32, int64 or bool. Each case ends as one of
    passed    compiled, ran, every output matched
    refused   `opgen compile` refused it (the reason is its error line)
    failed    compiled but did not run or did not match (the reason says which)
The run fails when an in-scope case does not pass and is not named in the known-failures file
(`suite/case  reason`), or when a named case passes now (the list only shrinks).

usage: onnx_conformance.py --opgen BUILD/bin/opgen --work DIR [--jobs N] [--known FILE]
                           [--suite S] [--case SUBSTRING] [--report docs/onnx-support.md]
                           [--write-known FILE]
"""
import argparse
import collections
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper

SUITES = ["node", "pytorch-converted", "pytorch-operator", "simple"]
# The quantized operators' cases (issue 40) are counted as a group of their own: in scope when
# they use these operators, the list's others and uint8 or int8 tensors besides the list's types.
QUANTIZED = "node-quantized"
GROUPS = SUITES + [QUANTIZED]
QUANTIZED_OPS = {"QuantizeLinear", "DequantizeLinear", "QLinearMatMul", "MatMulInteger", "ConvInteger",
                 "QLinearConv", "DynamicQuantizeLinear"}

# The operator list of docs/onnx-support.md.
IN_SCOPE_OPS = set("""
Add Sub Mul Div Pow Max Min Mod PRelu Where Equal Less Greater LessOrEqual GreaterOrEqual And Or Xor
Not Sum Mean
Abs Neg Reciprocal Sqrt Exp Log Erf Tanh Sigmoid HardSigmoid HardSwish Relu LeakyRelu Elu Selu Celu
Softplus Softsign Clip Gelu Mish Sin Cos Floor Ceil Round Sign Cast CastLike
ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp
ReduceSumSquare ArgMax ArgMin CumSum Softmax LogSoftmax Hardmax
LayerNormalization BatchNormalization InstanceNormalization GroupNormalization LpNormalization
Conv ConvTranspose MaxPool AveragePool GlobalAveragePool GlobalMaxPool
Gemm MatMul Einsum
Concat Split Slice Gather GatherElements Transpose Reshape Flatten Squeeze Unsqueeze Expand Tile Pad
DepthToSpace SpaceToDepth Resize Trilu Identity Dropout
Constant Shape Size ConstantOfShape Range
""".split())
# Constant and the shape sub-graph's operators (Shape, Size, ConstantOfShape, Range) are folded at
# compile time (onnx/ShapeFold.h), so a case using them is in scope too.

IN_SCOPE_TYPES = {onnx.TensorProto.FLOAT, onnx.TensorProto.INT32, onnx.TensorProto.INT64,
                  onnx.TensorProto.BOOL}

RTOL = 1e-4


def find_data_dir():
    """The backend test data of Debian's libonnx-testdata (or python3-onnx's copy)."""
    for d in ["/usr/include/onnx/backend/test/data",
              "/usr/lib/python3/dist-packages/onnx/backend/test/data"]:
        if os.path.isdir(os.path.join(d, "node")):
            return d
    out = subprocess.run(["dpkg", "-L", "libonnx-testdata"], capture_output=True, text=True)
    for line in out.stdout.splitlines():
        if line.endswith("backend/test/data") and os.path.isdir(os.path.join(line, "node")):
            return line
    return None


# ---- scope ---------------------------------------------------------------------------------

def graph_types(graph):
    """Every element type a graph's values, weights and constants hold (sub-graphs included)."""
    types = set()
    for v in list(graph.input) + list(graph.output) + list(graph.value_info):
        if v.type.HasField("tensor_type"):
            types.add(v.type.tensor_type.elem_type)
        else:
            types.add(-1)  # a sequence, map or optional
    for t in graph.initializer:
        types.add(t.data_type)
    for n in graph.node:
        for a in n.attribute:
            if a.HasField("t"):
                types.add(a.t.data_type)
            if a.HasField("g"):
                types |= graph_types(a.g)
    return types


def quantized_case(ops, reasons):
    """Whether a case out of the list's scope is in the quantized operators' scope."""
    allowed = {"operator %s" % op for op in QUANTIZED_OPS} | {"type UINT8", "type INT8"}
    return bool(set(ops) & QUANTIZED_OPS) and all(r in allowed for r in reasons)


def classify(model_path):
    """(ops, out-of-scope reasons) of the model: empty reasons means in scope."""
    model = onnx.load(model_path)
    try:
        model = onnx.shape_inference.infer_shapes(model)
    except Exception:  # the scope is judged on what is declared, then
        pass
    ops = sorted({(n.domain + "." if n.domain not in ("", "ai.onnx") else "") + n.op_type
                  for n in model.graph.node})
    reasons = ["operator %s" % op for op in ops if op not in IN_SCOPE_OPS]
    bad = sorted(t for t in graph_types(model.graph) if t not in IN_SCOPE_TYPES)
    names = {v: k for k, v in onnx.TensorProto.DataType.items()}
    reasons += ["type %s" % names.get(t, "non-tensor") for t in bad]
    return ops, reasons


# ---- one case ------------------------------------------------------------------------------

def read_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def data_sets(case_dir):
    sets = sorted(d for d in os.listdir(case_dir) if d.startswith("test_data_set_"))
    out = []
    for s in sets:
        path = os.path.join(case_dir, s)
        files = os.listdir(path)
        def numbered(prefix):
            names = [f for f in files if re.fullmatch(prefix + r"_\d+\.pb", f)]
            return [os.path.join(path, f) for f in sorted(names, key=lambda f: int(f[len(prefix) + 1:-3]))]
        out.append((s, numbered("input"), numbered("output")))
    return out


def first_error_line(text):
    for line in text.splitlines():
        if line.startswith("error:"):
            return line[len("error:"):].strip()
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[-1].strip() if lines else "no output"


def compare(got, ref):
    """None when `got` matches `ref`, else why not: integers and booleans exactly, floats within
    RTOL of the output's largest finite magnitude, with NaN and infinities where `ref` has them."""
    if got.shape != ref.shape:
        return "shape %s, expected %s" % (list(got.shape), list(ref.shape))
    if ref.dtype.kind != "f" and got.dtype != ref.dtype:
        return "type %s, expected %s" % (got.dtype, ref.dtype)
    if ref.dtype.kind != "f":
        wrong = int(np.count_nonzero(got != ref))
        return None if wrong == 0 else "%d of %d elements differ (exact)" % (wrong, ref.size)
    ref64, got64 = ref.astype(np.float64), got.astype(np.float64)
    finite = np.isfinite(ref64)
    if not np.array_equal(np.isnan(ref64), np.isnan(got64)) or \
            not np.array_equal(ref64[np.isinf(ref64)], got64[np.isinf(ref64)]) or \
            not np.isfinite(got64[finite]).all():
        return "non-finite values differ"
    if not finite.any():
        return None
    scale = max(np.abs(ref64[finite]).max(), np.finfo(np.float32).tiny)
    rel = np.abs(got64[finite] - ref64[finite]).max() / scale
    return None if rel <= RTOL else "relative error %.3g > %g" % (rel, RTOL)


def object_cache(opgen, work):
    """The compiled-object cache the cases share (OPGEN_OBJECT_CACHE), one per opgen build: every
    distinct kernel, and Halide's runtime, is compiled once across the suite."""
    st = os.stat(opgen)
    return os.path.join(work, "objects-%d-%d" % (st.st_size, int(st.st_mtime)))


# Inputs read where ONNX takes a shape, axes, sizes or counts (or a Dropout's mode): a static-shape
# compiler needs their values, so the suite gives them with `opgen compile --fix-input`
# (docs/onnx-support.md).
SHAPE_POSITIONS = {
    "Reshape": {1}, "Expand": {1}, "Slice": {1, 2, 3, 4}, "Tile": {1}, "Pad": {1, 3}, "Resize": {1, 2, 3},
    "Upsample": {1}, "Split": {1}, "Squeeze": {1}, "Unsqueeze": {1}, "ConstantOfShape": {0},
    "Range": {0, 1, 2}, "Trilu": {1}, "CumSum": {1}, "ReduceSum": {1}, "ReduceMean": {1}, "ReduceMax": {1},
    "ReduceMin": {1}, "ReduceProd": {1}, "ReduceL1": {1}, "ReduceL2": {1}, "ReduceLogSum": {1},
    "ReduceLogSumExp": {1}, "ReduceSumSquare": {1},
    "Dropout": {1, 2},  # its ratio and training mode decide what it computes
}


def shape_inputs(model_path):
    """The graph inputs that every node reading them reads at a shape position (Resize's scales
    are float, the others integers)."""
    graph = onnx.load(model_path).graph
    initializers = {t.name for t in graph.initializer}
    inputs = {v.name for v in graph.input if v.name not in initializers}
    uses = collections.defaultdict(list)
    for n in graph.node:
        for i, name in enumerate(n.input):
            if name in inputs:
                uses[name].append(i in SHAPE_POSITIONS.get(n.op_type, ()))
    return [v.name for v in graph.input if v.name in uses and all(uses[v.name])]


def compile_case(opgen, model, out_dir, db, env, fixed):
    """`opgen compile` of one case with `fixed` ({input name: .npy path}); None or the refusal."""
    shutil.rmtree(out_dir, ignore_errors=True)
    args = [opgen, "compile", model, "-o", out_dir, "--no-tune", "--db", db, "--threads", "1",
            "--compile-jobs", "1", "--quiet"]
    for name, path in sorted(fixed.items()):
        args += ["--fix-input", "%s=%s" % (name, path)]
    compiled = subprocess.run(args, capture_output=True, text=True, env=env)
    return None if compiled.returncode == 0 else first_error_line(compiled.stderr + compiled.stdout)


def run_case(opgen, suite, case_dir, work, db):
    """Compiles and runs one case; returns (status, reason, seconds). A case with shape inputs is
    compiled per data set, those inputs fixed to the set's values; a pass then names them."""
    start = time.time()
    model = os.path.join(case_dir, "model.onnx")
    out_dir = os.path.join(work, suite + "." + os.path.basename(case_dir))
    env = dict(os.environ, OPGEN_OBJECT_CACHE=object_cache(opgen, work))
    names = [v.name for v in onnx.load(model).graph.input]
    initializers = {t.name for t in onnx.load(model).graph.initializer}
    names = [n for n in names if n not in initializers]
    fixed_names = shape_inputs(model)
    if not fixed_names:
        refusal = compile_case(opgen, model, out_dir, db, env, {})
        if refusal:
            return "refused", refusal, time.time() - start
    compiled = not fixed_names
    io_dir = out_dir + ".io"
    os.makedirs(io_dir, exist_ok=True)
    try:
        for name, inputs, outputs in data_sets(case_dir):
            paths = []
            for i, pb in enumerate(inputs):
                paths.append(os.path.join(io_dir, "input_%d.npy" % i))
                try:
                    np.save(paths[-1], read_pb(pb))
                except ValueError as e:  # a sequence or optional, not a tensor
                    return "failed", "input %d is not a tensor: %s" % (i, e), time.time() - start
            fixed = {n: p for n, p in zip(names, paths) if n in fixed_names}
            if fixed or not compiled:
                refusal = compile_case(opgen, model, out_dir, db, env, fixed)
                if refusal:
                    return "refused", refusal, time.time() - start
                compiled = True
            args = [opgen, "run", out_dir, "--iterations", "1", "--warmup", "0", "--calibrate", "0",
                    "--threads", "1"]
            for n, p in zip(names, paths):
                if n not in fixed:
                    args += ["--input", p]
            got_paths = [os.path.join(io_dir, "output_%d.npy" % i) for i in range(len(outputs))]
            ran = subprocess.run(args + ["--output"] + got_paths, capture_output=True, text=True)
            if ran.returncode != 0:
                return "failed", "run: " + first_error_line(ran.stderr + ran.stdout), time.time() - start
            for i, pb in enumerate(outputs):
                why = compare(np.load(got_paths[i]), read_pb(pb))
                if why:
                    return "failed", "%s output %d: %s" % (name, i, why), time.time() - start
        shutil.rmtree(out_dir, ignore_errors=True)
        note = "shape inputs fixed: " + ", ".join(fixed_names) if fixed_names else ""
        return "passed", note, time.time() - start
    finally:
        shutil.rmtree(io_dir, ignore_errors=True)


# ---- the suite -----------------------------------------------------------------------------

def read_known(path):
    known = {}
    if not path or not os.path.exists(path):
        return known
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, _, reason = line.partition(" ")
            known[name] = reason.strip()
    return known


def blocking_operators(reason):
    """The operators a refusal names ("... : Gather x2 (no opgen op), Conv x1 (...)")."""
    _, _, listing = reason.partition("cannot express them yet): ")
    return sorted(set(re.findall(r"(?:^|, )([A-Za-z.]+) x\d+", listing)))


def summarize(results):
    """Per suite: counts by scope and status."""
    table = collections.OrderedDict()
    for suite in GROUPS:
        rows = [r for r in results if r["suite"] == suite]
        if not rows:
            continue
        inscope = [r for r in rows if r["in_scope"]]
        table[suite] = {
            "total": len(rows),
            "in_scope": len(inscope),
            "passed": sum(r["status"] == "passed" for r in inscope),
            "refused": sum(r["status"] == "refused" for r in inscope),
            "failed": sum(r["status"] == "failed" for r in inscope),
            "passed_out_of_scope": sum(r["status"] == "passed" for r in rows if not r["in_scope"]),
            "passed_fixed": sum(r["status"] == "passed" and bool(r["reason"]) for r in inscope),
        }
    return table


def short_reason(r):
    """A refusal or failure reason without the model's path and tensor names, for grouping."""
    reason = re.sub(r"model '[^']*': ", "", r["reason"])
    if reason.endswith("tensors only") and "a compiled model takes and gives" in reason:
        types = sorted(set(re.findall(r" is (\w+)", reason)))
        return "graph inputs or outputs of type %s" % ", ".join(types)
    reason = re.sub(r"'[^']*'", "'…'", reason)
    reason = re.sub(r"unk__\d+", "unk__N", reason)
    return reason


def print_summary(results, elapsed):
    table = summarize(results)
    print("\nsuite               passed / in scope / total   refused  failed")
    for suite, c in table.items():
        print("%-19s %6d / %8d / %5d   %7d  %6d" % (suite, c["passed"], c["in_scope"], c["total"],
                                                   c["refused"], c["failed"]))
    blocked = collections.Counter()
    for r in results:
        if r["in_scope"] and r["status"] == "refused":
            for op in blocking_operators(r["reason"]) or ["(" + short_reason(r)[:90] + ")"]:
                blocked[op] += 1
    if blocked:
        print("\nin-scope cases blocked, by refused operator (a case may count under several):")
        for op, count in blocked.most_common():
            print("  %4d  %s" % (count, op))
    failed = collections.Counter(short_reason(r)[:100] for r in results
                                 if r["in_scope"] and r["status"] == "failed")
    if failed:
        print("\nin-scope failures by reason:")
        for why, count in failed.most_common():
            print("  %4d  %s" % (count, why))
    print("\n%d cases in %.1f s" % (len(results), elapsed))


def verdict(results, known):
    """The lines that fail the run: unlisted in-scope non-passes and listed cases that pass."""
    problems = []
    by_name = {r["name"]: r for r in results}
    for r in results:
        if r["in_scope"] and r["status"] != "passed" and r["name"] not in known:
            problems.append("%s %s (not in the known-failures list): %s" % (r["name"], r["status"], r["reason"]))
    for name in known:
        r = by_name.get(name)
        if r and r["status"] == "passed":
            problems.append("%s passes now: remove it from the known-failures list" % name)
        if r and not r["in_scope"]:
            problems.append("%s is out of scope: remove it from the known-failures list" % name)
    return problems


def write_known(path, results):
    rows = sorted((r["name"], r["status"], short_known_reason(r)) for r in results
                  if r["in_scope"] and r["status"] != "passed")
    with open(path, "w") as f:
        f.write("# In-scope ONNX conformance cases that do not pass yet, with the reason (docs/onnx-support.md).\n"
                "# Written by scripts/conformance/onnx_conformance.py --write-known; the test fails\n"
                "# on an in-scope case that does not pass and is not here, and on a case here that\n"
                "# passes now. Format: suite/case  status: reason\n")
        for name, status, reason in rows:
            f.write("%s  %s: %s\n" % (name, status, reason))


def short_known_reason(r):
    if r["status"] == "refused" and blocking_operators(r["reason"]):
        _, _, listing = r["reason"].partition("cannot express them yet): ")
        return listing
    return re.sub(r"model '[^']*': ", "", r["reason"])


REPORT_BEGIN = "<!-- conformance counts: generated by scripts/conformance/onnx_conformance.py --report -->"
REPORT_END = "<!-- end of generated counts -->"


def report_text(results):
    table = summarize(results)
    lines = [REPORT_BEGIN, "",
             "| suite | cases | in scope | passed | of them with shape inputs fixed | refused | failed | passed (in scope) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for suite, c in table.items():
        pct = 100.0 * c["passed"] / c["in_scope"] if c["in_scope"] else 0.0
        lines.append("| `%s` | %d | %d | %d | %d | %d | %d | %.1f%% |" % (
            suite, c["total"], c["in_scope"], c["passed"], c["passed_fixed"], c["refused"], c["failed"], pct))
    reasons = collections.Counter()
    for r in results:
        if r["in_scope"] and r["status"] == "refused":
            for op in blocking_operators(r["reason"]) or [short_reason(r)]:
                reasons[op] += 1
    lines += ["", "In-scope cases refused, by the operator named in the refusal or the reason (a case "
              "may count under several):", "", "| operator or reason | cases |", "| --- | --- |"]
    for op, count in reasons.most_common():
        lines.append("| %s | %d |" % (op, count))
    failed = collections.Counter(short_reason(r)[:100] for r in results
                                 if r["in_scope"] and r["status"] == "failed")
    lines += ["", "In-scope cases that compile but fail, by reason:", "", "| reason | cases |", "| --- | --- |"]
    for why, count in failed.most_common():
        lines.append("| %s | %d |" % (why.replace("|", "\\|"), count))
    scope = collections.Counter()
    for r in results:
        for why in r["scope"]:
            scope[why] += 1
    lines += ["", "Out of scope, by reason (a case may count under several; the most frequent 25):", "",
              "| reason | cases |", "| --- | --- |"]
    for why, count in scope.most_common(25):
        lines.append("| %s | %d |" % (why, count))
    lines += ["", REPORT_END]
    return "\n".join(lines)


def update_report(path, results):
    with open(path) as f:
        text = f.read()
    begin, end = text.find(REPORT_BEGIN), text.find(REPORT_END)
    if begin < 0 or end < 0:
        sys.exit("error: '%s' has no generated-counts markers" % path)
    text = text[:begin] + report_text(results) + text[end + len(REPORT_END):]
    with open(path, "w") as f:
        f.write(text)


def cases(data_dir, suite_filter, case_filter):
    for suite in SUITES:
        if suite_filter and suite != suite_filter:
            continue
        root = os.path.join(data_dir, suite)
        for case in sorted(os.listdir(root)):
            if case_filter and not any(f in case for f in case_filter.split(",")):
                continue
            if os.path.exists(os.path.join(root, case, "model.onnx")):
                yield suite, os.path.join(root, case)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--opgen", required=True)
    parser.add_argument("--work", required=True, help="scratch folder (kept for failed cases)")
    parser.add_argument("--data", help="backend/test/data folder (default: libonnx-testdata's)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--known", help="known-failures file")
    parser.add_argument("--suite", choices=SUITES)
    parser.add_argument("--case", help="only cases whose name contains this (or one of these, comma-separated)")
    parser.add_argument("--in-scope-only", action="store_true", help="skip running out-of-scope cases")
    parser.add_argument("--report", help="rewrite the generated counts in this markdown file")
    parser.add_argument("--write-known", help="write the in-scope non-passing cases to this file")
    args = parser.parse_args()

    data_dir = args.data or find_data_dir()
    if not data_dir:
        sys.exit("error: no ONNX backend test data (install libonnx-testdata: scripts/setup.sh)")
    if not os.access(args.opgen, os.X_OK):
        sys.exit("error: '%s' is not an executable opgen" % args.opgen)
    os.makedirs(args.work, exist_ok=True)
    for old in os.listdir(args.work):  # objects of earlier opgen builds
        if old.startswith("objects-") and os.path.join(args.work, old) != object_cache(args.opgen, args.work):
            shutil.rmtree(os.path.join(args.work, old), ignore_errors=True)
    db = os.path.join(args.work, "kernels.db")
    known = read_known(args.known)

    start = time.time()
    todo = []
    for suite, case_dir in cases(data_dir, args.suite, args.case):
        ops, scope = classify(os.path.join(case_dir, "model.onnx"))
        if scope and quantized_case(ops, scope):
            suite, scope = QUANTIZED, []
        todo.append({"suite": suite, "case": os.path.basename(case_dir), "dir": case_dir,
                     "name": suite + "/" + os.path.basename(case_dir), "ops": ops, "scope": scope,
                     "in_scope": not scope})
    # In-scope cases first: the slowest and the ones that decide the verdict.
    todo.sort(key=lambda r: not r["in_scope"])

    def work(r):
        if args.in_scope_only and not r["in_scope"]:
            r.update(status="skipped", reason="out of scope", seconds=0.0)
            return r
        status, reason, seconds = run_case(args.opgen, r["suite"], r["dir"], args.work, db)
        r.update(status=status, reason=reason, seconds=seconds)
        return r

    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for r in pool.map(work, todo):
            results.append(r)
            if len(results) % 100 == 0:
                print("%d / %d cases, %.0f s" % (len(results), len(todo), time.time() - start), flush=True)
    results.sort(key=lambda r: (GROUPS.index(r["suite"]), r["case"]))
    elapsed = time.time() - start
    with open(os.path.join(args.work, "results.json"), "w") as f:
        json.dump([{k: v for k, v in r.items() if k != "dir"} for r in results], f, indent=1)

    print_summary(results, elapsed)
    if args.write_known:
        write_known(args.write_known, results)
    if args.report:
        update_report(args.report, results)
    problems = verdict(results, known) if args.known else []
    for p in problems:
        print("FAIL:", p)
    if problems:
        print("error: %d conformance problem(s)" % len(problems))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
