// weights.js — the weights follow a structure upload (issue 23, part 2), resumable.
//
// The boundary: sendWeights({file, sha256 | hash, held, structureId, bundle, onProgress})
// answers {promise, abort}; the promise resolves to {id, held} once the server holds the
// whole model: id is the file's SHA-256 (or the bundle's id for a model with data files),
// held true when the server had it already and the transfer stopped early.
// onProgress(acknowledged, total) counts bytes the server has stored durably, plus the
// part on the wire.
//
// The transfer is the server's resumable upload (docs/api.md, "Resumable uploads"; tus
// 1.0.0 with fixed-size parts): POST /uploads names the file by its SHA-256 and size, and
// the server answers nothing at all when it holds the file already, else a new upload
// whose URL carries a secret only this page is told (issue 35: nobody else can write into
// it or end it).  The page keeps that URL in localStorage under the file's SHA-256, size
// and kind (as tus-js-client's fingerprint store does), so a reload, or the same file
// chosen again, asks HEAD of it where it stands and goes on from there.  Then the parts one after the other, each acknowledged once it is on the
// server's disk; a part goes as Upload-Part-Streams pieces at once (PATCH with
// Upload-Piece: 1; one request body gets less than the link — docs/decisions.md 79), and
// the piece that completes the part carries its acknowledgement.  A dropped link, a 5xx or
// a restarted server: wait, ask HEAD /uploads/{uid} where it stands, go on from there (at
// most one part is sent again).  The file is read a part at a time (File.slice): the page
// never holds more than one part of it.
//
// The parts go while the file is hashed (issue 37, decision 97): given `hash` (a promise of
// the file's SHA-256) instead of `sha256`, the upload starts without its id and its last
// part names it (Upload-Sha256; the server checks it against the bytes it hashed, as it
// checks a POST's sha256).  When the hash arrives, `held(id)` asks whether the server has
// the model already: then the transfer stops, its upload is deleted, and nothing more is
// sent.  The last part (a bundle's manifest) waits for that answer, so the stop never
// depends on the race between the hash, the question and the link.  Such an upload is
// kept under the file's name, size and modification time (its SHA-256 is not known when
// it starts).  A server that wants the id first (one from before, 400) is asked again
// once the hash is there.  A bundle's data files go the same way (each unnamed, its last
// part naming it), the manifest once every hash is known, and the stop when the server
// holds the bundle's id.

import { ApiError, token } from './api.js';
import { Sha256 } from './structure.js';

const b64 = (s) => btoa(String.fromCharCode(...new TextEncoder().encode(s)));
const sleep = (ms, signal) => new Promise((resolve) => {
  const t = setTimeout(resolve, ms);
  if (signal) signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
});

function headersOf(extra = {}) {
  const t = token();
  return { 'Tus-Resumable': '1.0.0', ...(t ? { Authorization: `Bearer ${t}` } : {}), ...extra };
}

function apiError(xhrOrRes, text) {
  let body = null;
  try { body = JSON.parse(text); } catch { /* not JSON */ }
  const get = (h) => (xhrOrRes.getResponseHeader ? xhrOrRes.getResponseHeader(h) : xhrOrRes.headers.get(h));
  const ra = parseInt(get('Retry-After') || '', 10);
  return new ApiError(xhrOrRes.status, body, Number.isFinite(ra) ? ra : null);
}

// Errors worth waiting out and retrying: no answer, the server busy or restarting.
const transient = (e) => e instanceof ApiError && (e.status === 0 || e.status === 429 || e.status === 503 || e.status === 502 || e.status === 504 || e.code === 'upload_busy');
// What a stopped transfer fails with (the page's cancel, a held stop, an aborted request).
const cancelled = () => new ApiError(0, { error: { code: 'aborted', message: 'cancelled' } });

// One PATCH with upload progress (fetch has none): resolves {status, offset, body}.
// claim: the file's SHA-256 (Upload-Sha256), sent with the last part of an upload begun
// without it.
function patchPart(uid, offset, blob, onSent, inflight, piece = false, claim = null) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PATCH', `/uploads/${uid}`);
    const extra = { 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream', ...(piece ? { 'Upload-Piece': '1' } : {}), ...(claim ? { 'Upload-Sha256': claim } : {}) };
    for (const [k, v] of Object.entries(headersOf(extra))) xhr.setRequestHeader(k, v);
    xhr.responseType = 'text';
    xhr.upload.addEventListener('progress', (e) => onSent(e.loaded));
    xhr.addEventListener('load', () => {
      const off = parseInt(xhr.getResponseHeader('Upload-Offset') || '', 10);
      let body = null;
      try { body = JSON.parse(xhr.responseText); } catch { /* 204: none */ }
      if (xhr.status === 204 || xhr.status === 200 || xhr.status === 201) resolve({ status: xhr.status, offset: off, body });
      else {
        const e = apiError(xhr, xhr.responseText);
        e.uploadOffset = Number.isFinite(off) ? off : null;
        reject(e);
      }
    });
    xhr.addEventListener('error', () => reject(new ApiError(0, { error: { message: 'the connection was lost' } })));
    xhr.addEventListener('abort', () => reject(cancelled()));
    inflight.add(xhr);
    xhr.addEventListener('loadend', () => inflight.delete(xhr));
    xhr.send(blob);
  });
}

