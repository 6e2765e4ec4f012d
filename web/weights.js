// weights.js — the weights follow a structure upload (issue 23, part 2), resumable.
//
// The boundary: sendWeights({file, sha256, structureId, onProgress}) answers {promise,
// abort}; the promise resolves to the id of the whole model (the file's SHA-256) once the
// server holds it.  onProgress(acknowledged, total) counts bytes the server has stored
// durably, plus the part on the wire.
//
// The transfer is the server's resumable upload (docs/api.md, "Resumable uploads"; tus
// 1.0.0 with fixed-size parts): POST /uploads names the file by its SHA-256 and size, and
// the server answers where to go on from — nothing at all when it holds the file already,
// the offset of an upload of the same file in progress (this page reloaded, another tab,
// a script), or 0.  Then one PATCH per part, each acknowledged once it is on the server's
// disk.  A dropped link, a 5xx or a restarted server: wait, ask HEAD /uploads/{uid} where
// it stands, go on from there (at most one part is sent again).  The file is read a part at
// a time (File.slice): the page never holds more than one part of it.

import { ApiError, token } from './api.js';

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

// One PATCH with upload progress (fetch has none): resolves {status, offset, body}.
function patchPart(uid, offset, blob, onSent, aborter) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PATCH', `/uploads/${uid}`);
    for (const [k, v] of Object.entries(headersOf({ 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream' }))) xhr.setRequestHeader(k, v);
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
    xhr.addEventListener('abort', () => reject(new ApiError(0, { error: { code: 'aborted', message: 'cancelled' } })));
    aborter.current = () => xhr.abort();
    xhr.send(blob);
  });
}

async function call(method, url, headers, signal) {
  let res;
  try {
    res = await fetch(url, { method, headers: headersOf(headers), signal, cache: 'no-store' });
  } catch (e) {
    if (e.name === 'AbortError') throw new ApiError(0, { error: { code: 'aborted', message: 'cancelled' } });
    throw new ApiError(0, { error: { message: 'the server cannot be reached' } });
  }
  const text = method === 'HEAD' ? '' : await res.text();
  if (!res.ok) throw apiError(res, text);
  let body = null;
  try { body = JSON.parse(text); } catch { /* HEAD */ }
  return { status: res.status, body, offset: parseInt(res.headers.get('Upload-Offset') || '', 10), part: parseInt(res.headers.get('Upload-Part-Size') || '', 10), location: res.headers.get('Location') };
}

// Where the server's upload of this file stands: {id} when it holds the model, else
// {uid, offset, part}.
async function begin(file, sha256, structureId, signal) {
  const meta = [`sha256 ${b64(sha256)}`, `filename ${b64(file.name || 'model.onnx')}`];
  if (structureId) meta.push(`structure ${b64(structureId)}`);
  const r = await call('POST', '/uploads', { 'Upload-Length': String(file.size), 'Upload-Metadata': meta.join(',') }, signal);
  if (r.body && r.body.stored) return { id: r.body.id };
  return { uid: r.body.upload, offset: r.body.offset, part: r.body.part_size };
}

export function sendWeights({ file, sha256, structureId, onProgress }) {
  const ctl = new AbortController();
  const aborter = { current: null };
  let aborted = false;
  const report = (n) => { if (onProgress) onProgress(Math.min(n, file.size), file.size); };
  const run = async () => {
    let up = null;
    let wait = 500;
    for (;;) {
      if (aborted) throw new ApiError(0, { error: { code: 'aborted', message: 'cancelled' } });
      try {
        if (!up) {
          up = await begin(file, sha256, structureId, ctl.signal);
          if (up.id) { report(file.size); return up.id; }
        }
        report(up.offset);
        const end = Math.min(file.size, up.offset + up.part);
        const r = await patchPart(up.uid, up.offset, file.slice(up.offset, end), (n) => report(up.offset + n), aborter);
        wait = 500;
        if (r.status === 200 || r.status === 201) { report(file.size); return r.body.id; }
        up.offset = Number.isFinite(r.offset) ? r.offset : end;
      } catch (e) {
        if (aborted || e.code === 'aborted') throw new ApiError(0, { error: { code: 'aborted', message: 'cancelled' } });
        if (e.code === 'offset_mismatch' && Number.isFinite(e.uploadOffset) && e.uploadOffset !== null) { up.offset = e.uploadOffset; continue; }
        if (e.code === 'upload_not_found') { up = null; continue; } // expired or finished elsewhere: ask again
        if (!transient(e)) throw e;
        await sleep(e.retryAfter ? e.retryAfter * 1000 : wait, ctl.signal);
        wait = Math.min(wait * 2, 15000);
        if (up) { // where does it stand now?  (a restarted server kept what it acknowledged)
          try { const h = await call('HEAD', `/uploads/${up.uid}`, {}, ctl.signal); if (Number.isFinite(h.offset)) up.offset = h.offset; } catch (e2) { if (e2.status === 404) up = null; }
        }
      }
    }
  };
  return {
    promise: run(),
    abort: () => { aborted = true; ctl.abort(); if (aborter.current) aborter.current(); },
  };
}
