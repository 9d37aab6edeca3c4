// ort_bench.js - ONNX Runtime's latency on one model, the peer of omrun in bench/run.sh.
//
//   node bench/ort_bench.js --model X.onnx --input in.bin --shape 1,3,224,224 --threads T
//                           [--dtype float32|int64] [--warmup W] [--min N] [--max N] [--budget S]
//                           [--output out.bin]
//
// One CPU session (intraOpNumThreads = T, interOpNumThreads = 1, sequential execution,
// graph optimization level "all"), the input read as raw little-endian float32 (or int64 with
// --dtype int64: token ids) in the given shape. W untimed runs, then timed runs until both N >= --min and the timed runs add up to
// --budget seconds, or N = --max. Each run's time is session.run() wall time (hrtime),
// which includes the binding's copy of the input and output tensors.
// Prints one line (read by bench/run.sh):
//   ort: version 1.30.0, threads T, min X ms, median Y ms over N runs
// --output writes the last run's first output as raw float32 (for a cross-check).
'use strict';

const fs = require('fs');
const path = require('path');
const ort = require(path.join(__dirname, 'node_modules', 'onnxruntime-node'));

function parseArgs(argv) {
  const o = { warmup: 2, min: 5, max: 100, budget: 5, dtype: 'float32' };
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
  o.shape = o.shape.split(',').map((x) => parseInt(x, 10));
  if (o.dtype !== 'float32' && o.dtype !== 'int64') throw new Error(`--dtype: '${o.dtype}' is not float32 or int64`);
  return o;
}

async function main() {
  const o = parseArgs(process.argv);
  const session = await ort.InferenceSession.create(o.model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: o.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const buf = fs.readFileSync(o.input);
  const count = o.shape.reduce((a, b) => a * b, 1), es = o.dtype === 'int64' ? 8 : 4;
  if (buf.length !== count * es)
    throw new Error(`${o.input} has ${buf.length} bytes, shape ${o.shape} of ${o.dtype} needs ${count * es}`);
  const data = o.dtype === 'int64' ? new BigInt64Array(count) : new Float32Array(count);
  for (let i = 0; i < count; i++) data[i] = o.dtype === 'int64' ? buf.readBigInt64LE(i * 8) : buf.readFloatLE(i * 4);
  const feeds = { [session.inputNames[0]]: new ort.Tensor(o.dtype, data, o.shape) };

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
  if (session.release) await session.release();
}

main().catch((e) => {
  console.error(`ort_bench: ${e.message || e}`);
  process.exit(1);
});
