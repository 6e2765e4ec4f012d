// heat.js — heat overlays on the page (docs/overlays.md).  The View menu gets a "Heat"
// fieldset: the cost model's figures (MACs, FLOPs, parameters, activation bytes) drawn as
// box fills, on a linear, log or thresholds scale; the choice lives in the URL with the
// other view options (overlay=, metric=, scale=), so a coloured view can be shared.  With
// a drawing shown, a "Hottest nodes" list: the 20 boxes with the largest values (the SVG's
// data-heat), each selecting its node and bringing it into view; and the drawing's own
// caption (source, coverage, unmatched), and for a loaded overlay its table's coverage and
// the entries that matched no node (GET /models/{id}/overlays/{oid}).  A profile or node
// data file is loaded with "Load a profile…" or dropped on the open model (upload.js sends
// a dropped .json or .csv here, a .onnx to the model upload).  Everything shown is text
// (textContent): names from the model or an overlay never become markup.  Two overlays
// compared (issue 38): with a loaded overlay (A), "Compare with" picks B among the overlays
// loaded on this page or loads one ("Load B…"); the drawing is then B − A on a diverging
// scale (compare= in the URL), and the list shows the largest changes either way.
import { h, clear } from './util.js';
import { modelUrl, request } from './api.js';

const OID = /^[0-9a-f]{64}$/;
export const HEAT_DEFAULTS = { overlay: '', metric: '', scale: 'linear', compare: '' };
// what the URL may say (app.js checks values with includes()): a stored overlay's id and
// its metric names too
export const HEAT_VALUES = {
  overlay: { includes: (v) => v === '' || v === 'cost' || OID.test(v) },
  metric: { includes: (v) => /^[A-Za-z0-9._@-]{0,64}$/.test(v) }, // '@': dur.total@CPUExecutionProvider
  scale: ['linear', 'log', 'thresholds'],
  compare: { includes: (v) => v === '' || OID.test(v) },
};
// overlays loaded on this page: id -> the file's name (the "Compare with" choices)
const loaded = new Map();
const CHOICES = {
  overlay: ['', 'cost', 'file'],
  metric: ['', 'macs', 'flops', 'params', 'bytes', 'dur.mean', 'dur.p50', 'dur.p90', 'dur.total'],
  scale: ['linear', 'log', 'thresholds'],
};
const LABELS = {
  overlay: { '': 'none', cost: 'the cost model', file: 'a profile or node data (loaded)' },
  metric: {
    '': '—', macs: 'MACs', flops: 'FLOPs', params: 'parameters', bytes: 'activation bytes',
    'dur.mean': 'time, mean', 'dur.p50': 'time, p50', 'dur.p90': 'time, p90', 'dur.total': 'time, total',
  },
  scale: { linear: 'linear', log: 'log', thresholds: 'thresholds' },
};

// A file the page takes as an overlay rather than a model: .json or .csv.
export const isOverlayFile = (f) => /\.(json|csv)$/i.test(f.name || '');

// Post an ONNX Runtime profile, Model Explorer / Netron node data or CSV to the server
// (POST /models/{id}/overlays[?optimized=ID]): its answer, {id, metrics, coverage, ...}.
// optimized: ORT's optimized model (a File), uploaded first as a model of its own.
export async function postOverlay(modelId, file, optimized = null) {
  let q = '';
  if (optimized) {
    const up = await (await request('/models', { method: 'POST', body: optimized })).json();
    q = `?optimized=${up.id}`;
  }
  const res = await request(`${modelUrl(modelId)}/overlays${q}`, { method: 'POST', body: file });
  const o = await res.json();
  if (o && OID.test(o.id || '')) loaded.set(o.id, file.name || o.id.slice(0, 12));
  return o;
}

// "Compare with": none, or an overlay loaded on this page (the current one, A, left out)
function compareOptions(s, a, want) {
  const ids = [...loaded.keys()].filter((id) => id !== a);
  if (OID.test(want) && !ids.includes(want)) ids.push(want); // named by the URL
  clear(s).append(h('option', { value: '', text: 'nothing' }),
    ...ids.map((id) => h('option', { value: id, text: `B: ${loaded.get(id) || id.slice(0, 12)}` })));
  s.value = ids.includes(want) ? want : '';
}

