// structure.js — a model's structure without its weights, read from a File in slices.
//
// Runs as a module Web Worker (app.js: new Worker('/structure.js', {type: 'module'})) and
// is importable as a module (the tests call structureOf and Sha256 in node).  It walks the
// ONNX protobuf without decoding tensors — ModelProto → graph, functions, training_info →
// nodes → attributes (t, tensors, g, graphs, sparse tensors) → TensorProto — and writes
// the same protobuf with every large tensor payload cut out: the tensor says
// data_location = EXTERNAL and external_data {location: the file's name, offset, length}
// points at the payload's bytes in the original file.  The file is never held whole:
// the walk reads windows of CHUNK bytes and jumps over payloads; the output is the
// structure alone.  Its answer is the module boundary that weights follow through
// (weights.js): {bytes, ranges: [{tensor, offset, length}], ...}, then the file's SHA-256.
//
// What is cut (docs/web.md, "Structure first"): raw_data (field 9) of at least THRESHOLD
// bytes, and packed float_data (4) of FLOAT/COMPLEX64 and packed double_data (10) of
// DOUBLE/COMPLEX128, whose bytes are the little-endian values that external data holds.
// Varint fields (int32_data, int64_data, uint64_data) and string_data are not the same
// bytes as raw external data: such tensors stay inline, as does any tensor with more than
// one payload field, a segment, or a data_location or external_data of its own.  A file
// the walk cannot read (not protobuf, truncated, groups, too deep) is answered with
// bytes: null and the reason: the page uploads it as it is and the server judges.
//
// The server cuts a stored model the same way in C (parser/cut.c) to prove that a structure
// is that model's before its URLs redirect (docs/decisions.md 82): a change to what is cut
// or how it is written must be made there too (tests/e2e/cut.test.mjs compares the two).

export const THRESHOLD = 1024;     // smallest payload cut out
export const MIN_SAVING = 64 << 10; // below this in total, the file goes up as it is
const CHUNK = 1 << 20;             // largest window of the walk
const SMALL = 16 << 10;            // its first size, and after a jump
const HASH_CHUNK = 8 << 20;        // slices hashed at a time
const MAX_DEPTH = 64;

// Message kinds and the fields (wire type 2) that lead to a message that may hold tensors.
const K = { MODEL: 0, GRAPH: 1, NODE: 2, ATTR: 3, TENSOR: 4, SPARSE: 5, FUNC: 6, TRAINING: 7 };
const DESCEND = [
  { 7: K.GRAPH, 20: K.TRAINING, 25: K.FUNC },                      // ModelProto
  { 1: K.NODE, 5: K.TENSOR, 15: K.SPARSE },                        // GraphProto
  { 5: K.ATTR },                                                   // NodeProto
  { 5: K.TENSOR, 6: K.GRAPH, 10: K.TENSOR, 11: K.GRAPH, 22: K.SPARSE, 23: K.SPARSE }, // AttributeProto
  {},                                                              // TensorProto
  { 1: K.TENSOR, 2: K.TENSOR },                                    // SparseTensorProto
  { 7: K.NODE, 11: K.ATTR },                                       // FunctionProto
  { 1: K.GRAPH, 2: K.GRAPH },                                      // TrainingInfoProto
];
// TensorProto payload fields; which data types make a packed fixed-width field the same
// bytes as raw external data
const PAYLOAD = new Set([4, 5, 6, 7, 9, 10, 11]);
const FIXED = { 4: new Set([1, 14]), 10: new Set([11, 15]) };
const NOT_RAW = new Set([0, 8]); // UNDEFINED, STRING: external data cannot hold them

class WalkError extends Error {}

