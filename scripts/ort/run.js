#!/usr/bin/env node
// Runs an ONNX model through ONNX Runtime (CPU, from the npm package scripts/ort-setup.sh
// installs): the reference that whole-model outputs are checked against and the anchor their
// latency is compared with. Reads .npy inputs (float32, int32, int64, bool, uint8, int8), writes
// the outputs as .npy of their types,
// times N runs after W warm-up runs, and prints one JSON line: the median and minimum latency,
// the CPU time per run, the session's load time, and the process's peak resident memory (with the resident memory of
// the bare Node.js process before ONNX Runtime was loaded, so the two can be told apart).
//
// usage: run.js --model M.onnx [--input NAME=FILE.npy]... [--inputs DIR] [--threads N]
//               [--runs N] [--warmup N] [--out DIR] [--ort DIR] [--profile PREFIX]
//   --inputs DIR   every DIR/<input name>.npy (as scripts/models/make_models.py writes them)
//   --threads N    intra-op threads (default 1); inter-op is 1, execution sequential
//   --ort DIR      where onnxruntime-node is installed (DIR/node_modules/onnxruntime-node);
//                  default $OPGEN_ORT_DIR, else build/ort under the repository
//   --profile PREFIX  ONNX Runtime's own per-node profile (every warm-up and timed run) goes to
//                  PREFIX_<date>.json, its path in the JSON line as "profile"; the latency with
//                  profiling on is not a figure to compare (scripts/models/ort_profile_summary.py
//                  reads the file)
// Bad arguments or files end the process with one `error: ...` line and status 1.
'use strict';

const fs = require('fs');
const path = require('path');

const startRss = process.memoryUsage().rss;

class UserError extends Error {}

function parseArgs(argv) {
    const args = {inputs: {}, inputsDir: null, threads: 1, runs: 10, warmup: 2, out: null,
                  model: null, ort: null, profile: null};
    for (let i = 0; i < argv.length; i++) {
        const flag = argv[i];
        const value = argv[i + 1];
        if (value === undefined) throw new UserError(`flag ${flag} needs a value`);
        i++;
        if (flag === '--model') args.model = value;
        else if (flag === '--inputs') args.inputsDir = value;
        else if (flag === '--out') args.out = value;
        else if (flag === '--ort') args.ort = value;
        else if (flag === '--profile') args.profile = value;
        else if (flag === '--input') {
            const eq = value.indexOf('=');
            if (eq <= 0) throw new UserError(`--input '${value}' is not NAME=FILE`);
            args.inputs[value.slice(0, eq)] = value.slice(eq + 1);
        } else if (flag === '--threads' || flag === '--runs' || flag === '--warmup') {
            const n = Number(value);
            const least = flag === '--warmup' ? 0 : 1;
            if (!Number.isInteger(n) || n < least)
                throw new UserError(`${flag} '${value}' must be an integer >= ${least}`);
            args[flag.slice(2)] = n;
        } else {
            throw new UserError(`unknown flag '${flag}'`);
        }
    }
    if (!args.model) throw new UserError('--model is required');
    return args;
}

// numpy's type names, ONNX Runtime's, and the typed arrays that hold them.
const NPY_TYPES = {
    '<f4': {ort: 'float32', array: Float32Array},
    '<i4': {ort: 'int32', array: Int32Array},
    '<i8': {ort: 'int64', array: BigInt64Array},
    '|b1': {ort: 'bool', array: Uint8Array},
    '|u1': {ort: 'uint8', array: Uint8Array},
    '|i1': {ort: 'int8', array: Int8Array},
};

// .npy version 1-3, little-endian, C order, of NPY_TYPES: what numpy.save writes for them.
function readNpy(file) {
    let bytes;
    try {
        bytes = fs.readFileSync(file);
    } catch (e) {
        throw new UserError(`cannot read input '${file}': ${e.code || e.message}`);
    }
    if (bytes.length < 10 || bytes.toString('latin1', 0, 6) !== '\x93NUMPY')
        throw new UserError(`input '${file}' is not a .npy file`);
    const major = bytes[6];
    const headerLen = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
    const headerStart = major === 1 ? 10 : 12;
    const header = bytes.toString('latin1', headerStart, headerStart + headerLen);
    const descr = /'descr':\s*'([^']*)'/.exec(header);
    const fortran = /'fortran_order':\s*(True|False)/.exec(header);
    const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
    if (!descr || !fortran || !shape) throw new UserError(`input '${file}': bad .npy header`);
    const type = NPY_TYPES[descr[1]];
    if (!type)
        throw new UserError(`input '${file}': dtype ${descr[1]}, expected float32 (<f4), int32 (<i4), ` +
                            `int64 (<i8), bool (|b1), uint8 (|u1) or int8 (|i1)`);
    if (fortran[1] === 'True') throw new UserError(`input '${file}': Fortran order unsupported`);
    const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s).map(Number);
    const count = dims.reduce((a, b) => a * b, 1);
    const dataStart = headerStart + headerLen;
    const width = type.array.BYTES_PER_ELEMENT;
    if (bytes.length - dataStart !== count * width)
        throw new UserError(`input '${file}': ${bytes.length - dataStart} data bytes, ` +
                            `shape (${dims}) needs ${count * width}`);
    // Copy so the typed array is aligned whatever the header length.
    const data = new type.array(count);
    Buffer.from(data.buffer).set(bytes.subarray(dataStart));
    return {data, dims, type: type.ort};
}

