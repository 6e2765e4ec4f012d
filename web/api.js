// api.js — the service's HTTP API (docs/api.md): JSON errors, uploads with progress.

const TOKEN_KEY = 'onnxviz.token';

export function token() {
  try { return sessionStorage.getItem(TOKEN_KEY) || ''; } catch { return ''; }
}
export function setToken(t) {
  try { if (t) sessionStorage.setItem(TOKEN_KEY, t); else sessionStorage.removeItem(TOKEN_KEY); } catch { /* private mode */ }
}
function authHeaders() {
  const t = token();
  return t ? { Authorization: `Bearer ${t}` } : {};
}

// A signed /embed/{id} (docs/embed.md, decision 92): the server put a capability for that
// one model's reads in <html data-embed-cap>.  It goes as the header X-Onnxviz-Cap (not in
// the URL: no log, history or copied link holds it) with reads of /models/{id} and under
// it on this origin, nothing else; every read of the view is a fetch, so a header reaches all.
const html = typeof document === 'undefined' ? null : document.documentElement;
const cap = html && /^[0-9a-f]{64}$/.test(html.dataset.embed || '') && /^[0-9]{1,12}\.[0-9a-f]{64}$/.test(html.dataset.embedCap || '')
  ? { id: html.dataset.embed, value: html.dataset.embedCap } : null;

// The headers of a read of url: the token, and the embed's capability where it applies.
export function readHeaders(url) {
  const out = authHeaders();
  if (cap) {
    const u = new URL(url, location.href);
    const m = `/models/${cap.id}`;
    if (u.origin === location.origin && (u.pathname === m || u.pathname.startsWith(`${m}/`))) out['X-Onnxviz-Cap'] = cap.value;
  }
  return out;
}

// An error answer of the service: {error: {code, message, status, offset?, path?,
// headline?}}; headline: a model refused, in a person's words (parser/headline.c), shown
// first with the exact message below it.
export class ApiError extends Error {
  constructor(status, body, retryAfter) {
    const e = (body && body.error) || {};
    super(e.message || `HTTP ${status}`);
    this.status = status;
    this.code = e.code || (status ? `http_${status}` : 'network');
    this.offset = typeof e.offset === 'number' ? e.offset : null;
    this.path = typeof e.path === 'string' && e.path !== '' ? e.path : null;
    this.headline = typeof e.headline === 'string' ? e.headline : '';
    this.retryAfter = retryAfter;
  }
  // "truncated message at byte 1234 in graph.node[12]" style detail, or ''.
  where() {
    const parts = [];
    if (this.offset !== null) parts.push(`at byte ${this.offset}`);
    if (this.path) parts.push(`in ${this.path}`);
    return parts.join(' ');
  }
}

async function errorOf(res) {
  let body = null;
  try { body = await res.json(); } catch { /* not JSON */ }
  const ra = parseInt(res.headers.get('Retry-After') || '', 10);
  return new ApiError(res.status, body, Number.isFinite(ra) ? ra : null);
}

// GET (or another method) and answer the Response; throws ApiError on non-2xx.
export async function request(url, opts = {}) {
  let res;
  try {
    const method = (opts.method || 'GET').toUpperCase();
    const auth = method === 'GET' || method === 'HEAD' ? readHeaders(url) : authHeaders();
    res = await fetch(url, { ...opts, headers: { ...auth, ...(opts.headers || {}) } });
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, { error: { message: 'the server cannot be reached' } }, null);
  }
  if (!res.ok) throw await errorOf(res);
  return res;
}

export const getJSON = async (url, opts) => (await request(url, opts)).json();
export const getText = async (url, opts) => (await request(url, opts)).text();
export const getBlob = async (url, opts) => (await request(url, opts)).blob();

export const modelUrl = (id) => `/models/${encodeURIComponent(id)}`;

