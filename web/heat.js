// heat.js — heat overlays on the page (docs/overlays.md).  The View menu gets a "Heat"
// fieldset: the cost model's figures (MACs, FLOPs, parameters, activation bytes) drawn as
// box fills, on a linear, log or thresholds scale; the choice lives in the URL with the
// other view options (overlay=, metric=, scale=), so a coloured view can be shared.  With
// a drawing shown, a "Hottest nodes" list: the 20 boxes with the largest values (the SVG's
// data-heat), each selecting its node and bringing it into view; and the drawing's own
// caption (source, coverage, unmatched).  Everything shown is text (textContent): names
// from the model or an overlay never become markup.
import { h, clear } from './util.js';

export const HEAT_DEFAULTS = { overlay: '', metric: '', scale: 'linear' };
export const HEAT_VALUES = {
  overlay: ['', 'cost'],
  metric: ['', 'macs', 'flops', 'params', 'bytes'],
  scale: ['linear', 'log', 'thresholds'],
};
const LABELS = {
  overlay: { '': 'none', cost: 'the cost model' },
  metric: { '': '—', macs: 'MACs', flops: 'FLOPs', params: 'parameters', bytes: 'activation bytes' },
  scale: { linear: 'linear', log: 'log', thresholds: 'thresholds' },
};

// The fieldset, put into the View form before its reset button.
export function heatFieldset(form) {
  const sel = (name, title) => h('label', { class: 'select-label' }, title,
    h('select', { name }, HEAT_VALUES[name].map((v) => h('option', { value: v, text: LABELS[name][v] }))));
  const fs = h('fieldset', { class: 'heat-options' }, h('legend', { text: 'Heat' }),
    sel('overlay', 'Colour by'), sel('metric', 'Figure'), sel('scale', 'Scale'));
  form.insertBefore(fs, form.querySelector('#btn-reset-options'));
  return fs;
}

export function syncHeat(form, opts) {
  for (const k of Object.keys(HEAT_DEFAULTS)) {
    const s = form.querySelector(`select[name="${k}"]`);
    if (s) s.value = opts[k];
  }
  for (const k of ['metric', 'scale']) {
    const s = form.querySelector(`select[name="${k}"]`);
    if (s) s.disabled = !opts.overlay;
  }
}

// The options a change of one heat choice makes: metric and scale only with an overlay.
export function heatPatch(name, value) {
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