// The fieldset, put into the View form before its reset button.  "Load a profile…" posts
// the file picked (postOverlay; a .onnx picked with it is ORT's optimized model) and calls
// onLoaded(overlay id, its first metric).
export function heatFieldset(form, modelId, onLoaded, onError) {
  const sel = (name, title) => h('label', { class: 'select-label' }, title,
    h('select', { name }, CHOICES[name].map((v) => h('option', { value: v, text: LABELS[name][v], hidden: v === 'file' }))));
  const input = h('input', { type: 'file', id: 'heat-file', multiple: true, accept: '.json,.csv,.onnx,application/json,text/csv', hidden: true });
  input.addEventListener('change', async () => {
    const files = [...(input.files || [])];
    input.value = '';
    if (!files.length || !modelId()) return;
    const f = files.find(isOverlayFile), opt = files.find((x) => /\.onnx$/i.test(x.name));
    try {
      if (!f || files.length > (opt ? 2 : 1)) throw new Error('Pick one profile (.json) or node data file (.csv), and with it at most ORT\'s optimized model (.onnx).');
      const o = await postOverlay(modelId(), f, opt);
      onLoaded(o.id, (o.metrics || [])[0] || '');
    } catch (e) { onError(e); }
  });
  // B: a second file, posted and picked in "Compare with" (the form's change event)
  const inputB = h('input', { type: 'file', id: 'heat-file-b', accept: '.json,.csv,application/json,text/csv', hidden: true });
  inputB.addEventListener('change', async () => {
    const f = (inputB.files || [])[0];
    inputB.value = '';
    if (!f || !modelId()) return;
    try {
      const o = await postOverlay(modelId(), f);
      const s = form.querySelector('select[name="compare"]');
      compareOptions(s, '', o.id);
      s.dispatchEvent(new Event('change', { bubbles: true }));
    } catch (e) { onError(e); }
  });
  const cmp = h('label', { class: 'select-label' }, 'Compare with', h('select', { name: 'compare', title: 'B: the drawing shows B − A of the figure, blue where B is faster, orange where it is slower' }));
  const fs = h('fieldset', { class: 'heat-options' }, h('legend', { text: 'Heat' }),
    sel('overlay', 'Colour by'), sel('metric', 'Figure'), sel('scale', 'Scale'), cmp,
    h('button', {
      type: 'button', class: 'btn btn-plain btn-small', text: 'Load a profile…', onclick: () => input.click(),
      title: 'An ONNX Runtime or TensorRT profile (.json), OpenVINO counters (.csv), node data (.json, .csv); pick ORT\'s optimized model (.onnx) with a profile to match its fused kernels',
    }), input,
    h('button', {
      type: 'button', class: 'btn btn-plain btn-small', id: 'heat-load-b', text: 'Load B…', onclick: () => inputB.click(),
      title: 'A second profile of this model (after a change, or another runtime) to compare with the loaded one',
    }), inputB);
  form.insertBefore(fs, form.querySelector('#btn-reset-options'));
  return fs;
}

// "time, total on CUDAExecutionProvider" for a provider's own metric (dur.total@P)
function metricLabel(m) {
  const at = m.indexOf('@');
  if (at < 0) return LABELS.metric[m] || m;
  const base = m.slice(0, at);
  return `${LABELS.metric[base] || base} on ${m.slice(at + 1)}`;
}

// A loaded overlay's metrics (from its table) as the "Figure" choices; the built-in ones
// otherwise.
export function heatMetrics(form, metrics) {
  const s = form.querySelector('select[name="metric"]');
  if (!s) return;
  const want = metrics && metrics.length ? ['', ...metrics] : CHOICES.metric;
  const have = [...s.options].map((o) => o.value);
  if (want.length === have.length && want.every((v, i) => v === have[i])) return;
  const v = s.value;
  clear(s).append(...want.map((m) => h('option', { value: m, text: metricLabel(m) })));
  s.value = want.includes(v) ? v : '';
}

