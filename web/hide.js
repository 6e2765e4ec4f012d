// hide.js — hide nodes by op type from the page (issue 37; the server's hide=, decision 93,
// render/hide.c).  The View menu gets a "Hide op types" fieldset: one checkbox per op type
// of the model, with its count (the summary's op_types), sorted by count; what is checked
// is the view's hide= (Constant,Identity), kept in the URL with the other view options, so
// SVG and canvas drawings both ask the server for it.  Op types differing only by domain
// are one entry (hide= names op types, not domains).  A list the URL names but the model
// lacks (a diff, a shared link to another model) still shows its entries, so they can be
// unchecked.
import { h, clear, fmtInt } from './util.js';

// what hide= may say: [A-Za-z0-9_] names, 1..64 characters, at most 32 (render/options.c)
export const HIDE_MAX = 32;
const NAME = /^[A-Za-z0-9_]{1,64}$/;
export const HIDE_VALUE = {
  includes: (v) => v === '' || (v.split(',').length <= HIDE_MAX && v.split(',').every((x) => NAME.test(x))),
};

// The hide= of a list of names: sorted, without repeats, so that one set is one URL (the
// server's cache key does the same).
export function hideValue(names) {
  return [...new Set(names.filter((x) => NAME.test(x)))].sort().slice(0, HIDE_MAX).join(',');
}

// The fieldset, put into the View form before its reset button; syncHide fills it.
export function hideFieldset(form) {
  const fs = h('fieldset', { class: 'hide-ops', id: 'hide-ops' },
    h('legend', { text: 'Hide op types' }),
    h('div', { class: 'hide-list', id: 'hide-list' }),
    h('p', { class: 'hide-note', id: 'hide-note' }));
  form.insertBefore(fs, form.querySelector('#btn-reset-options'));
  return fs;
}

// Fill the fieldset with op types ([{op_type, count}], a summary's; several domains of one
// name are added up) and check those of hide (the route's hide= text).  Nothing to list:
// the fieldset is hidden.
export function syncHide(form, opTypes, hide) {
  const want = new Set(hide ? hide.split(',') : []);
  const counts = new Map();
  for (const o of opTypes || []) {
    if (!o || !NAME.test(o.op_type || '')) continue; // not a name hide= can say
    counts.set(o.op_type, (counts.get(o.op_type) || 0) + (+o.count || 0));
  }
  for (const n of want) if (!counts.has(n)) counts.set(n, null);
  const list = form.querySelector('#hide-list');
  const names = [...counts.keys()].sort((a, b) => (counts.get(b) ?? -1) - (counts.get(a) ?? -1) || a.localeCompare(b));
  const key = names.map((n) => `${n}:${counts.get(n)}`).join(',');
  if (list.dataset.key !== key) {
    list.dataset.key = key;
    clear(list).append(...names.map((n) => h('label', { title: counts.get(n) === null ? `${n} (not in this model)` : `${fmtInt(counts.get(n))} ${n} nodes` },
      h('input', { type: 'checkbox', name: 'hide', value: n }),
      h('span', { class: 'hide-op', text: n }),
      h('span', { class: 'hide-count', text: counts.get(n) === null ? '–' : fmtInt(counts.get(n)) }))));
  }
  for (const inp of list.querySelectorAll('input')) inp.checked = want.has(inp.value);
  limit(form);
  form.querySelector('#hide-ops').hidden = names.length === 0;
  form.querySelector('#hide-note').textContent = want.size
    ? `${want.size} hidden: their consumers are wired to what feeds them`
    : '';
}

// The hide= the checkboxes say (after a change).
export function hideChecked(form) {
  return hideValue([...form.querySelectorAll('#hide-list input:checked')].map((x) => x.value));
}

// At most HIDE_MAX checked: the others are disabled until one is unchecked.
function limit(form) {
  const boxes = [...form.querySelectorAll('#hide-list input')];
  const full = boxes.filter((x) => x.checked).length >= HIDE_MAX;
  for (const x of boxes) x.disabled = full && !x.checked;
}