// A window over the file: [base, base + buf.length) is in memory.
//
// Reading ahead: a slice read costs about the same whatever its size (2-4 ms in Chromium,
// where each one goes through the browser process), and the walk's reads form a
// chain (where the next tensor starts is known only once this one's length is read).  So
// the reader watches where the walk jumps to — after each payload — and when the recent
// jumps repeat with a period (the same tensor sizes again: a chain of equal blocks, a
// transformer's layers), it reads the next AHEAD predicted positions at once, in parallel.
// A jump that lands on a prediction takes that window instead of reading; predictions the
// walk has passed are dropped.  Memory: at most AHEAD windows of SMALL bytes more.
const AHEAD = 6;       // predicted windows in flight at most
const PERIOD = 48;     // longest period of jumps looked for
const HISTORY = 2 * PERIOD + 2;
class Reader {
  constructor(file, chunk = CHUNK, ahead = AHEAD) {
    this.file = file;
    this.aheadMax = ahead;
    this.size = file.size;
    this.chunk = chunk;
    this.base = 0;
    this.buf = new Uint8Array(0);
    this.read = 0; // bytes read from the file (read ahead included)
    this.reads = 0; // slice reads the walk waited for
    this.hits = 0; // jumps that found their window read ahead
    this.step = SMALL;
    this.kept = []; // [pos, bytes]: what the walk passed over, in file order
    this.seg = null; // the range being kept in this window: [a, b)
    this.jumps = []; // recent jump targets, in order
    this.ahead = new Map(); // start -> promise of the window [start, start + SMALL)
  }
  // Keeps a copy of [a, b) when it is in the window (adjacent ranges merge), so that the
  // structure is written without reading those bytes again; the copies are structure
  // bytes, at most the structure's size.
  keep(a, b) {
    if (b <= a || !this.has(a, b - a)) return;
    if (this.seg && this.seg[1] === a) { this.seg[1] = b; return; }
    this.flushKeep();
    this.seg = [a, b];
  }
  flushKeep() {
    if (!this.seg) return;
    const [a, b] = this.seg;
    this.kept.push([a, this.buf.slice(a - this.base, b - this.base)]);
    this.seg = null;
  }
  has(pos, n) { return pos >= this.base && pos + n <= this.base + this.buf.length; }
  slice(a, b) {
    this.read += b - a;
    return this.file.slice(a, b).arrayBuffer().then((x) => new Uint8Array(x));
  }
  // Reads from pos: a window that doubles (up to `chunk`) while the reads follow each
  // other, and starts small again after a jump over a payload (a tensor's header sits
  // between two payloads: a big window there would read weights for nothing).
  async fill(pos, n) {
    const seq = pos === this.base + this.buf.length;
    this.step = seq ? Math.min(this.chunk, this.step * 2) : SMALL;
    const end = Math.min(this.size, pos + Math.max(n, this.step));
    this.flushKeep();
    let buf = null;
    if (!seq) {
      const a = this.ahead.get(pos);
      this.jumped(pos); // the next predictions go out before this one is awaited
      if (a && end - pos <= SMALL) { buf = await a; this.hits++; }
    }
    if (!buf) { this.reads++; buf = await this.slice(pos, end); }
    this.buf = buf;
    this.base = pos;
  }
  // A jump to pos: drop what lies behind, and read ahead where the jumps' period says the
  // next ones land.  Period P: the last two gaps between jumps equal those P jumps before;
  // the next gaps are then those of the last period, in order.
  jumped(pos) {
    for (const s of this.ahead.keys()) if (s <= pos) this.ahead.delete(s);
    const J = this.jumps;
    J.push(pos);
    if (J.length > HISTORY) J.shift();
    const L = J.length - 1;
    const gap = (i) => J[i] - J[i - 1];
    let P = 0;
    for (let p = 1; p <= PERIOD && L - 1 - p >= 1; p++) {
      if (gap(L) === gap(L - p) && gap(L - 1) === gap(L - 1 - p)) { P = p; break; }
    }
    if (!P) return;
    let q = pos;
    for (let k = 0; k < this.aheadMax; k++) {
      q += gap(L - P + 1 + (k % P));
      if (q <= pos || q >= this.size) break;
      if (this.ahead.has(q)) continue;
      if (this.ahead.size >= this.aheadMax) break;
      const p = this.slice(q, Math.min(this.size, q + SMALL));
      p.catch(() => {}); // a prediction never used is no error
      this.ahead.set(q, p);
    }
  }
  // Makes [pos, pos + n) readable, n clipped to the file's end.
  async need(pos, n) {
    n = Math.min(n, this.size - pos);
    if (n > 0 && !this.has(pos, n)) await this.fill(pos, n);
  }
  byte(pos) { return this.buf[pos - this.base]; }
}

