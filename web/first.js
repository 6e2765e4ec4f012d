// first.js — structure first (issue 23): the page uploads a model's structure alone and
// draws it at once; then the file's SHA-256 says whether the server already holds the
// whole model, and otherwise the weights follow (weights.js).  The walk and the hash run
// in a Web Worker (structure.js), reading the file in slices.

import { listed } from './names.js';

// The structure's worker for one file: read() answers structure.js's answer ({bytes,
// ranges, location, reason, fileSize, cut, ms}); sha256(onProgress) the file's hash (hex),
// sha256Of(otherFile, onProgress) another's; close() ends the worker.
// One worker is made ahead (when this module loads), so that a file chosen does not wait
// for the worker's thread and script; each file takes it and leaves a new one behind.
let spare = null;
const newWorker = () => new Worker('/structure.js', { type: 'module' });
try { spare = newWorker(); } catch { /* no workers: made on demand, or the upload goes whole */ }

export function structureWorker(file) {
  const worker = spare || newWorker();
  spare = null;
  // the next spare is made once this walk is over (or the worker closed, when there was
  // no walk): made at once, its thread and module load competed with the walk's reads
  // (two cores: 367-429 ms walks in the bench's page)
  const respare = () => { try { spare = spare || newWorker(); } catch { /* made on demand */ } };
  const waiting = new Map(); // message type -> {resolve, reject, onProgress}
  worker.onmessage = (e) => {
    const m = e.data || {};
    if (m.type === 'structure' || m.type === 'error') setTimeout(respare, 0);
    if (m.type === 'hash-progress') { const w = waiting.get('sha256'); if (w && w.onProgress) w.onProgress(m.hashed, m.size); return; }
    if (m.type === 'error') { for (const w of waiting.values()) w.reject(new Error(m.message)); waiting.clear(); return; }
    const w = waiting.get(m.type);
    if (w) { waiting.delete(m.type); w.resolve(m); }
  };
  worker.onerror = (e) => { for (const w of waiting.values()) w.reject(new Error(e.message || 'the structure worker failed')); waiting.clear(); };
  let closed = false;
  const cancelled = () => Object.assign(new Error('cancelled'), { code: 'aborted' });
  const ask = (type, msg, onProgress) => new Promise((resolve, reject) => {
    if (closed) { reject(cancelled()); return; } // closed before it was asked (upload.js waits for the drawing)
    waiting.set(type, { resolve, reject, onProgress });
    worker.postMessage(msg);
  });
  return {
    read: () => ask('structure', { type: 'structure', file, name: file.name }),
    sha256: async (onProgress) => (await ask('sha256', { type: 'hash' }, onProgress)).hex,
    // the SHA-256 of another file (a data file of a bundle), in the same worker
    sha256Of: async (f, onProgress) => (await ask('sha256', { type: 'hash', file: f }, onProgress)).hex,
    // ends the worker; what is still awaited, and what is asked later, is rejected with
    // code 'aborted'
    close: () => {
      closed = true;
      worker.terminate();
      setTimeout(respare, 0); // a bundle's hash-only choice has no walk to answer
      for (const w of waiting.values()) w.reject(cancelled());
      waiting.clear();
    },
  };
}

// Does the server hold model `id`?  Asked of the listing (names.js: a 200 either way; a
// HEAD /models/{id} answered 404 for "not yet", an error line in the console at every
// upload); a failed listing is an ApiError.
export async function serverHas(id) {
  return (await listed(id)) !== null;
}

// Structure models this page uploaded: structure id -> {name, size (the file's), state,
// full (the whole model's id once known)}.  Kept for the page's life: the node panel says
// "weights not uploaded" for their external tensors rather than an error.
export const structures = new Map();
