// route.js — the page's URL as a route object and back (app.js keeps the current route
// and navigates).
//
// #/models/{id}?rankdir=LR&initializers=nodes&group=none&subgraphs=expand&shapes=off
//   &attrs=all&arith=nodes&quant=nodes&io=nodes&patterns=nodes&expand=/a,/b&unfold=n12,n40&node=n12&value=34&tensor=@i3
//   &hide=Constant,Identity (op types not drawn: hide.js)
//   &dequantize=1&dims=batch:1,sequence_length:128
//   (dequantize: absent = a quantized tensor's dequantized values, 0 = its stored
//   integers, 1 = dequantized; issue 39)
// #/diff/{a}/{b}?{the same options}&change=N — the diff view (diff.js)
//   &view=sbs: A and B side by side (sidebyside.js), &pick=a:{box id}|b:{box id} the box
//   selected there (its pair is selected in the other pane)
import { HEAT_DEFAULTS, HEAT_VALUES } from './heat.js';
import { HIDE_VALUE } from './hide.js';

export const DEFAULTS = { rankdir: 'TB', initializers: 'fold', subgraphs: 'collapse', group: 'auto', shapes: 'on', attrs: 'key', arith: 'fold', quant: 'fold', io: 'fold', patterns: 'fold', hide: '', ...HEAT_DEFAULTS };
export const OPTION_VALUES = {
  rankdir: ['TB', 'LR'], initializers: ['fold', 'nodes', 'hide'], subgraphs: ['collapse', 'expand'],
  group: ['auto', 'none', ...Array.from({ length: 16 }, (_, i) => String(i + 1))], shapes: ['on', 'off'], attrs: ['none', 'key', 'all'],
  arith: ['fold', 'nodes'], quant: ['fold', 'nodes'], io: ['fold', 'nodes'], patterns: ['fold', 'nodes'], hide: HIDE_VALUE, ...HEAT_VALUES,
};
export const NODE_ID = /^[A-Za-z0-9_.]{1,200}$/;
// a box of the side-by-side diff: its side and its id in that side's drawing (the ids
// graph.js's check lets through)
export const PICK = /^[ab]:[A-Za-z0-9_.:-]{1,200}$/;
// dims=NAME:VALUE,... binds named dims in the MAC rows and the cost panel (docs/cost.md)
export const DIMS = /^[^&=,:]{1,200}:\d{1,19}(?:,[^&=,:]{1,200}:\d{1,19}){0,31}$/;

export function parseHash(hash) {
  const r = { id: null, opts: { ...DEFAULTS }, expand: [], unfold: [], node: null, value: null, tensor: null, dequantize: null, diff: null, change: null, view: null, pick: null, dims: '' };
  const m = /^#\/(?:models\/([0-9a-f]{64})|diff\/([0-9a-f]{64})\/([0-9a-f]{64}))(?:\?(.*))?$/.exec(hash);
  if (!m) return r;
  if (m[1]) r.id = m[1];
  else r.diff = { a: m[2], b: m[3] };
  for (const part of (m[4] || '').split('&')) {
    if (!part) continue;
    const eq = part.indexOf('=');
    let k, v;
    try {
      k = decodeURIComponent(eq < 0 ? part : part.slice(0, eq));
      v = eq < 0 ? '' : decodeURIComponent(part.slice(eq + 1));
    } catch { continue; }
    if (k in OPTION_VALUES) { if (OPTION_VALUES[k].includes(v)) r.opts[k] = v; }
    else if (k === 'expand') r.expand = [...new Set(v.split(',').filter(Boolean))];
    else if (k === 'unfold') r.unfold = [...new Set(v.split(',').filter((x) => NODE_ID.test(x)))];
    else if (k === 'node') r.node = v || null;
    else if (k === 'value') r.value = /^\d+$/.test(v) ? v : null;
    else if (k === 'tensor') r.tensor = v || null;
    else if (k === 'dequantize') r.dequantize = v === '1' ? true : v === '0' ? false : null;
    else if (k === 'dims') r.dims = DIMS.test(v) ? v : '';
    else if (k === 'change' && r.diff) r.change = /^\d+$/.test(v) ? +v : null;
    else if (k === 'view' && r.diff) r.view = v === 'sbs' ? v : null;
    else if (k === 'pick' && r.diff) r.pick = PICK.test(v) ? v : null;
  }
  return r;
}

// Readable encoding: '/' and ',' stay as they are in expand paths.
const enc = (v) => encodeURIComponent(v).replace(/%2F/g, '/').replace(/%2C/g, ',').replace(/%40/g, '@');

export function renderQuery(r) {
  const q = [];
  for (const k of Object.keys(DEFAULTS)) if (r.opts[k] !== DEFAULTS[k]) q.push(`${k}=${enc(r.opts[k])}`);
  if (r.expand.length) q.push(`expand=${r.expand.map(enc).join(',')}`);
  if (r.unfold.length) q.push(`unfold=${r.unfold.join(',')}`);
  if (r.dims) q.push(`dims=${enc(r.dims)}`);
  return q.join('&');
}

export function buildHash(r) {
  if (r.diff) {
    const sbs = r.view === 'sbs';
    const q = [renderQuery(r), sbs ? 'view=sbs' : '', r.change !== null && r.change !== undefined ? `change=${r.change}` : '',
      sbs && r.pick ? `pick=${r.pick}` : ''].filter(Boolean).join('&');
    return `#/diff/${r.diff.a}/${r.diff.b}${q ? `?${q}` : ''}`;
  }
  if (!r.id) return '#/';
  const q = [renderQuery(r)];
  if (r.node) q.push(`node=${enc(r.node)}`);
  if (r.value) q.push(`value=${enc(r.value)}`);
  if (r.tensor) q.push(`tensor=${enc(r.tensor)}`);
  if (r.tensor && r.dequantize !== null) q.push(`dequantize=${r.dequantize ? 1 : 0}`);
  const qs = q.filter(Boolean).join('&');
  return `#/models/${r.id}${qs ? `?${qs}` : ''}`;
}
