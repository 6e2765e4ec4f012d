// util.js — DOM building without markup strings, and the page's one set of formatters
// (numbers, sizes, shapes, element and value types, key/value lists), which the node
// panel and the diff view share so that both print a thing the same way.
// Text from the server (model names, attribute strings) only ever becomes text nodes.

// h('div', {class: 'x', onclick: fn, 'aria-label': 'y'}, child, 'text', [more]) -> Element.
// Attributes starting with "on" become event listeners; `dataset` is an object; `text`
// sets textContent; false/null/undefined attributes and children are skipped.
export function h(tag, attrs, ...children) {
  const e = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === false || v === null || v === undefined) continue;
      if (k.startsWith('on') && typeof v === 'function') e.addEventListener(k.slice(2), v);
      else if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k === 'dataset') Object.assign(e.dataset, v);
      else e.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(e, children);
  return e;
}

export function append(parent, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    parent.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return parent;
}

export const SVGNS = 'http://www.w3.org/2000/svg';
// Same as h() for SVG elements (no listeners: our charts are passive).
export function s(tag, attrs, ...children) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== null && v !== undefined) e.setAttribute(k, String(v));
  }
  append(e, children);
  return e;
}

export function clear(e) {
  while (e.firstChild) e.firstChild.remove();
  return e;
}

const nf = new Intl.NumberFormat('en-US');
export const fmtInt = (n) => (typeof n === 'number' ? nf.format(n) : String(n));

export function fmtBytes(n) {
  if (typeof n !== 'number' || !isFinite(n)) return String(n);
  if (n < 1024) return `${n} B`;
  const u = ['KB', 'MB', 'GB', 'TB'];
  let i = -1;
  do { n /= 1024; i++; } while (n >= 1024 && i < u.length - 1);
  return `${n.toFixed(n < 10 ? 2 : n < 100 ? 1 : 0)} ${u[i]}`;
}

// A JSON number or the strings "NaN", "Inf", "-Inf" (JSON has no NaN), shown compactly.
export function fmtNum(v, digits = 6) {
  if (typeof v === 'string') return v;
  if (typeof v !== 'number') return String(v);
  if (Object.is(v, -0)) return '-0'; // String(-0) is "0": keep the sign JSON gave
  if (Number.isInteger(v) && Math.abs(v) < 1e15) return String(v);
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e-4 && a < 1e7) return String(Number(v.toPrecision(digits)));
  return v.toExponential(Math.max(0, digits - 2)).replace(/\.?0+e/, 'e');
}

export const isSpecial = (v) => typeof v === 'string' && /^(-?inf(inity)?|\+?inf(inity)?|nan)$/i.test(v);

// A shape as "1×3×224×224"; symbolic dims stay names; unknown dims "?"; scalar "scalar".
export function fmtShape(dims) {
  if (!Array.isArray(dims)) return '?';
  if (dims.length === 0) return 'scalar';
  return dims.map((d) => (d === null || d === undefined || d === '' ? '?' : typeof d === 'object' ? (d.param || d.name || '?') : d)).join('×');
}

const SHORT = {
  FLOAT: 'f32', FLOAT16: 'f16', BFLOAT16: 'bf16', DOUBLE: 'f64', INT8: 'i8', INT16: 'i16',
  INT32: 'i32', INT64: 'i64', UINT8: 'u8', UINT16: 'u16', UINT32: 'u32', UINT64: 'u64',
  BOOL: 'bool', STRING: 'str', COMPLEX64: 'c64', COMPLEX128: 'c128', INT4: 'i4', UINT4: 'u4',
  FLOAT8E4M3FN: 'f8e4m3fn', FLOAT8E4M3FNUZ: 'f8e4m3fnuz', FLOAT8E5M2: 'f8e5m2',
  FLOAT8E5M2FNUZ: 'f8e5m2fnuz', FLOAT8E8M0: 'f8e8m0', FLOAT4E2M1: 'f4e2m1',
};
export const dtypeShort = (t) => SHORT[t] || (t ? String(t).toLowerCase() : '?');

// A value's type, {elem_type, shape, kind?, source?} of the documents: "f32 ⟨1×3×224×224⟩",
// "i64 ⟨batch×?⟩ (inferred)", "sequence"; "type unknown" without one.
export function typeText(t) {
  if (!t) return 'type unknown';
  if (t.kind && t.kind !== 'tensor' && t.kind !== 'sparse_tensor') return t.kind;
  const et = t.elem_type ? dtypeShort(t.elem_type) : '?';
  const shape = t.shape === null || t.shape === undefined ? 'rank unknown' : fmtShape(t.shape);
  return `${et} ⟨${shape}⟩${t.source && t.source !== 'declared' && t.source !== 'initializer' ? ` (${t.source})` : ''}`;
}

