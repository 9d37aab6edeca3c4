// ort_bench.js - ONNX Runtime's latency on one model, the peer of omrun in bench/run.sh.
//
//   node bench/ort_bench.js --model X.onnx --input in.bin --shape 1,3,224,224 --threads T
//                           [--dtype float32|int64|bool] [--warmup W] [--min N] [--max N] [--budget S]
//                           [--output out.bin] [--opt all|extended|basic|disabled] [--profile PREFIX]
//
// One CPU session (intraOpNumThreads = T, interOpNumThreads = 1, sequential execution,
// graph optimization level --opt, "all" by default; "disabled" runs every node as written, so a
// QDQ model's QuantizeLinear / DequantizeLinear pairs round as the graph says, with no fused
// int8 kernel in their place), the input read as raw little-endian float32 (or int64 with
// --dtype int64: token ids; --dtype bool: one byte 0 or 1 each) in the given shape. A model of several inputs takes them in the order of
// the session's input names: --input a.bin,b.bin --shape 1,3,128,128:1,3,128,128 (shapes separated
// by ':'), and --dtype one type for all or one per input (float32:int64). W untimed runs, then timed runs until both N >= --min and the timed runs add up to
// --budget seconds, or N = --max. Each run's time is session.run() wall time (hrtime),
// which includes the binding's copy of the input and output tensors.
// Prints one line (read by bench/run.sh):
//   ort: version 1.30.0, threads T, min X ms, median Y ms over N runs
// --output writes the last run's first output as raw float32 (for a cross-check).
// --profile PREFIX turns on ORT's profiler (enableProfiling, profileFilePrefix PREFIX): on session
// release ORT writes PREFIX_<date>.json, a Chrome trace whose "Node" events carry each node's
// kernel time (dur, microseconds; args.op_name) for every run, warm-up included; the file's name
// is printed on a second line (profile: FILE). bench/layer_compare.py reads it.
'use strict';

const fs = require('fs');
const path = require('path');
const ort = require(path.join(__dirname, 'node_modules', 'onnxruntime-node'));

const ELEM_BYTES = { float32: 4, int64: 8, bool: 1 }; // raw little-endian; bool one byte 0 / 1

function parseArgs(argv) {
  const o = { warmup: 2, min: 5, max: 100, budget: 5, dtype: 'float32', opt: 'all' };
  for (let i = 2; i < argv.length; i++) {
    let a = argv[i], v;
    if (!a.startsWith('--')) throw new Error(`unexpected argument '${a}'`);
    a = a.slice(2);
    const eq = a.indexOf('=');
    if (eq >= 0) { v = a.slice(eq + 1); a = a.slice(0, eq); } else { v = argv[++i]; }
    if (v === undefined) throw new Error(`--${a} needs a value`);
    o[a] = v;
  }
  for (const k of ['model', 'input', 'shape', 'threads'])
    if (o[k] === undefined) throw new Error(`--${k} is required`);
  o.threads = parseInt(o.threads, 10);
  o.warmup = parseInt(o.warmup, 10);
  o.min = parseInt(o.min, 10);
  o.max = parseInt(o.max, 10);
  o.budget = parseFloat(o.budget);
  o.input = o.input.split(',');
  o.shape = o.shape.split(':').map((s) => s.split(',').map((x) => parseInt(x, 10)));
  o.dtype = o.dtype.split(':');
  if (o.dtype.length === 1) o.dtype = o.input.map(() => o.dtype[0]);
  if (o.shape.length !== o.input.length || o.dtype.length !== o.input.length)
    throw new Error(`${o.input.length} inputs, ${o.shape.length} shapes and ${o.dtype.length} dtypes`);
  if (!['all', 'extended', 'basic', 'disabled'].includes(o.opt))
    throw new Error(`--opt: '${o.opt}' is not all, extended, basic or disabled`);
  for (const d of o.dtype)
    if (!(d in ELEM_BYTES)) throw new Error(`--dtype: '${d}' is not float32, int64 or bool`);
  return o;
}

// The files ORT's profiler may have written for PREFIX: PREFIX_*.json beside it.
function profileFiles(prefix) {
  const dir = path.dirname(prefix), base = path.basename(prefix) + '_';
  return fs.readdirSync(dir).filter((f) => f.startsWith(base) && f.endsWith('.json')).map((f) => path.join(dir, f));
}

async function main() {
  const o = parseArgs(process.argv);
  const started = Date.now() - 1000; // a profile written since (mtime rounding allowed for)
  const session = await ort.InferenceSession.create(o.model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: o.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: o.opt,
    ...(o.profile ? { enableProfiling: true, profileFilePrefix: o.profile } : {}),
  });
  if (o.input.length !== session.inputNames.length)
    throw new Error(`${o.model} has ${session.inputNames.length} inputs, --input names ${o.input.length}`);
  const feeds = {};
  o.input.forEach((file, k) => {
    const buf = fs.readFileSync(file), dtype = o.dtype[k], shape = o.shape[k];
    const count = shape.reduce((a, b) => a * b, 1), es = ELEM_BYTES[dtype];
    if (buf.length !== count * es)
      throw new Error(`${file} has ${buf.length} bytes, shape ${shape} of ${dtype} needs ${count * es}`);
    const data = dtype === 'int64' ? new BigInt64Array(count) : dtype === 'bool' ? new Uint8Array(count) : new Float32Array(count);
    for (let i = 0; i < count; i++)
      data[i] = dtype === 'int64' ? buf.readBigInt64LE(i * 8) : dtype === 'bool' ? buf[i] : buf.readFloatLE(i * 4);
    feeds[session.inputNames[k]] = new ort.Tensor(dtype, data, shape);
  });

  let out;
  for (let i = 0; i < o.warmup; i++) out = await session.run(feeds);
  const times = [];
  let total = 0;
  while (times.length < o.max && (times.length < o.min || total < o.budget * 1e3)) {
    const t0 = process.hrtime.bigint();
    out = await session.run(feeds);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    times.push(ms);
    total += ms;
  }
  times.sort((a, b) => a - b);
  const n = times.length;
  const median = n % 2 ? times[(n - 1) / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
  if (o.output) {
    const t = out[session.outputNames[0]];
    fs.writeFileSync(o.output, Buffer.from(Float32Array.from(t.data).buffer));
  }
  console.log(`ort: version ${ort.env.versions.node}, threads ${o.threads}, ` +
              `min ${times[0].toFixed(3)} ms, median ${median.toFixed(3)} ms over ${n} runs`);
  if (o.profile) {
    session.endProfiling(); // finishes the trace; the binding does not return its name
    const made = profileFiles(o.profile).filter((f) => fs.statSync(f).mtimeMs >= started);
    console.log(`profile: ${made.length ? made.join(' ') : '(no new ' + o.profile + '_*.json)'}`);
  }
  if (session.release) await session.release();
}

main().catch((e) => {
  console.error(`ort_bench: ${e.message || e}`);
  process.exit(1);
});
