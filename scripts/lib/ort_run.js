#!/usr/bin/env node
// Runs an ONNX model on ONNX Runtime (npm onnxruntime-node), .npy in and out.
//
//   node scripts/lib/ort_run.js MODEL.onnx --input NAME=FILE.npy ...
//        [--output-dir DIR] [--repeat N] [--warmup N] [--threads N]
//        [--ort DIR]
//
// Creates an InferenceSession at default settings (--threads sets
// intraOpNumThreads), runs it --warmup times untimed and --repeat times
// timed, prints every output's name, dtype and shape and then
//
//   latency: <ms> ms (median of <N>)
//
// (the line mnemo-run prints), and writes the outputs to DIR/<name>.npy.
// onnxruntime-node is loaded from --ort (a directory holding
// node_modules/onnxruntime-node), by default build/ort of this checkout,
// where scripts/bench_cpu.py installs it. Only little-endian, C-order
// float32, int64 and int32 arrays are read and written.

'use strict';

const fs = require('fs');
const path = require('path');

const ROOT = path.resolve(__dirname, '..', '..');

// .npy descr <-> onnxruntime tensor type and typed array.
const DTYPES = [
  {descr: '<f4', type: 'float32', array: Float32Array},
  {descr: '<i8', type: 'int64', array: BigInt64Array},
  {descr: '<i4', type: 'int32', array: Int32Array},
];

function fail(message) {
  process.stderr.write(`ort_run: error: ${message}\n`);
  process.exit(1);
}

/** Reads a .npy file into {dtype, shape, data}. */
function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || buf.toString('latin1', 0, 6) !== '\x93NUMPY')
    fail(`${file}: not a .npy file`);
  const major = buf[6];
  const lenBytes = major === 1 ? 2 : 4;
  const headerLen = lenBytes === 2 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = 8 + lenBytes;
  const header = buf.toString('latin1', start, start + headerLen);
  const descr = /'descr'\s*:\s*'([^']*)'/.exec(header);
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(header);
  const shape = /'shape'\s*:\s*\(([^)]*)\)/.exec(header);
  if (!descr || !fortran || !shape)
    fail(`${file}: unreadable header ${header.trim()}`);
  if (fortran[1] === 'True')
    fail(`${file}: Fortran-order arrays are not supported`);
  const dtype = DTYPES.find((d) => d.descr === descr[1]);
  if (!dtype)
    fail(`${file}: dtype ${descr[1]} is not one of ` +
         DTYPES.map((d) => d.descr).join(', '));
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s)
                   .map(Number);
  const count = dims.reduce((a, b) => a * b, 1);
  const offset = start + headerLen;
  const bytes = count * dtype.array.BYTES_PER_ELEMENT;
  if (buf.length - offset < bytes)
    fail(`${file}: ${buf.length - offset} data bytes, expected ${bytes}`);
  // Copy into a fresh, aligned buffer.
  const data = new dtype.array(count);
  Buffer.from(data.buffer).set(buf.subarray(offset, offset + bytes));
  return {dtype, dims, data};
}

/** Writes a typed array of the given onnxruntime type and dims as .npy. */
function writeNpy(file, type, dims, data) {
  const dtype = DTYPES.find((d) => d.type === type);
  if (!dtype)
    fail(`${file}: cannot write an output of type ${type}`);
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${dtype.descr}', 'fortran_order': False, ` +
               `'shape': ${shape}, }`;
  // Magic (6) + version (2) + length (2) + header + '\n', padded to 64.
  const unpadded = 10 + header.length + 1;
  header += ' '.repeat((64 - (unpadded % 64)) % 64) + '\n';
  const prefix = Buffer.alloc(10);
  prefix.write('\x93NUMPY', 0, 'latin1');
  prefix[6] = 1;
  prefix[7] = 0;
  prefix.writeUInt16LE(header.length, 8);
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, 'latin1'),
                                        body]));
}

function parseArgs(argv) {
  const options = {model: null, inputs: [], outputDir: null, repeat: 30,
                   warmup: 3, threads: 0,
                   ort: path.join(ROOT, 'build', 'ort')};
  const intAtLeast = (flag, value, min) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min)
      fail(`${flag}: expected an integer >= ${min}, got '${value}'`);
    return n;
  };
  for (let i = 0; i < argv.length; ++i) {
    let flag = argv[i];
    if (!flag.startsWith('--')) {
      if (options.model)
        fail(`unexpected argument '${flag}' (the model is ${options.model})`);
      options.model = flag;
      continue;
    }
    let value;
    const eq = flag.indexOf('=');
    if (eq >= 0) {
      value = flag.slice(eq + 1);
      flag = flag.slice(0, eq);
    } else {
      if (i + 1 >= argv.length)
        fail(`${flag}: expects a value`);
      value = argv[++i];
    }
    if (flag === '--input') {
      const sep = value.indexOf('=');
      if (sep <= 0 || sep + 1 === value.length)
        fail(`--input ${value}: expected NAME=FILE.npy`);
      options.inputs.push([value.slice(0, sep), value.slice(sep + 1)]);
    } else if (flag === '--output-dir') {
      options.outputDir = value;
    } else if (flag === '--repeat') {
      options.repeat = intAtLeast(flag, value, 1);
    } else if (flag === '--warmup') {
      options.warmup = intAtLeast(flag, value, 0);
    } else if (flag === '--threads') {
      options.threads = intAtLeast(flag, value, 1);
    } else if (flag === '--ort') {
      options.ort = value;
    } else {
      fail(`${flag}: unknown option`);
    }
  }
  if (!options.model)
    fail('no model given');
  return options;
}

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  let ort;
  try {
    ort = require(path.resolve(options.ort, 'node_modules',
                               'onnxruntime-node'));
  } catch (e) {
    fail(`cannot load onnxruntime-node from ${options.ort}: ${e.message}`);
  }

  const sessionOptions = {};
  if (options.threads)
    sessionOptions.intraOpNumThreads = options.threads;
  const session = await ort.InferenceSession.create(options.model,
                                                    sessionOptions);
  const feeds = {};
  for (const [name, file] of options.inputs) {
    if (!session.inputNames.includes(name))
      fail(`--input ${name}: the model's inputs are ` +
           session.inputNames.join(', '));
    const {dtype, dims, data} = readNpy(file);
    feeds[name] = new ort.Tensor(dtype.type, data, dims);
  }
  const missing = session.inputNames.filter((n) => !(n in feeds));
  if (missing.length)
    fail(`no --input for ${missing.join(', ')}`);

  let results;
  for (let i = 0; i < options.warmup; ++i)
    results = await session.run(feeds);
  const times = [];
  for (let i = 0; i < options.repeat; ++i) {
    const start = process.hrtime.bigint();
    results = await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }

  if (options.outputDir)
    fs.mkdirSync(options.outputDir, {recursive: true});
  for (const name of session.outputNames) {
    const t = results[name];
    let line = `${name}: ${t.type} [${t.dims.join(', ')}]`;
    if (options.outputDir) {
      const file = path.join(options.outputDir,
                             name.replace(/[^A-Za-z0-9_.-]/g, '_') + '.npy');
      writeNpy(file, t.type, t.dims, t.data);
      line += ` -> ${file}`;
    }
    console.log(line);
  }
  console.log(`latency: ${median(times).toPrecision(4)} ms ` +
              `(median of ${times.length})`);
}

main().catch((e) => fail(e.message || String(e)));