// A varint at pos (in the window, at most 10 bytes, before `end`): [value, next pos].
// Values above 2^53 lose precision, which only matters for lengths, and those are checked
// against the message's end.
function varint(r, pos, end) {
  let v = 0, mul = 1;
  for (let i = 0; i < 10; i++) {
    if (pos >= end) throw new WalkError(`truncated varint at byte ${pos}`);
    const b = r.byte(pos++);
    v += (b & 0x7f) * mul;
    if (b < 0x80) return [v, pos];
    mul *= 128;
  }
  throw new WalkError(`varint over 10 bytes at byte ${pos}`);
}

function encVarint(v) {
  const out = [];
  while (v >= 0x80) { out.push((v % 128) | 0x80); v = Math.floor(v / 128); }
  out.push(v);
  return Uint8Array.from(out);
}
const varintLen = (v) => { let n = 1; while (v >= 0x80) { v = Math.floor(v / 128); n++; } return n; };
const utf8 = new TextEncoder();
function lenField(field, bytes) {
  const tag = encVarint(field * 8 + 2), len = encVarint(bytes.length);
  const out = new Uint8Array(tag.length + len.length + bytes.length);
  out.set(tag, 0); out.set(len, tag.length); out.set(bytes, tag.length + len.length);
  return out;
}
// external_data entries (StringStringEntryProto key 1, value 2) and data_location = 1
function externalFields(location, offset, length) {
  const parts = [];
  for (const [k, v] of [['location', location], ['offset', String(offset)], ['length', String(length)]]) {
    const e1 = lenField(1, utf8.encode(k)), e2 = lenField(2, utf8.encode(v));
    const entry = new Uint8Array(e1.length + e2.length);
    entry.set(e1, 0); entry.set(e2, e1.length);
    parts.push(lenField(13, entry));
  }
  parts.push(Uint8Array.of(14 * 8, 1));
  return parts;
}

// The output tree: a message is {head: [a, b) (its original tag), parts, len}; parts are
// ranges [a, b) of the file (in file order) or Uint8Arrays (new bytes) or messages.
function addRange(parts, a, b) {
  if (b <= a) return;
  const last = parts[parts.length - 1];
  if (Array.isArray(last) && last[1] === a) last[1] = b; else parts.push([a, b]);
}
const partLen = (p) => (Array.isArray(p) ? p[1] - p[0] : p instanceof Uint8Array ? p.length : p.head[1] - p.head[0] + varintLen(p.len) + p.len);

// The location the structure's tensors name: the file's name when the server's rules take
// it as it is (parser/external.c: no '/', '\', control bytes, ':' drive, '.'/'..', at most
// 255 bytes), else "model.onnx".
export function locationOf(name) {
  const ok = typeof name === 'string' && name !== '' && name !== '.' && name !== '..' &&
    utf8.encode(name).length <= 255 && !/[\\/\x00-\x1f\x7f]/.test(name) && !/^[A-Za-z]:/.test(name);
  return ok ? name : 'model.onnx';
}

// Walks `file` (a Blob: slice(a, b).arrayBuffer()) and answers {bytes (Uint8Array, or null
// with `reason` when the file is to go up as it is), location, ranges: [{tensor, offset,
// length}], external (the data files its tensors name, e.g. ["model.onnx.data"]), cut (payload bytes cut), fileSize, read (bytes read from the file), reads
// (slice reads waited for), hits (jumps whose window was read ahead), ms}.  `ahead`: the
// windows read ahead at most (0: none).
export async function structureOf(file, { name = file.name, threshold = THRESHOLD, minSaving = MIN_SAVING, chunk = CHUNK, ahead = AHEAD } = {}) {
  const t0 = performance.now();
  const location = locationOf(name);
  const r = new Reader(file, chunk, ahead);
  const out = { bytes: null, reason: '', location, ranges: [], external: [], cut: 0, fileSize: file.size, read: 0, reads: 0, hits: 0, ms: 0 };
  let root;
  const external = new Set(); // the data files the model's own tensors name
  try {
    root = await walk(r, location, threshold, out.ranges, external);
  } catch (e) {
    if (!(e instanceof WalkError)) throw e;
    out.reason = e.message;
  }
  out.external = [...external];
  out.cut = out.ranges.reduce((n, x) => n + x.length, 0);
  if (root && !out.ranges.length) out.reason = 'no tensor payload to cut';
  else if (root && out.cut < minSaving) out.reason = `only ${out.cut} bytes of payloads`;
  else if (root) out.bytes = await assemble(r, root);
  out.read = r.read;
  out.reads = r.reads;
  out.hits = r.hits;
  r.ahead.clear();
  out.ms = performance.now() - t0;
  return out;
}

