// heat.js — heat overlays on the page (docs/overlays.md).  The View menu gets a "Heat"
// fieldset: the cost model's figures (MACs, FLOPs, parameters, activation bytes) drawn as
// box fills, on a linear, log or thresholds scale; the choice lives in the URL with the
// other view options (overlay=, metric=, scale=), so a coloured view can be shared.  With
// a drawing shown, a "Hottest nodes" list: the 20 boxes with the largest values (the SVG's
// data-heat), each selecting its node and bringing it into view; and the drawing's own
// caption (source, coverage, unmatched).  Everything shown is text (textContent): names
// from the model or an overlay never become markup.
import { h, clear } from './util.js';
import { modelUrl, request } from './api.js';

const OID = /^[0-9a-f]{64}$/;
export const HEAT_DEFAULTS = { overlay: '', metric: '', scale: 'linear' };
// what the URL may say (app.js checks values with includes()): a stored overlay's id and
// its metric names too
export const HEAT_VALUES = {
  overlay: { includes: (v) => v === '' || v === 'cost' || OID.test(v) },
  metric: { includes: (v) => /^[A-Za-z0-9._-]{0,64}$/.test(v) },
  scale: ['linear', 'log', 'thresholds'],
};
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

// The fieldset, put into the View form before its reset button.  "Load a file…" posts an
// ONNX Runtime profile, Model Explorer / Netron node data or CSV to the server
// (POST /models/{id}/overlays) and calls onLoaded(overlay id, its first metric).
export function heatFieldset(form, modelId, onLoaded, onError) {
  const sel = (name, title) => h('label', { class: 'select-label' }, title,
    h('select', { name }, CHOICES[name].map((v) => h('option', { value: v, text: LABELS[name][v], hidden: v === 'file' }))));
  const input = h('input', { type: 'file', accept: '.json,.csv,application/json,text/csv', hidden: true });
  input.addEventListener('change', async () => {
    const f = input.files && input.files[0];
    input.value = '';
    if (!f || !modelId()) return;
    try {
      const res = await request(`${modelUrl(modelId())}/overlays`, { method: 'POST', body: f });
      const o = await res.json();
      onLoaded(o.id, (o.metrics || [])[0] || '');
    } catch (e) { onError(e); }
  });
  const fs = h('fieldset', { class: 'heat-options' }, h('legend', { text: 'Heat' }),
    sel('overlay', 'Colour by'), sel('metric', 'Figure'), sel('scale', 'Scale'),
    h('button', { type: 'button', class: 'btn btn-plain btn-small', text: 'Load a profile…', onclick: () => input.click() }), input);
  form.insertBefore(fs, form.querySelector('#btn-reset-options'));
  return fs;
}

export function syncHeat(form, opts) {
  for (const k of Object.keys(HEAT_DEFAULTS)) {
    const s = form.querySelector(`select[name="${k}"]`);
    if (s) s.value = k === 'overlay' && OID.test(opts[k]) ? 'file' : opts[k];
  }
  for (const k of ['metric', 'scale']) {
    const s = form.querySelector(`select[name="${k}"]`);
    if (s) s.disabled = !opts.overlay;
  }
}

// The options a change of one heat choice makes: metric and scale only with an overlay.
export function heatPatch(name, value) {
  if (name === 'overlay' && value === 'file') return {}; // chosen by loading one
  if (name === 'overlay') return value ? { overlay: value, metric: 'macs' } : { ...HEAT_DEFAULTS };
  return { [name]: value };
}

// The "Hottest nodes" list over the graph area for the SVG shown; none without heat.
export function showHottest(area, svg, onSelect) {
  let panel = area.querySelector('#heat-panel');
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
  const rows = boxes.map((g) => ({
    id: g.getAttribute('data-node') || g.id,
    value: Number(g.getAttribute('data-heat')),
    title: (g.querySelector('title') || {}).textContent || g.id,
    text: (g.querySelector('text.heat-value') || {}).textContent || '',
    group: g.hasAttribute('data-group'),
  })).filter((r) => Number.isFinite(r.value)).sort((a, b) => b.value - a.value).slice(0, 20);
  const caption = [...svg.querySelectorAll('#legend text')].map((t) => t.textContent).slice(-2).join(' · ');
  clear(panel).append(
    h('div', { class: 'panel-head' }, h('h2', { text: 'Hottest nodes' }),
      h('button', { type: 'button', class: 'btn-icon', 'aria-label': 'Hide', text: '×', onclick: () => { panel.hidden = true; } })),
    h('p', { class: 'heat-caption', text: caption }),
    h('ol', { class: 'heat-list' }, rows.map((r) => h('li', null,
      h('button', {
        type: 'button', class: 'heat-row', title: r.title, disabled: r.group,
        onclick: () => onSelect(r.id),
      }, h('span', { class: 'heat-name', text: r.title }), h('span', { class: 'heat-val', text: r.text }))))));
}