export function syncHeat(form, opts) {
  if (!OID.test(opts.overlay)) heatMetrics(form, null);
  const c = form.querySelector('select[name="compare"]');
  if (c) {
    compareOptions(c, opts.overlay, opts.compare || '');
    c.disabled = !OID.test(opts.overlay); // B - A of a stored overlay (A)
    const b = form.querySelector('#heat-load-b');
    if (b) b.disabled = c.disabled;
  }
  for (const k of ['overlay', 'metric', 'scale']) {
    const s = form.querySelector(`select[name="${k}"]`);
    if (!s) continue;
    const v = k === 'overlay' && OID.test(opts[k]) ? 'file' : opts[k];
    // a metric named by the URL that the list does not have yet (a loaded overlay's)
    if (![...s.options].some((o) => o.value === v)) s.append(h('option', { value: v, text: k === 'metric' ? metricLabel(v) : LABELS[k][v] || v }));
    s.value = v;
  }
  for (const k of ['metric', 'scale']) {
    const s = form.querySelector(`select[name="${k}"]`);
    if (s) s.disabled = !opts.overlay;
  }
}

// The options a change of one heat choice makes: metric and scale only with an overlay.
export function heatPatch(name, value) {
  if (name === 'overlay' && value === 'file') return {}; // chosen by loading one
  if (name === 'overlay') return value ? { overlay: value, metric: 'macs', compare: '' } : { ...HEAT_DEFAULTS };
  return { [name]: value };
}

// A long name cut in its middle (`/layer1/lay…/conv2/Conv`): the end of a node's name
// is what tells rows apart (`/layer1/layer1.0/…` was every row's, cut at the end).
export function midCut(s, max = 30) {
  if (s.length <= max) return s;
  const head = Math.ceil((max - 1) * 0.35);
  return `${s.slice(0, head)}…${s.slice(s.length - (max - 1 - head))}`;
}

// A colour swatch (the page's CSP takes no style attributes: the colour goes through the
// CSSOM).
function swatch(fill, cls = '') {
  const e = h('span', { class: `hl-swatch${cls}`, 'aria-hidden': 'true' });
  if (fill) e.style.backgroundColor = fill;
  return e;
}

// The colour scale on screen, beside the view (issue 39: the drawing's own legend is under
// the drawing, thousands of pixels down on a full-detail view): the SVG legend's swatches
// from the coolest to the hottest, with its end values, "no data", and words that say
// which end is hot (the ramp runs pale to dark: darker is hotter).
function heatLegend(area, svg) {
  let el = area.querySelector('#heat-legend');
  const lg = svg && svg.querySelector('#legend.heat-legend');
  if (!lg) {
    if (el) el.hidden = true;
    return;
  }
  if (!el) {
    el = h('div', { class: 'heat-legend-bar', id: 'heat-legend', role: 'note', 'aria-label': 'Heat colour scale' });
    area.append(el);
  }
  el.hidden = false;
  // the swatches and their labels in drawing order; "no data" (stroked) and the captions
  // follow the last swatch
  const parts = [];
  for (const c of lg.children) {
    if (c.localName === 'rect' && !c.hasAttribute('stroke')) parts.push({ fill: c.getAttribute('fill') });
    else if (c.localName === 'rect') break;
    else if (c.localName === 'text') parts.push({ text: c.textContent });
  }
  const texts = [...lg.querySelectorAll('text')].map((t) => t.textContent);
  const caption = texts.slice(texts.indexOf('no data') + 1);
  clear(el).append(
    h('span', { class: 'hl-end', text: 'cooler' }),
    h('span', { class: 'hl-scale' }, parts.map((p) => (p.fill
      ? swatch(p.fill)
      : h('span', { class: 'hl-label', text: p.text })))),
    h('span', { class: 'hl-end hl-hot', text: 'hotter (darker) →' }),
    h('span', { class: 'hl-nodata' }, swatch('', ' hl-empty'), 'no data'),
    h('span', { class: 'hl-caption', text: caption[0] || '' }));
}