async function walk(r, location, threshold, ranges, external) {
  const size = r.size;
  const root = { kind: K.MODEL, head: [0, 0], parts: [], end: size, fieldStart: 0, run: 0, changed: false, sawGraph: false };
  const stack = [root];
  let pos = 0;
  while (stack.length) {
    const f = stack[stack.length - 1];
    if (pos === f.end) {
      stack.pop();
      if (f.kind === K.TENSOR) finishTensor(f, location, threshold, ranges, external);
      else addRange(f.parts, f.run, f.end);
      if (!stack.length) break;
      const p = stack[stack.length - 1];
      if (f.changed) {
        f.len = f.parts.reduce((n, x) => n + partLen(x), 0);
        addRange(p.parts, p.run, f.fieldStart);
        p.parts.push(f);
        p.run = f.end;
        p.changed = true;
      } // else: the child's bytes stay in the parent's run as they are
      continue;
    }
    await r.need(pos, 20);
    const fieldStart = pos;
    let tag;
    [tag, pos] = varint(r, pos, f.end);
    const field = Math.floor(tag / 8), wt = tag % 8;
    if (field === 0) throw new WalkError(`field number 0 at byte ${fieldStart}`);
    let valStart = pos, end;
    if (wt === 0) {
      [, end] = varint(r, pos, f.end);
    } else if (wt === 1) end = pos + 8;
    else if (wt === 5) end = pos + 4;
    else if (wt === 2) {
      let len;
      [len, valStart] = varint(r, pos, f.end);
      end = valStart + len;
    } else throw new WalkError(`wire type ${wt} (groups or invalid) at byte ${fieldStart}`);
    if (end > f.end) throw new WalkError(`field ${field} at byte ${fieldStart} runs past its message`);
    if (f.kind === K.MODEL && field === 7 && wt === 2) f.sawGraph = true;
    if (f.kind === K.TENSOR) {
      // a payload that may be cut is not kept (nor read)
      r.keep(fieldStart, PAYLOAD.has(field) && end - valStart >= threshold ? valStart : end);
      await tensorField(r, f, field, wt, fieldStart, valStart, end);
      pos = end;
      continue;
    }
    const kind = wt === 2 ? DESCEND[f.kind][field] : undefined;
    r.keep(fieldStart, kind !== undefined ? valStart : end);
    if (kind !== undefined) {
      if (stack.length >= MAX_DEPTH) throw new WalkError(`nested deeper than ${MAX_DEPTH} at byte ${fieldStart}`);
      // head: the original tag bytes (the length is written anew)
      stack.push({ kind, head: [fieldStart, pos], parts: [], end, fieldStart, run: valStart, changed: false });
      pos = valStart;
      continue;
    }
    pos = end;
  }
  if (!root.sawGraph) throw new WalkError('not an ONNX model (no graph)');
  return root;
}

// One field of a TensorProto: what decides whether its payload can be cut.
async function tensorField(r, f, field, wt, fieldStart, valStart, end) {
  if (!f.t) f.t = { dtype: 0, payloads: [], name: '', own: false };
  const t = f.t;
  if (field === 2 && wt === 0) { [t.dtype] = varint(r, valStart, end); return; }
  if (field === 13 && wt === 2 && end - valStart <= 4096) await externalEntry(r, t, valStart, end);
  if (field === 3 || field === 13 || field === 14) { t.own = true; return; }
  if (field === 8 && wt === 2 && end - valStart <= 4096) {
    await r.need(valStart, end - valStart);
    t.name = new TextDecoder().decode(r.buf.subarray(valStart - r.base, end - r.base));
    return;
  }
  if (PAYLOAD.has(field)) t.payloads.push({ field, wt, fieldStart, valStart, end });
}