// numpy's name of an ONNX Runtime tensor type.
function npyDescr(ortType) {
    for (const [descr, t] of Object.entries(NPY_TYPES))
        if (t.ort === ortType) return descr;
    throw new UserError(`output of type ${ortType}: no .npy type for it`);
}

function writeNpy(file, data, dims, ortType = 'float32') {
    const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
    let header = `{'descr': '${npyDescr(ortType)}', 'fortran_order': False, 'shape': ${shape}, }`;
    const total = 10 + header.length + 1;
    header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
    const prefix = Buffer.alloc(10);
    prefix.write('\x93NUMPY', 0, 'latin1');
    prefix[6] = 1;
    prefix[7] = 0;
    prefix.writeUInt16LE(header.length, 8);
    const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    fs.writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, 'latin1'), body]));
}

function loadOrt(dir) {
    const root = path.resolve(__dirname, '..', '..');
    const base = dir || process.env.OPGEN_ORT_DIR || path.join(root, 'build', 'ort');
    const pkg = path.join(path.resolve(base), 'node_modules', 'onnxruntime-node');
    if (!fs.existsSync(pkg))
        throw new UserError(`ONNX Runtime not found in '${base}': run scripts/ort-setup.sh ${base}`);
    return {ort: require(pkg), version: require(path.join(pkg, 'package.json')).version};
}

function gatherInputs(args, session) {
    const files = Object.assign({}, args.inputs);
    for (const name of session.inputNames) {
        if (files[name] || !args.inputsDir) continue;
        files[name] = path.join(args.inputsDir, name + '.npy');
    }
    for (const name of session.inputNames)
        if (!files[name]) throw new UserError(`no value for model input '${name}'`);
    for (const name of Object.keys(files))
        if (!session.inputNames.includes(name))
            throw new UserError(`model has no input '${name}' (inputs: ${session.inputNames})`);
    return files;
}

// Ends ONNX Runtime's profiling and returns the file it wrote: PREFIX_<date>.json, the newest.
function newestProfile(prefix, session) {
    session.endProfiling();
    const dir = path.dirname(path.resolve(prefix));
    const base = path.basename(prefix) + '_';
    const files = fs.readdirSync(dir).filter((f) => f.startsWith(base) && f.endsWith('.json'))
        .map((f) => path.join(dir, f));
    if (!files.length) throw new UserError(`ONNX Runtime wrote no profile '${prefix}_*.json'`);
    return files.reduce((a, b) => (fs.statSync(a).mtimeMs >= fs.statSync(b).mtimeMs ? a : b));
}

function median(values) {
    const sorted = values.slice().sort((a, b) => a - b);
    const mid = sorted.length >> 1;
    return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function main() {
    const args = parseArgs(process.argv.slice(2));
    if (!fs.existsSync(args.model)) throw new UserError(`model '${args.model}' not found`);
    const {ort, version} = loadOrt(args.ort);
    const loadStart = process.hrtime.bigint();
    const session = await ort.InferenceSession.create(args.model, {
        intraOpNumThreads: args.threads,
        interOpNumThreads: 1,
        executionMode: 'sequential',
        graphOptimizationLevel: 'all',
        ...(args.profile ? {enableProfiling: true, profileFilePrefix: args.profile} : {}),
    });
    const loadMs = Number(process.hrtime.bigint() - loadStart) / 1e6;

    const feeds = {};
    const files = gatherInputs(args, session);
    for (const name of session.inputNames) {
        const {data, dims, type} = readNpy(files[name]);
        feeds[name] = new ort.Tensor(type, type === 'bool' ? Uint8Array.from(data) : data, dims);
    }

    let results = null;
    for (let i = 0; i < args.warmup; i++) results = await session.run(feeds);
    const times = [];
    const cpuStart = process.cpuUsage();
    for (let i = 0; i < args.runs; i++) {
        const t0 = process.hrtime.bigint();
        results = await session.run(feeds);
        times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    const cpu = process.cpuUsage(cpuStart);
    const profile = args.profile ? newestProfile(args.profile, session) : undefined;

    if (args.out) {
        fs.mkdirSync(args.out, {recursive: true});
        for (const name of session.outputNames) {
            const tensor = results[name];
            writeNpy(path.join(args.out, name + '.npy'), tensor.data, tensor.dims, tensor.type);
        }
    }
    const mib = (bytes) => Math.round(bytes / 2 ** 20 * 10) / 10;
    const round = (ms) => Math.round(ms * 1000) / 1000;
    console.log(JSON.stringify({
        model: args.model,
        onnxruntime: version,
        threads: args.threads,
        runs: args.runs,
        warmup: args.warmup,
        median_ms: round(median(times)),
        min_ms: round(Math.min(...times)),
        max_ms: round(Math.max(...times)),
        // CPU time of the whole process per timed run: about threads x median when every thread
        // is busy, and a check that no more threads ran than asked for.
        cpu_ms_per_run: round((cpu.user + cpu.system) / 1000 / args.runs),
        load_ms: round(loadMs),
        peak_rss_mib: mib(process.resourceUsage().maxRSS * 1024),
        node_start_rss_mib: mib(startRss),
        outputs: session.outputNames,
        ...(profile ? {profile} : {}),
    }));
}

main().catch((e) => {
    const message = e instanceof UserError ? e.message : `onnxruntime: ${e.message}`;
    console.error(`error: ${message.split('\n')[0]}`);
    process.exit(1);
});