// The "Hottest nodes" list over the graph area for the SVG shown; none without heat.
// table: for a loaded overlay, a promise of its table (GET /models/{id}/overlays/{oid}):
// its coverage and the entries that matched no node are added when it answers.
export function showHottest(area, svg, onSelect, table) {
  let panel = area.querySelector('#heat-panel');
  heatLegend(area, svg);
  const boxes = svg ? [...svg.querySelectorAll('g.node[data-heat]')] : [];
  if (!boxes.length) {
    if (panel) panel.hidden = true;
    return;
  }
  if (!panel) {
    panel = h('section', { class: 'heat-panel', id: 'heat-panel', 'aria-label': 'Hottest nodes' });
    area.append(panel);
  }
  panel.hidden = false;
  // a comparison (B − A): the largest changes, either way
  const changes = !!svg.querySelector('.heat-diverging');
  const rows = boxes.map((g) => ({
    id: g.getAttribute('data-node') || g.id,
    value: Number(g.getAttribute('data-heat')),
    title: (g.querySelector('title') || {}).textContent || g.id,
    text: (g.querySelector('text.heat-value') || {}).textContent || '',
    group: g.hasAttribute('data-group'),
    // the frame's fill: the SVG's <rect>, a canvas drawing's box (canvas.js)
    fill: (g.__ox ? g.__ox.fill : (g.querySelector('title + *') || { getAttribute: () => '' }).getAttribute('fill')) || '',
  })).filter((r) => Number.isFinite(r.value))
    .sort(changes ? (a, b) => Math.abs(b.value) - Math.abs(a.value) : (a, b) => b.value - a.value).slice(0, 20);
  const caption = [...svg.querySelectorAll('#legend text')].map((t) => t.textContent).slice(-2).join(' · ');
  clear(panel).append(
    h('div', { class: 'panel-head' }, h('h2', { text: changes ? 'Largest changes' : 'Hottest nodes' }),
      h('button', { type: 'button', class: 'btn-icon', 'aria-label': 'Hide', text: '×', onclick: () => { panel.hidden = true; } })),
    h('p', { class: 'heat-caption', text: caption }),
    h('ol', { class: 'heat-list' }, rows.map((r) => h('li', null,
      h('button', {
        type: 'button', class: 'heat-row', title: r.title, disabled: r.group,
        onclick: () => onSelect(r.id),
      }, swatch(r.fill),
      h('span', { class: 'heat-name', text: midCut(r.title) }), h('span', { class: 'heat-val', text: r.text }))))));
  if (table) {
    const mine = {};
    panel.dataset.table = 'pending';
    panel.__table = mine;
    table.then((t) => { if (panel.__table === mine) showTable(panel, t); })
      .catch(() => { if (panel.__table === mine) panel.dataset.table = 'failed'; });
  } else {
    delete panel.dataset.table;
  }
}

const pct = (x) => `${(100 * x).toFixed(x > 0 && x < 0.001 ? 3 : 1)}%`;

// A loaded overlay's coverage and what matched no node (the 20 largest; the table lists
// the 1,000 largest and counts all: unmatched_count).
function showTable(panel, t) {
  const un = Array.isArray(t.unmatched) ? t.unmatched : [];
  const count = Number.isInteger(t.unmatched_count) ? t.unmatched_count : un.length;
  const time = t.source === 'ort-profile';
  const cov = h('p', { class: 'heat-coverage', text: `${t.entries} entries, ${t.matched} matched · coverage ${(Math.floor((t.coverage || 0) * 1000) / 10).toFixed(1)}%${time ? ' of kernel time' : ''}` });
  // under the caption, before the list: what the colours leave out is seen first
  const at = panel.querySelector('.heat-caption');
  at.after(cov);
  if (un.length) {
    // all listed: their shares; else the rest of the coverage
    const share = count > un.length ? 1 - (Number(t.coverage) || 0) : un.reduce((a, u) => a + (Number(u.share) || 0), 0);
    cov.after(h('details', { class: 'heat-unmatched', open: count <= 5 },
      h('summary', { text: `Not matched: ${count} ${count === 1 ? 'entry' : 'entries'} (${pct(share)})` }),
      h('ul', null, un.slice(0, 20).map((u) => h('li', { title: u.op ? `${u.name} (${u.op})` : u.name },
        h('span', { class: 'heat-name', text: u.name }), h('span', { class: 'heat-val', text: pct(Number(u.share) || 0) })))),
      count > 20 ? h('p', { class: 'empty', text: `and ${count - 20} more` }) : null));
  }
  panel.dataset.table = 'shown';
}
