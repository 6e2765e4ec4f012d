// home.js — the home page: the models stored on the server (newest first, with what the
// listing or each summary says of them), and "Compare two models": pick two of them (A,
// then B) or drop two files, which go up first.

import { getJSON, listModels, modelUrl, upload } from './api.js';
import { fileProblem } from './filecheck.js';
import { h, clear, errorNotice, fmtBytes, fmtDate, fmtInt, shortId } from './util.js';

const $ = (id) => document.getElementById(id);

// The "Compare" section: pick two stored models (A then B) from the home page's model
// list (`list`), or drop / choose two files.
// The "Compare" section: pick two stored models (A then B), or drop / choose two files.
function compareSection({ onCompare, onError, announce, names, list }) {
  const picked = [];
  const status = h('p', { class: 'compare-status', 'aria-live': 'polite', text: 'Pick two models below (A, then B), or drop two .onnx files here.' });
  const go = h('button', { type: 'button', class: 'btn btn-accent btn-small', id: 'btn-compare', disabled: true, text: 'Compare' });
  const swap = h('button', { type: 'button', class: 'btn btn-plain btn-small', disabled: true, text: 'Swap A and B' });
  const fileInput = h('input', { type: 'file', multiple: true, accept: '.onnx', hidden: true, id: 'compare-input' });
  const zone = h('div', { class: 'dropzone compare-drop', id: 'compare-drop', tabindex: '0', role: 'button', 'aria-describedby': 'compare-hint' },
    h('div', { class: 'dropzone-title', text: 'Drop two .onnx files here' }),
    h('div', { class: 'dropzone-hint', id: 'compare-hint', text: 'the first is A (the old one), the second B — or press Enter to choose them' }));
  const refresh = () => {
    go.disabled = picked.length !== 2;
    swap.disabled = picked.length !== 2;
    const nm = (id) => {
      const li = list.querySelector(`input.compare-pick[value="${id}"]`)?.closest('li');
      const shown = li && li.querySelector('.ml-name');
      return `${names.get()[id] || (shown && shown.textContent) || 'model'} (${shortId(id)})`;
    };
    status.textContent = picked.length === 0 ? 'Pick two models below (A, then B), or drop two .onnx files here.'
      : picked.length === 1 ? `A: ${nm(picked[0])} — now pick B.` : `A: ${nm(picked[0])} → B: ${nm(picked[1])}`;
    for (const cb of list.querySelectorAll('input.compare-pick')) {
      const k = picked.indexOf(cb.value);
      cb.checked = k >= 0;
      cb.closest('li').dataset.pick = k === 0 ? 'A' : k === 1 ? 'B' : '';
    }
  };
  const toggle = (id) => {
    const k = picked.indexOf(id);
    if (k >= 0) picked.splice(k, 1);
    else { if (picked.length === 2) picked.shift(); picked.push(id); }
    refresh();
  };
  go.addEventListener('click', () => { if (picked.length === 2) onCompare(picked[0], picked[1]); });
  swap.addEventListener('click', () => { picked.reverse(); refresh(); });
  const files = async (list) => {
    const ms = [...list].filter((f) => /\.onnx$/i.test(f.name));
    if (ms.length !== 2) { status.textContent = `Two .onnx files are needed (got ${ms.length}).`; return; }
    for (const f of ms) {
      const problem = await fileProblem(f);
      if (problem) { status.textContent = `${f.name}: ${problem}. Nothing was sent.`; announce(status.textContent); return; }
    }
    const ids = [];
    for (const [i, f] of ms.entries()) {
      status.textContent = `Uploading ${i === 0 ? 'A' : 'B'}: ${f.name}…`;
      announce(status.textContent);
      try {
        const res = await upload(f).promise;
        names.set(res.body.id, f.name);
        ids.push(res.body.id);
      } catch (e) { status.textContent = `${f.name}: ${e.headline || e.message}`; onError(e); return; }
    }
    onCompare(ids[0], ids[1]);
  };
  fileInput.addEventListener('change', () => { const f = [...fileInput.files]; fileInput.value = ''; files(f); });
  zone.addEventListener('click', () => fileInput.click());
  zone.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); fileInput.click(); } });
  const section = h('section', { class: 'compare', 'aria-labelledby': 'compare-title' },
    h('div', { class: 'section-head' }, h('h2', { id: 'compare-title', text: 'Compare two models' }), h('div', { class: 'compare-actions' }, swap, go)),
    zone, fileInput, status);
  return { section, toggle, refresh, files, zone };
}

