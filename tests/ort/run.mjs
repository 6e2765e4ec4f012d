// run.mjs — runs an ONNX model in a real ONNX Runtime (onnxruntime-node, CPU) for the
// suites' oracles and profiles.  Run tests/ort/setup.sh first.
//
//   node tests/ort/run.mjs MODEL [options]
//     --feeds F.json     inputs: {"name": {"type": "float32", "dims": [..], "data": [..]}}
//     --random SEED      float inputs not in --feeds get uniform [-1, 1) values (a seeded
//                        generator), integer inputs zeros; dims from --dim or the model
//     --dim NAME=D       value of a symbolic dim (repeatable); unknown dims are 1
//     --out O.json       outputs in the feeds' form (default: stdout)
//     --runs N           runs (default 1); with --profile each run is one profile entry
//     --profile PREFIX   enableProfiling, the profile file is written with this prefix and
//                        its path printed on stderr as "profile: PATH"
//     --opt LEVEL        graph optimization: disabled|basic|extended|all (default all)
//     --optimized PATH   save the optimized model there (optimizedModelFilePath)
//     --threads N        intra-op threads (default 1: deterministic, and the suites run
//                        beside each other)
// Exit 0 on success; 1 with the runtime's message on stderr otherwise.
import fs from 'node:fs';
import ort from 'onnxruntime-node';

function usage(msg) {
  process.stderr.write(`run.mjs: ${msg}\n`);
  process.exit(2);
}

const args = process.argv.slice(2);
if (args.length < 1) usage('MODEL missing');
const opts = { model: args[0], dims: {}, runs: 1, opt: 'all', threads: 1 };
for (let i = 1; i < args.length; i++) {
  const a = args[i], v = args[i + 1];
  if (v === undefined) usage(`${a} needs a value`);
  i++;
  if (a === '--feeds') opts.feeds = v;
  else if (a === '--random') opts.seed = Number(v);
  else if (a === '--dim') { const [k, d] = v.split('='); opts.dims[k] = Number(d); }
  else if (a === '--out') opts.out = v;
  else if (a === '--runs') opts.runs = Number(v);
  else if (a === '--profile') opts.profile = v;
  else if (a === '--opt') opts.opt = v;
  else if (a === '--optimized') opts.optimized = v;
  else if (a === '--threads') opts.threads = Number(v);
  else usage(`unknown option ${a}`);
}

// mulberry32: small, seeded, the same numbers on every machine
function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const arrays = {
  float32: Float32Array, float64: Float64Array, int32: Int32Array, int64: BigInt64Array,
  int8: Int8Array, uint8: Uint8Array, int16: Int16Array, uint16: Uint16Array, bool: Uint8Array,
};

function tensorOf(spec) {
  const A = arrays[spec.type];
  if (!A) usage(`type ${spec.type} not supported in --feeds`);
  const data = A === BigInt64Array ? A.from(spec.data.map(BigInt)) : A.from(spec.data);
  return new ort.Tensor(spec.type, data, spec.dims);
}

const so = {
  graphOptimizationLevel: opts.opt,
  intraOpNumThreads: opts.threads,
  interOpNumThreads: 1,
};
if (opts.profile) { so.enableProfiling = true; so.profileFilePrefix = opts.profile; }
if (opts.optimized) so.optimizedModelFilePath = opts.optimized;

try {
  const session = await ort.InferenceSession.create(opts.model, so);
  const given = opts.feeds ? JSON.parse(fs.readFileSync(opts.feeds, 'utf8')) : {};
  const feeds = {};
  const next = rng(Number.isFinite(opts.seed) ? opts.seed : 1);
  for (const name of session.inputNames) {
    if (given[name]) { feeds[name] = tensorOf(given[name]); continue; }
    if (!Number.isFinite(opts.seed)) usage(`input ${name} not in --feeds (and no --random)`);
    const meta = (session.inputMetadata || []).find((m) => m.name === name) || {};
    const type = meta.type || 'float32';
    const dims = (meta.shape || []).map((d) => (typeof d === 'number' && d >= 0 ? d : (opts.dims[d] ?? 1)));
    const n = dims.reduce((a, b) => a * b, 1);
    const A = arrays[type];
    if (!A) usage(`input ${name}: type ${type} not supported`);
    const data = new A(n);
    if (type === 'float32' || type === 'float64') for (let i = 0; i < n; i++) data[i] = next() * 2 - 1;
    feeds[name] = new ort.Tensor(type, data, dims);
  }
  let result;
  for (let r = 0; r < opts.runs; r++) result = await session.run(feeds);
  if (opts.profile) {
    // endProfiling writes PREFIX_<date>.json and returns nothing here: name the newest
    if (session.endProfiling) session.endProfiling();
    const dir = opts.profile.includes('/') ? opts.profile.slice(0, opts.profile.lastIndexOf('/')) || '/' : '.';
    const base = opts.profile.slice(opts.profile.lastIndexOf('/') + 1);
    const files = fs.readdirSync(dir).filter((f) => f.startsWith(base + '_') && f.endsWith('.json'))
      .map((f) => `${dir}/${f}`).sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
    if (files.length) process.stderr.write(`profile: ${files[0]}\n`);
  }
  const out = {};
  for (const [name, t] of Object.entries(result)) {
    out[name] = {
      type: t.type, dims: Array.from(t.dims),
      data: Array.from(t.data, (x) => (typeof x === 'bigint' ? Number(x) : x)),
    };
  }
  const text = JSON.stringify(out);
  if (opts.out) fs.writeFileSync(opts.out, text); else process.stdout.write(text + '\n');
} catch (e) {
  process.stderr.write(`run.mjs: ${opts.model}: ${e.message}\n`);
  process.exit(1);
}