// One external_data entry of a tensor (StringStringEntryProto: key 1, value 2): its
// `location` (the data file the tensor's bytes are in) into t.external.
async function externalEntry(r, t, a, b) {
  await r.need(a, b - a);
  let key = '', value = '';
  for (let pos = a; pos < b;) {
    const tag = r.byte(pos++);
    if (tag !== 10 && tag !== 18) return; // not a short string field: not an entry we read
    let len;
    try {
      [len, pos] = varint(r, pos, b);
    } catch (e) {
      if (e instanceof WalkError) return; // a broken entry names no data file
      throw e;
    }
    const end = Math.min(b, pos + len);
    const text = new TextDecoder().decode(r.buf.subarray(pos - r.base, end - r.base));
    pos = end;
    if (tag === 10) key = text; else value = text;
  }
  if (key === 'location' && value) t.external = value;
}

function finishTensor(f, location, threshold, ranges, external) {
  if (f.t && f.t.external) external.add(f.t.external);
  const t = f.t || { dtype: 0, payloads: [], own: false };
  const p = t.payloads.length === 1 ? t.payloads[0] : null;
  const ok = p && !t.own && p.wt === 2 && p.end - p.valStart >= threshold && !NOT_RAW.has(t.dtype) &&
    (p.field === 9 || (FIXED[p.field] && FIXED[p.field].has(t.dtype)));
  if (!ok) { addRange(f.parts, f.run, f.end); return; }
  addRange(f.parts, f.run, p.fieldStart);
  addRange(f.parts, p.end, f.end);
  f.parts.push(...externalFields(location, p.valStart, p.end - p.valStart));
  ranges.push({ tensor: t.name, offset: p.valStart, length: p.end - p.valStart });
  f.changed = true;
}

// The structure's bytes: the tree written out, the ranges read in file order through the
// window (they only ever move forward).
async function assemble(r, root) {
  const ops = [];
  (function flat(m) { // depth is bounded by MAX_DEPTH
    if (m !== root) {
      ops.push(m.head);
      ops.push(encVarint(m.len));
    }
    for (const p of m.parts) {
      if (Array.isArray(p) || p instanceof Uint8Array) ops.push(p); else flat(p);
    }
  })(root);
  const total = ops.reduce((n, p) => n + partLen(p), 0);
  const out = new Uint8Array(total);
  r.flushKeep();
  const kept = r.kept;
  let o = 0, k = 0;
  for (const p of ops) {
    if (p instanceof Uint8Array) { out.set(p, o); o += p.length; continue; }
    let [a, b] = p;
    while (a < b) {
      while (k < kept.length && kept[k][0] + kept[k][1].length <= a) k++;
      let n;
      if (k < kept.length && kept[k][0] <= a) { // kept by the walk
        const [ka, kb] = kept[k];
        n = Math.min(b, ka + kb.length) - a;
        out.set(kb.subarray(a - ka, a - ka + n), o);
      } else { // skipped by the walk: read now
        n = Math.min(b - a, r.chunk, k < kept.length ? kept[k][0] - a : Infinity);
        await r.need(a, n);
        out.set(r.buf.subarray(a - r.base, a - r.base + n), o);
      }
      o += n; a += n;
    }
  }
  r.kept = [];
  return out;
}

// ---------------------------------------------------------------------------- SHA-256
// Incremental SHA-256 (FIPS 180-4) in plain JavaScript: WebCrypto has no incremental
// digest and the file is never held whole.
const K256 = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

