// names.js — the file names of models.  This browser remembers the names of what it
// uploaded (localStorage); the server keeps the first upload's name with each model and
// lists it (GET /models, docs/api.md).  A page opened fresh or from a shared link has only
// the server's: without it the header, the File row, the download names and a comparison's
// title fell back to the graph's name (`torch_jit`) or the id (issue 39).
import { getJSON } from './api.js';

const KEY = 'onnxviz.names';
const ID = /^[0-9a-f]{64}$/;

// The id just before `id` in the listing's order (ids are 64 hex digits, listed in
// order, `after` is exclusive): `GET /models?after=<it>&limit=1` lists `id` itself when
// it is stored.  "" for the first possible id (the listing from its start).
function before(id) {
  const d = id.split('');
  for (let i = d.length - 1; i >= 0; i--) {
    if (d[i] !== '0') {
      d[i] = (parseInt(d[i], 16) - 1).toString(16);
      return d.join('');
    }
    d[i] = 'f';
  }
  return '';
}

// The listing's entry of model `id` ({id, name, size, ...}), null when it is not stored:
// a "not here (yet)" the page expects is a 200 answer, not a 404 in the console (a HEAD
// /models/{id} logged one for every upload, issue 39).  Fails when the listing does.
export async function listed(id) {
  const page = await getJSON(`/models?after=${before(id)}&limit=1`);
  const m = (page.models || [])[0];
  return m && m.id === id ? m : null;
}

const asked = new Map(); // id → promise of the server's name ('' when it has none)

export const names = {
  get() { try { return JSON.parse(localStorage.getItem(KEY) || '{}'); } catch { return {}; } },
  set(id, name) {
    try {
      const m = this.get(); m[id] = name;
      localStorage.setItem(KEY, JSON.stringify(m));
    } catch { /* storage off */ }
  },
  // The name of model `id`: this browser's, else the server's (remembered here then).
  // Answers '' when neither knows one; never fails (a listing that fails names nothing).
  async lookup(id) {
    const mine = this.get()[id];
    if (mine || !ID.test(id)) return mine || '';
    if (!asked.has(id)) {
      asked.set(id, listed(id).then((m) => {
        const name = m && typeof m.name === 'string' ? m.name : '';
        if (name) this.set(id, name);
        return name;
      }).catch(() => { asked.delete(id); return ''; }));
    }
    return asked.get(id);
  },
};