// A definition list from [key, value] pairs; pairs that are missing or have no value
// (undefined, null, '') are left out.
export function kv(pairs) {
  return h('dl', { class: 'kv' }, pairs.filter((p) => p && p[1] !== undefined && p[1] !== null && p[1] !== '')
    .map(([k, v]) => [h('dt', { text: k }), h('dd', null, typeof v === 'string' ? breakable(v) : v)]));
}

// A symbolic figure (`8.19 k·batch_size·sequence_length·total_sequence_length`) may break
// after each `·` (a <wbr>): a narrow column broke it inside a name (`total_sequ / ence`).
// A dim the exporter named itself is marked and explained (madeDims).
function breakable(text) {
  MADE_DIM.lastIndex = 0;
  if (!text.includes('·') && !MADE_DIM.test(text)) return text;
  const parts = text.split('·');
  return parts.flatMap((t, i) => [...madeDims(i + 1 < parts.length ? `${t}·` : t), ...(i + 1 < parts.length ? [h('wbr')] : [])]);
}

// Dims an exporter named after an op's output (`Gemm7192_dim_0`, `Addout_dim_1`) or left
// unknown (ONNX Runtime's `unk__12`): in a figure they read as a run-together word
// (`4 k·Gemm7192_dim_0`, issue 39).  Each becomes an <abbr> whose title says what it is.
const MADE_DIM = /\b([A-Za-z][\w.]*?)_dim_(\d+)\b|\bunk__\d+\b/g;

function madeDims(text) {
  const out = [];
  let at = 0;
  MADE_DIM.lastIndex = 0;
  for (let m = MADE_DIM.exec(text); m; m = MADE_DIM.exec(text)) {
    if (m.index > at) out.push(text.slice(at, m.index));
    const title = m[1]
      ? `${m[0]}: a size the exporter named itself (dim ${m[2]} of the output of ${m[1]}), not one of the model's input dims; unknown until bound (Bind ${m[0]}:N)`
      : `${m[0]}: a size the exporter left unknown; unknown until bound (Bind ${m[0]}:N)`;
    out.push(h('abbr', { class: 'made-dim', title, text: m[0] }));
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

// An error as a notice: its message, and where the server says it lies (an API error's
// code and byte offset / field path, api.js).
export function errorNotice(e) {
  const api = typeof e.where === 'function';
  return h('div', { class: 'notice error' }, e.headline ? h('strong', { class: 'err-headline', text: e.headline }) : null, e.message,
    api && (e.where() || e.code) ? h('span', { class: 'err-where', text: [e.code, e.where()].filter(Boolean).join(' · ') }) : null);
}

export function fmtDate(unixSeconds) {
  if (typeof unixSeconds !== 'number') return '';
  const d = new Date(unixSeconds * 1000);
  const ago = (Date.now() - d.getTime()) / 1000;
  if (ago < 60) return 'just now';
  if (ago < 3600) return `${Math.floor(ago / 60)} min ago`;
  if (ago < 86400) return `${Math.floor(ago / 3600)} h ago`;
  return d.toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
}

// A scope path in the SVG's data-group / data-scope attributes: '%', ':', '(', ')' and '@'
// are percent-encoded there (render/svg.c), so that no attribute carries "javascript:",
// "url(" or "@import" whatever the model's names are.
export const groupAttr = (p) => p.replace(/[%:()@]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
export const pathAttr = (el, name) => {
  const v = el.getAttribute(name);
  return v == null ? v : v.replace(/%(25|3A|28|29|40)/g, (_, x) => String.fromCharCode(parseInt(x, 16)));
};
export const groupOf = (el) => pathAttr(el, 'data-group');

// A span of numbered scopes in an expand entry (render/hier.c): "/p/layers.0..99" (a range
// box's path) or "/p/layers.3..9/*" (every one of them): {parent, prefix, lo, hi}, else null.
export function spanOf(path) {
  const m = /^(.*)\/([^/]*?)(\d{1,9})\.\.(\d{1,9})(\/\*)?$/.exec(path);
  if (!m || +m[3] > +m[4]) return null;
  return { parent: m[1], prefix: m[2], lo: +m[3], hi: +m[4] };
}

// Is scope path p (or a scope below it) one of the span's members?
export function inSpan(span, p) {
  if (!p.startsWith(`${span.parent}/${span.prefix}`)) return false;
  const rest = p.slice(span.parent.length + 1 + span.prefix.length);
  const m = /^(\d{1,9})(\/|$)/.exec(rest);
  return !!m && +m[1] >= span.lo && +m[1] <= span.hi;
}

// Shortest useful form of a 64-hex id.
export const shortId = (id) => (id ? id.slice(0, 12) : '');

export function debounce(fn, ms) {
  let t = 0;
  const d = (...a) => { clearTimeout(t); t = setTimeout(() => fn(...a), ms); };
  d.cancel = () => clearTimeout(t);
  return d;
}

export function downloadBlob(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: filename });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}