// The part [up.offset, end) of blob: one PATCH, or up.streams pieces at once (all settle
// before the answer: the one that completed the part, a 200/201 with the model, or the
// first error — pieces that arrived are kept by the server and harmless when sent again).
async function sendPart(up, blob, end, onSent, inflight, claim) {
  const n = end - up.offset;
  const k = Math.min(up.streams, Math.floor(n / 65536));
  if (k < 2) return patchPart(up.uid, up.offset, blob.slice(up.offset, end), onSent, inflight, false, claim);
  const size = Math.ceil(n / k / 64) * 64;
  const loaded = [];
  const runs = [];
  for (let a = up.offset, i = 0; a < end; a += size, i++) {
    const b = Math.min(end, a + size), j = i;
    loaded.push(0);
    runs.push(patchPart(up.uid, a, blob.slice(a, b), (x) => { loaded[j] = x; onSent(loaded.reduce((u, v) => u + v, 0)); }, inflight, true, claim));
  }
  const got = await Promise.allSettled(runs);
  const ok = got.filter((g) => g.status === 'fulfilled').map((g) => g.value);
  const done = ok.find((v) => v.status === 200 || v.status === 201);
  if (done) return done;
  const failed = got.find((g) => g.status === 'rejected');
  if (failed) throw failed.reason;
  return { status: 204, offset: Math.max(...ok.map((v) => (Number.isFinite(v.offset) ? v.offset : up.offset))), body: null };
}

async function call(method, url, headers, signal) {
  let res;
  try {
    res = await fetch(url, { method, headers: headersOf(headers), signal, cache: 'no-store' });
  } catch (e) {
    if (e.name === 'AbortError') throw cancelled();
    throw new ApiError(0, { error: { message: 'the server cannot be reached' } });
  }
  const text = method === 'HEAD' ? '' : await res.text();
  if (!res.ok) throw apiError(res, text);
  let body = null;
  try { body = JSON.parse(text); } catch { /* HEAD */ }
  return { status: res.status, body, offset: parseInt(res.headers.get('Upload-Offset') || '', 10), part: parseInt(res.headers.get('Upload-Part-Size') || '', 10), streams: parseInt(res.headers.get('Upload-Part-Streams') || '', 10), location: res.headers.get('Location') };
}

// The uploads this browser started and has not finished: "sha256 size kind", or for one
// begun before its hash was known "file name size modified kind" -> {uid, at} (the URL's
// secret, when it was started), the 64 latest.  t.key: the key of t's upload.
const UPLOADS = 'onnxviz.uploads';
const byHash = (t) => `${t.sha256} ${t.blob.size} ${t.kind}`;
const byFile = (t) => `file ${t.name}\u0000${t.blob.size}\u0000${t.blob.lastModified} ${t.kind}`;
function uploadsKept() {
  try { const o = JSON.parse(localStorage.getItem(UPLOADS) || '{}'); return o && typeof o === 'object' ? o : {}; } catch { return {}; }
}
function keepUpload(t, uid) {
  const o = uploadsKept();
  if (uid) o[t.key] = { uid, at: Date.now() };
  else delete o[t.key];
  const keys = Object.keys(o).sort((a, b) => o[b].at - o[a].at);
  for (const k of keys.slice(64)) delete o[k];
  try { localStorage.setItem(UPLOADS, JSON.stringify(o)); } catch { /* private mode: no resume across reloads */ }
}