// names: the file names of models uploaded here; announce(text); onCompare(a, b) opens the
// diff of two models.  Answers {refresh (the list), compareFiles (two dropped files)}.
export function initHome({ names, announce, onCompare }) {
  const compare = compareSection({
    names, announce, onCompare, list: $('model-list'),
    onError: (e) => announce(`The upload failed: ${e.message}`),
  });
  $('recent').before(compare.section);

  let modelsSeq = 0;
  async function refreshModels() {
    const seq = ++modelsSeq;
    const list = $('model-list');
    list.setAttribute('aria-busy', 'true');
    try {
      const models = await listModels(1000);
      if (seq !== modelsSeq) return;
      clear(list);
      $('model-list-empty').hidden = models.length > 0;
      const known = names.get();
      const shown = models.slice(0, 40);
      for (const m of shown) {
        const name = h('span', { class: 'ml-name', text: known[m.id] || m.name || `model ${shortId(m.id)}` });
        const meta = h('span', { class: 'ml-meta' }, h('span', { class: 'mono', text: shortId(m.id) }), ` · ${fmtBytes(m.size)}`);
        list.append(h('li', { class: 'ml-item' },
          h('input', { type: 'checkbox', class: 'compare-pick', value: m.id, 'aria-label': `Compare ${known[m.id] || m.name || shortId(m.id)}`, onchange: () => compare.toggle(m.id) }),
          h('a', { href: `#/models/${m.id}` }, name, h('span', { class: 'ml-when', text: fmtDate(m.created) }), meta)));
        m.nameEl = name; m.metaEl = meta;
      }
      if (models.length > shown.length) list.append(h('li', { class: 'empty', text: `… and ${fmtInt(models.length - shown.length)} older models` }));
      compare.refresh();
      // the listing says nodes and producer of models it kept them for; the others (and
      // tensors, for dtype and dims) from each summary (cached: immutable answers)
      let next = 0;
      const worker = async () => {
        while (next < shown.length && seq === modelsSeq) {
          const m = shown[next++];
          if (m.kind === 'model' && m.nodes != null) {
            m.metaEl.append(` · ${fmtInt(m.nodes)} nodes · ${m.producer || 'unknown producer'}`);
            continue;
          }
          try {
            const s = await getJSON(modelUrl(m.id));
            if (s.kind === 'tensor') {
              const t = s.tensor || {};
              if (!known[m.id]) m.nameEl.textContent = t.name || `tensor ${shortId(m.id)}`;
              m.metaEl.append(` · tensor ${t.dtype} ⟨${(t.dims || []).join('×') || 'scalar'}⟩`);
              continue;
            }
            const mm = s.summary.model || {};
            const sm = s.summary.summary || {};
            if (!known[m.id] && !m.name && mm.graph_name) m.nameEl.textContent = mm.graph_name;
            m.metaEl.append(` · ${fmtInt(sm.nodes)} nodes · ${[mm.producer_name, mm.producer_version].filter(Boolean).join(' ') || 'unknown producer'}`);
          } catch { /* keep the short form */ }
        }
      };
      await Promise.all([worker(), worker(), worker(), worker()]);
    } catch (e) {
      if (seq !== modelsSeq) return;
      clear(list).append(h('li', null, errorNotice(e)));
    } finally {
      list.setAttribute('aria-busy', 'false');
    }
  }
  $('btn-refresh-models').addEventListener('click', refreshModels);

  return { refresh: refreshModels, compareFiles: (files) => compare.files(files) };
}