// Every stored model (GET /models pages), newest first by `created`.
export async function listModels(max = 1000) {
  const out = [];
  let url = `/models?limit=${Math.min(max, 1000)}`;
  while (url && out.length < max) {
    const page = await getJSON(url);
    out.push(...(page.models || []));
    url = page.next;
  }
  out.sort((a, b) => (b.created || 0) - (a.created || 0) || (a.id < b.id ? -1 : 1));
  return out;
}

// Where a data file goes relative to the model: its path inside a picked folder (without
// the folder itself), else its name.  (Browsers give no folders for single files.)
export function dataLocation(f) {
  const rel = f.webkitRelativePath || '';
  const i = rel.indexOf('/');
  return i > 0 ? rel.slice(i + 1) : f.name;
}

// POST /models with XMLHttpRequest (fetch has no upload progress).  A lone file goes as
// the raw body; with data files (external data), multipart/form-data: the `model` part,
// then one part per data file named by its location (docs/api.md).  onProgress(loaded,
// total) during the upload, onSent() once every byte is sent (the server parses then).
// Answers {promise, abort}; the promise resolves to {status, body} for 200/201 and rejects
// with ApiError (code 'aborted' on abort).  `encoded`: the file gzip'd (gzipped below),
// sent in its place with Content-Encoding: gzip (a raw body only).  `name`: what the
// server lists it as (a raw body's ?name=; default the file's name).
export function upload(file, { data = [], onProgress, onSent, encoded = null, name = file.name } = {}) {
  const xhr = new XMLHttpRequest();
  let body = encoded && !data.length ? encoded : file;
  if (data.length) {
    body = new FormData();
    body.append('model', file, name);
    for (const d of data) body.append(dataLocation(d), d, d.name);
  }
  const promise = new Promise((resolve, reject) => {
    // a raw body names its file in the query (multipart parts carry their filename)
    xhr.open('POST', data.length ? '/models' : `/models?name=${encodeURIComponent(name || '')}`);
    if (!data.length) xhr.setRequestHeader('Content-Type', 'application/octet-stream');
    if (body === encoded) xhr.setRequestHeader('Content-Encoding', 'gzip');
    for (const [k, v] of Object.entries(authHeaders())) xhr.setRequestHeader(k, v);
    xhr.responseType = 'text';
    xhr.upload.addEventListener('progress', (e) => {
      if (onProgress) onProgress(e.loaded, e.lengthComputable ? e.total : body.size);
    });
    xhr.upload.addEventListener('load', () => { if (onSent) onSent(); });
    xhr.addEventListener('load', () => {
      let body = null;
      try { body = JSON.parse(xhr.responseText); } catch { /* not JSON */ }
      if (xhr.status === 200 || xhr.status === 201) resolve({ status: xhr.status, body });
      else {
        const ra = parseInt(xhr.getResponseHeader('Retry-After') || '', 10);
        reject(new ApiError(xhr.status, body, Number.isFinite(ra) ? ra : null));
      }
    });
    xhr.addEventListener('error', () => reject(new ApiError(0, { error: { message: 'the upload failed: the connection was closed (the file may be over the server\'s size limit)' } })));
    xhr.addEventListener('abort', () => reject(new ApiError(0, { error: { code: 'aborted', message: 'upload cancelled' } })));
    xhr.send(body);
  });
  return { promise, abort: () => xhr.abort() };
}

// `blob` gzip'd (CompressionStream), when that is under 90% of its size: a model's
// structure is 4.6-11x smaller so (docs/web.md), what a slow link carries before the
// graph; null when it is not worth it or the browser cannot (or localStorage
// 'onnxviz.gzip' is 'off': the bench's plain anchor).
export async function gzipped(blob) {
  if (typeof CompressionStream === 'undefined' || blob.size < 4096) return null;
  try { if (localStorage.getItem('onnxviz.gzip') === 'off') return null; } catch { /* no storage */ }
  try {
    const gz = await new Response(blob.stream().pipeThrough(new CompressionStream('gzip'))).blob();
    return gz.size < 0.9 * blob.size ? gz : null;
  } catch {
    return null;
  }
}