// Where the server's upload of this blob stands: {done: body} when it holds it (a model:
// {id}; a data file: {sha256, stored}), else {uid, offset, part}.  An upload this browser
// started (its URL kept) goes on where it stands; else a new one.
// An upload begun under the file's name (before its hash was known) is found whether the
// hash is known now or not; it goes on as it began, its last part naming it.
async function begin(t, signal) {
  const keys = t.sha256 ? [byHash(t), byFile(t)] : [byFile(t)];
  for (const key of keys) {
    const kept = uploadsKept()[key];
    if (!kept || !/^[0-9a-f]{32}$/.test(kept.uid)) continue;
    t.key = key;
    try {
      const h = await call('HEAD', `/uploads/${kept.uid}`, {}, signal);
      if (Number.isFinite(h.offset) && Number.isFinite(h.part)) return { uid: kept.uid, offset: h.offset, part: h.part, streams: h.streams || 1 };
    } catch (e) {
      if (e.status !== 404) throw e; // finished, expired or deleted: a new one below
    }
    keepUpload(t, null);
  }
  const meta = [`filename ${b64(t.name || 'model.onnx')}`, `kind ${b64(t.kind)}`];
  if (t.sha256) meta.unshift(`sha256 ${b64(t.sha256)}`);
  if (t.structureId) meta.push(`structure ${b64(t.structureId)}`);
  let r;
  try {
    r = await call('POST', '/uploads', { 'Upload-Length': String(t.blob.size), 'Upload-Metadata': meta.join(',') }, signal);
  } catch (e) {
    // a server that wants the id first (sha256_required: an object store from before
    // decision 97's extension; bad_upload: one from before it): once the hash is there
    if (t.sha256 || e.status !== 400 || !t.hash) throw e;
    t.sha256 = await t.hash;
    return begin(t, signal);
  }
  if (r.body && r.body.stored) return { done: r.body };
  t.key = t.sha256 ? byHash(t) : byFile(t);
  keepUpload(t, r.body.upload);
  return { uid: r.body.upload, offset: r.body.offset, part: r.body.part_size, streams: r.body.streams || 1 };
}

// One resumable transfer: t = {blob, sha256, name, kind, structureId} (or, for a model
// whose hash is not known yet, sha256 null and hash: its promise; t.sha256 is set when it
// resolves); answers the body of the last part's answer (or of the held answer).
// onSent(bytes of blob acknowledged or on the wire).  t.uid: the upload on the server.
async function transfer(t, onSent, ctl, inflight, isAborted) {
  const size = t.blob.size;
  let up = null;
  let wait = 500;
  for (;;) {
    if (isAborted()) throw cancelled();
    try {
      if (!up) {
        up = await begin(t, ctl.signal);
        if (up.done) { onSent(size); return up.done; }
        t.uid = up.uid;
      }
      onSent(up.offset);
      const end = Math.min(size, up.offset + up.part);
      // the last part names the file: its hash is waited for here if need be
      if (end === size && !t.sha256) t.sha256 = await t.hash;
      if (end === size && t.gate) await t.gate; // does the server hold it already?
      if (isAborted()) throw cancelled();
      const r = await sendPart(up, t.blob, end, (n) => onSent(up.offset + n), inflight, end === size ? t.sha256 : null);
      wait = 500;
      if (r.status === 200 || r.status === 201) { t.finished = true; keepUpload(t, null); onSent(size); return r.body; }
      up.offset = Number.isFinite(r.offset) ? r.offset : end;
    } catch (e) {
      if (isAborted() || e.code === 'aborted') throw cancelled();
      if (e.code === 'offset_mismatch' && Number.isFinite(e.uploadOffset) && e.uploadOffset !== null) { up.offset = e.uploadOffset; continue; }
      if (e.code === 'upload_not_found') { keepUpload(t, null); up = null; continue; } // expired or finished elsewhere: ask again
      if (!transient(e)) throw e;
      await sleep(e.retryAfter ? e.retryAfter * 1000 : wait, ctl.signal);
      wait = Math.min(wait * 2, 15000);
      if (up) { // where does it stand now?  (a restarted server kept what it acknowledged)
        try { const h = await call('HEAD', `/uploads/${up.uid}`, {}, ctl.signal); if (Number.isFinite(h.offset)) up.offset = h.offset; } catch (e2) { if (e2.status === 404) up = null; }
      }
    }
  }
}