export class Sha256 {
  constructor() {
    this.h = new Int32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
    this.w = new Int32Array(64);
    this.tail = new Uint8Array(64);
    this.tailLen = 0;
    this.total = 0;
  }
  update(data) {
    let i = 0;
    const n = data.length;
    this.total += n;
    if (this.tailLen) {
      const take = Math.min(64 - this.tailLen, n);
      this.tail.set(data.subarray(0, take), this.tailLen);
      this.tailLen += take;
      i = take;
      if (this.tailLen < 64) return this;
      this.blocks(this.tail, 0, 64);
      this.tailLen = 0;
    }
    const full = i + ((n - i) & ~63);
    if (full > i) this.blocks(data, i, full);
    if (full < n) { this.tail.set(data.subarray(full), 0); this.tailLen = n - full; }
    return this;
  }
  // The compression function over d[start, end) (whole blocks).  Every sum is cut to
  // int32 as it is made (`| 0`), which keeps V8 in integer arithmetic.
  blocks(d, start, end) {
    const w = this.w, v = this.h, k = K256;
    let a, b, c, dd, e, f, g, h, u, t1, t2;
    for (let p = start; p < end; p += 64) {
      a = v[0]; b = v[1]; c = v[2]; dd = v[3]; e = v[4]; f = v[5]; g = v[6]; h = v[7];
      for (let i = 0; i < 16; i++) {
        const j = p + i * 4;
        w[i] = (d[j] << 24) | (d[j + 1] << 16) | (d[j + 2] << 8) | d[j + 3];
      }
      for (let i = 16; i < 64; i++) {
        u = w[i - 2];
        t1 = ((u >>> 17) | (u << 15)) ^ ((u >>> 19) | (u << 13)) ^ (u >>> 10);
        u = w[i - 15];
        t2 = ((u >>> 7) | (u << 25)) ^ ((u >>> 18) | (u << 14)) ^ (u >>> 3);
        w[i] = ((t1 + w[i - 7]) | 0) + ((t2 + w[i - 16]) | 0);
      }
      for (let i = 0; i < 64; i++) {
        t1 = ((((((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) + ((e & f) ^ (~e & g))) | 0) +
          ((h + ((k[i] + w[i]) | 0)) | 0)) | 0;
        t2 = ((((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
        h = g; g = f; f = e; e = (dd + t1) | 0; dd = c; c = b; b = a; a = (t1 + t2) | 0;
      }
      v[0] += a; v[1] += b; v[2] += c; v[3] += dd; v[4] += e; v[5] += f; v[6] += g; v[7] += h;
    }
  }
  hex() {
    const bits = this.total * 8;
    const pad = new Uint8Array(((this.tailLen + 9 + 63) & ~63) - this.tailLen);
    pad[0] = 0x80;
    const hi = Math.floor(bits / 2 ** 32), lo = bits >>> 0;
    const m = pad.length;
    pad[m - 8] = hi >>> 24; pad[m - 7] = hi >>> 16; pad[m - 6] = hi >>> 8; pad[m - 5] = hi;
    pad[m - 4] = lo >>> 24; pad[m - 3] = lo >>> 16; pad[m - 2] = lo >>> 8; pad[m - 1] = lo;
    const total = this.total;
    this.update(pad);
    this.total = total;
    return [...this.h].map((x) => (x >>> 0).toString(16).padStart(8, '0')).join('');
  }
}

// The file's SHA-256 (hex), read in slices; onProgress(hashed, size) after each slice.
// The next slice is read while this one is hashed (reading a file in Chromium runs at about
// the hash's speed: one after the other, they took the sum of both); two slices in memory.
export async function sha256Of(file, onProgress, chunk = HASH_CHUNK) {
  const s = new Sha256();
  const read = (a) => (a < file.size ? file.slice(a, Math.min(file.size, a + chunk)).arrayBuffer() : null);
  let next = read(0);
  for (let a = 0; a < file.size; a += chunk) {
    const buf = new Uint8Array(await next);
    next = read(a + chunk);
    s.update(buf);
    if (onProgress) onProgress(Math.min(file.size, a + chunk), file.size);
  }
  return s.hex();
}

// ---------------------------------------------------------------------------- worker
// Messages in: {type: 'structure', file, name}, then {type: 'hash'} (the same file), or
// {type: 'hash', file} (that file).
// Messages out: {type: 'structure', ...structureOf's answer (bytes transferred)},
// {type: 'hash-progress', hashed, size}, {type: 'sha256', hex, ms}, {type: 'error', message}.
if (typeof WorkerGlobalScope !== 'undefined' && self instanceof WorkerGlobalScope) {
  let file = null;
  self.onmessage = async (e) => {
    const m = e.data || {};
    try {
      if (m.type === 'structure') {
        file = m.file;
        const s = await structureOf(file, { name: m.name || file.name });
        self.postMessage({ type: 'structure', ...s }, s.bytes ? [s.bytes.buffer] : []);
      } else if (m.type === 'hash' && (file = m.file || file)) { // m.file: another file (a bundle's)
        const t0 = performance.now();
        let last = 0;
        const hex = await sha256Of(file, (hashed, size) => {
          if (performance.now() - last > 200 || hashed === size) { last = performance.now(); self.postMessage({ type: 'hash-progress', hashed, size }); }
        });
        self.postMessage({ type: 'sha256', hex, ms: performance.now() - t0 });
      }
    } catch (err) {
      self.postMessage({ type: 'error', message: String(err && err.message || err) });
    }
  };
}