// Byte order of the UTF-8 of two strings (the server sorts a bundle's files so).
function cmpUtf8(a, b) {
  const x = new TextEncoder().encode(a), y = new TextEncoder().encode(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

// The manifest of a model file and its data files, and the bundle's id (its SHA-256:
// what the server names a model uploaded with its data files).  model = {sha256, size},
// files = [{location, sha256, size}].
export function bundleOf(model, files) {
  const sorted = [...files].sort((a, b) => cmpUtf8(a.location, b.location));
  let text = `onnxviz-bundle/1\nmodel ${model.sha256} ${model.size}\n`;
  for (const f of sorted) text += `file ${f.sha256} ${f.size} ${f.location}\n`;
  const bytes = new TextEncoder().encode(text);
  return { manifest: bytes, id: new Sha256().update(bytes).hex() };
}

// sendWeights({file, sha256, structureId, onProgress}): the whole file after its structure.
// With `bundle` = {files: [{file, location, sha256}], manifest, id}: the model file is on
// the server already (it was the structure); each data file goes up (kind data), then the
// manifest (kind bundle), which makes the model; the promise resolves to the bundle's id.
// A bundle still hashed is {files: [{file, location, hash}], ready}: each data file goes
// up unnamed (its last part waits for its hash, `hash`, a promise), and `ready` (a promise
// of {manifest, id}) gives the manifest once every hash is there, and held(id) the stop.
// DELETE /uploads/{uid}: an upload of no use now, gone and off this client's quota at once
// (else it would wait for its expiry).  Asked once the pieces on the wire have ended (a
// piece answered frees the upload); should one still hold it on the server (409
// upload_busy), tried again for ~15 s.
async function discard(uid) {
  for (let i = 0, wait = 250; i < 8; i++, wait = Math.min(2 * wait, 4000)) {
    try {
      await call('DELETE', `/uploads/${uid}`, {}, undefined);
      return;
    } catch (e) {
      if (!transient(e)) return; // 404: gone already
    }
    await sleep(wait);
  }
}

// Without sha256: hash (a promise of it) and held(id) (does the server hold model id?):
// the parts go at once; once the hash is there and held says yes, the transfer stops, its
// upload is deleted, and the promise resolves to {id, held: true}.
export function sendWeights({ file, sha256, hash, held, structureId, bundle, onProgress: progress }) {
  // (the pieces left to end after a held stop report nothing: the page has moved on)
  const onProgress = progress && ((n, total) => { if (!aborted) progress(n, total); });
  const ctl = new AbortController();
  const inflight = new Set(); // the PATCHes on the wire (abort ends them)
  let aborted = false;
  const isAborted = () => aborted;
  const stop = () => { aborted = true; ctl.abort(); for (const x of [...inflight]) x.abort(); };
  // The transfers ts (unnamed, started while hashing) under the id the promise `named`
  // gives: when held(id) says the server has it, they stop and their uploads are deleted.
  // send(decided) runs them; its answer, or {id, held: true} when they stopped so.
  // `decided` resolves once held's answer is acted on: the step that would make the model
  // (a file's last part, a bundle's manifest) waits for it, so a model the server holds is
  // never made again from this upload (its structure stays listed as the structure) — else
  // whether the stop came in time would depend on how fast the hash and the link were.
  const stopWhenHeld = async (named, ts, send) => {
    let done = false;
    let onHeld, onDecided;
    const heldP = new Promise((resolve) => { onHeld = resolve; });
    const decided = new Promise((resolve) => { onDecided = resolve; });
    let sent = null;
    const early = named.then(async (id) => {
      const yes = !done && !aborted && (await held(id).catch(() => false));
      if (!yes || done || aborted) { onDecided(); return; }
      // nothing more goes; the PATCHes on the wire are left to end: cut, they would hold
      // the upload busy on the server until it sees their connections close, and the
      // DELETE would meet 409 upload_busy (a failed request in the console)
      aborted = true;
      ctl.abort();
      for (const t of ts) keepUpload(t, null);
      onHeld({ id, held: true }); // the page moves on now
      onDecided(); // (after onHeld: the race is won by the held answer, not the stop)
      await sent.catch(() => {}); // the pieces on the wire have ended
      for (const t of ts) if (t.uid && !t.finished) discard(t.uid);
    });
    early.catch(() => onDecided()); // a failed hash fails the transfer (a last part waits for it)
    sent = send(decided).then((r) => { done = true; return r; });
    sent.catch(() => {}); // after a stop it fails as cancelled: the race took the held answer
    return Promise.race([sent, heldP]);
  };
  const run = async () => {
    if (!bundle) {
      const t = { blob: file, sha256: sha256 || null, hash, name: file.name, kind: 'model', structureId };
      const send = async (decided) => {
        t.gate = decided;
        const body = await transfer(t, (n) => onProgress && onProgress(Math.min(n, file.size), file.size), ctl, inflight, isAborted);
        return { id: body.id, held: false };
      };
      if (sha256) return send();
      hash.then((hex) => { t.sha256 = t.sha256 || hex; }, () => {});
      return stopWhenHeld(hash, [t], send);
    }
    const total = bundle.files.reduce((n, f) => n + f.file.size, 0);
    const ts = bundle.files.map((f) => ({ blob: f.file, sha256: f.sha256 || null, hash: f.hash, name: f.location, kind: 'data' }));
    const send = async (decided) => {
      let done = 0;
      for (const t of ts) {
        await transfer(t, (n) => onProgress && onProgress(Math.min(done + n, total), total), ctl, inflight, isAborted);
        done += t.blob.size;
      }
      const b = bundle.ready ? await bundle.ready : bundle;
      if (decided) await decided;
      if (isAborted()) throw cancelled();
      const body = await transfer({ blob: new Blob([b.manifest]), sha256: b.id, name: file.name, kind: 'bundle', structureId }, () => {}, ctl, inflight, isAborted);
      return { id: body.id, held: false };
    };
    return bundle.ready ? stopWhenHeld(bundle.ready.then((b) => b.id), ts, send) : send();
  };
  return { promise: run(), abort: stop };
}
