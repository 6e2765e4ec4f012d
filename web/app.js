// app.js — the onnxviz page: routing (#/models/{id}?options), upload, graph, panels, search.
// No framework; every piece of server text goes into text nodes; the SVG is parsed as XML,
// checked, and imported (graph.js).

import { ApiError, dataLocation, getJSON, getBlob, listModels, modelUrl, upload, setToken } from './api.js';
import { fetchSvg, Minimap, PanZoom, READABLE, startBox, stubPeers } from './graph.js';
import { modelPanel, nodePanel, tensorPanel, tensorUploadPanel, valuePanel } from './panels.js';
import { h, clear, fmtInt, fmtBytes, fmtDate, shortId, debounce, downloadBlob, groupAttr, groupOf, pathAttr, spanOf, inSpan } from './util.js';
import { DiffView, compareSection } from './diff.js';
import { serverHas, structures, structureWorker } from './first.js';
import { sendWeights } from './weights.js';

const $ = (id) => document.getElementById(id);

// ------------------------------------------------------------------------- route
// #/models/{id}?rankdir=LR&initializers=nodes&group=none&subgraphs=expand&shapes=off
//   &attrs=all&arith=nodes&quant=nodes&expand=/a,/b&unfold=n12,n40&node=n12&value=34&tensor=@i3
//   &dequantize=1&dims=batch:1,sequence_length:128
// #/diff/{a}/{b}?{the same options}&change=N — the diff view (diff.js)
const DEFAULTS = { rankdir: 'TB', initializers: 'fold', subgraphs: 'collapse', group: 'auto', shapes: 'on', attrs: 'key', arith: 'fold', quant: 'fold' };
const OPTION_VALUES = {
  rankdir: ['TB', 'LR'], initializers: ['fold', 'nodes', 'hide'], subgraphs: ['collapse', 'expand'],
  group: ['auto', 'none', ...Array.from({ length: 16 }, (_, i) => String(i + 1))], shapes: ['on', 'off'], attrs: ['none', 'key', 'all'],
  arith: ['fold', 'nodes'], quant: ['fold', 'nodes'],
};
const NODE_ID = /^[A-Za-z0-9_.]{1,200}$/;
// dims=NAME:VALUE,... binds named dims in the MAC rows and the cost panel (docs/cost.md)
const DIMS = /^[^&=,:]{1,200}:\d{1,19}(?:,[^&=,:]{1,200}:\d{1,19}){0,31}$/;

function parseHash(hash) {
  const r = { id: null, opts: { ...DEFAULTS }, expand: [], unfold: [], node: null, value: null, tensor: null, dequantize: false, diff: null, change: null, dims: '' };
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
    else if (k === 'dequantize') r.dequantize = v === '1';
    else if (k === 'dims') r.dims = DIMS.test(v) ? v : '';
    else if (k === 'change' && r.diff) r.change = /^\d+$/.test(v) ? +v : null;
  }
  return r;
}

// Readable encoding: '/' and ',' stay as they are in expand paths.
const enc = (v) => encodeURIComponent(v).replace(/%2F/g, '/').replace(/%2C/g, ',').replace(/%40/g, '@');

function renderQuery(r) {
  const q = [];
  for (const k of Object.keys(DEFAULTS)) if (r.opts[k] !== DEFAULTS[k]) q.push(`${k}=${enc(r.opts[k])}`);
  if (r.expand.length) q.push(`expand=${r.expand.map(enc).join(',')}`);
  if (r.unfold.length) q.push(`unfold=${r.unfold.join(',')}`);
  if (r.dims) q.push(`dims=${enc(r.dims)}`);
  return q.join('&');
}

function buildHash(r) {
  if (r.diff) {
    const q = [renderQuery(r), r.change !== null && r.change !== undefined ? `change=${r.change}` : ''].filter(Boolean).join('&');
    return `#/diff/${r.diff.a}/${r.diff.b}${q ? `?${q}` : ''}`;
  }
  if (!r.id) return '#/';
  const q = [renderQuery(r)];
  if (r.node) q.push(`node=${enc(r.node)}`);
  if (r.value) q.push(`value=${enc(r.value)}`);
  if (r.tensor) q.push(`tensor=${enc(r.tensor)}`);
  if (r.tensor && r.dequantize) q.push('dequantize=1');
  const qs = q.filter(Boolean).join('&');
  return `#/models/${r.id}${qs ? `?${qs}` : ''}`;
}

let route = parseHash(location.hash);

// Change the route: a new history entry (or the current one replaced) and apply it.
function navigate(patch, { replace = false } = {}) {
  const next = { ...route, ...patch, opts: { ...route.opts, ...(patch.opts || {}) } };
  const hash = buildHash(next);
  if (hash !== location.hash) {
    if (replace) history.replaceState(null, '', hash);
    else history.pushState(null, '', hash);
  }
  return apply(next);
}

// ------------------------------------------------------------------------- status
const statusEl = $('status');
function announce(msg) { statusEl.textContent = msg; }

// ------------------------------------------------------------------------- state
const cur = {
  id: null,         // model shown
  summary: null,    // GET /models/{id}
  svgKey: null,     // render query of the drawing shown
  svg: null,        // the <svg> element
  doc: null,        // document.json (lazily)
  docPromise: null,
  loadCtl: null,    // AbortController of the drawing being fetched
  selected: null,   // id of the selected node
  panelKey: null,
  opening: null,    // openModel() of the model shown (settled once its summary is in)
};
let focusAfterLoad = null; // {group: path} | {cluster: path}
let switchView = null;     // {id, x, y, k}: the view to keep when the page moves to model id
let applySeq = 0;

const names = {
  get() { try { return JSON.parse(localStorage.getItem('onnxviz.names') || '{}'); } catch { return {}; } },
  set(id, name) {
    try {
      const m = this.get(); m[id] = name;
      localStorage.setItem('onnxviz.names', JSON.stringify(m));
    } catch { /* storage off */ }
  },
};

function modelTitle(id, summary) {
  const n = names.get()[id];
  if (n) return n;
  if (summary && summary.kind === 'tensor') return (summary.tensor && summary.tensor.name) || `tensor ${shortId(id)}`;
  const m = summary && summary.summary && summary.summary.model;
  if (m && m.graph_name) return m.graph_name;
  return `model ${shortId(id)}`;
}

// ------------------------------------------------------------------------- apply
async function apply(r) {
  const seq = ++applySeq;
  route = r;
  document.body.classList.toggle('diff-mode', !!r.diff);
  if (r.diff) { await showDiff(r); return; }
  if (diffView.key) { diffView.key = null; delete canvas.dataset.diff; clear(canvas); } // left the diff view
  if (!r.id) { showHome(); return; }
  showWorkspace();
  // the model's summary, once (a route of the same model applied while it is still loading,
  // e.g. after quick steps back in history, waits for it too)
  if (cur.id !== r.id) cur.opening = openModel(r.id);
  await cur.opening;
  if (seq !== applySeq || !cur.summary) return; // no summary: openModel says why
  const isTensor = !!(cur.summary && cur.summary.kind === 'tensor');
  showGraphParts(!isTensor);
  if (isTensor) { await showTensorUpload(r, seq); return; }
  const key = renderQuery(r);
  syncOptionsForm();
  renderExpandedChips();
  if (key !== cur.svgKey) {
    const ok = await loadGraph(r, key, seq);
    if (!ok || seq !== applySeq) return;
  }
  await syncSelection(r, seq);
}

function showHome() {
  document.title = 'onnxviz';
  $('home').hidden = false;
  $('workspace').hidden = true;
  $('crumb').hidden = true;
  for (const id of ['search-box', 'options-wrap', 'download-wrap']) $(id).hidden = true;
  cur.id = null; cur.svgKey = null; cur.svg = null; cur.doc = null; cur.docPromise = null;
  if (cur.loadCtl) cur.loadCtl.abort();
  clear($('canvas'));
  minimap.set(null);
  delete canvas.dataset.key;
  delete canvas.dataset.model;
  refreshModels();
}

// A tensor upload (a lone TensorProto) has no graph: its preview takes the graph's place.
function showGraphParts(on) {
  for (const id of ['graph-toolbar', 'viewport', 'search-box', 'options-wrap', 'download-wrap']) $(id).hidden = !on;
  $('tensor-view').hidden = on;
}

async function showTensorUpload(r, seq) {
  hideGraphState();
  closeSide();
  if (cur.tensorShown === r.id) return;
  cur.tensorShown = r.id;
  await renderTensor($('tensor-view'), r.id, '_', () => seq === applySeq || cur.id === r.id);
}

function showWorkspace() {
  $('home').hidden = true;
  $('workspace').hidden = false;
  for (const id of ['search-box', 'options-wrap', 'download-wrap']) $(id).hidden = false;
}

// The diff view: the workspace with the list of changes in the left panel (diff.js).
async function showDiff(r) {
  showWorkspace();
  showGraphParts(true);
  for (const id of ['search-box', 'download-wrap']) $(id).hidden = true;
  if (cur.id !== null || cur.tensorShown) { cur.id = null; cur.summary = null; cur.svg = null; cur.svgKey = null; closeSide(); }
  cur.tensorShown = null;
  $('model-panel-title').textContent = 'Changes';
  $('toggle-model').textContent = 'Changes';
  syncOptionsForm();
  clear($('expanded'));
  await diffView.show(r);
}

async function openModel(id) {
  cur.id = id; cur.summary = null; cur.svgKey = null; cur.svg = null; cur.doc = null; cur.docPromise = null;
  cur.selected = null; cur.panelKey = null; cur.tensorShown = null;
  // moving from a structure to its whole model: the drawing stays until the new one is in
  if (!(switchView && switchView.id === id)) clear($('canvas'));
  minimap.set(null);
  delete canvas.dataset.key;
  delete canvas.dataset.model;
  clear($('model-body')).append(h('p', { class: 'empty', text: 'Loading…' }));
  $('crumb').hidden = false;
  $('crumb-name').textContent = modelTitle(id, null);
  $('crumb-meta').textContent = '';
  closeSide();
  resetSearch();
  try {
    const s = await getJSON(modelUrl(id));
    if (cur.id !== id) return;
    cur.summary = s;
    const title = modelTitle(id, s);
    document.title = `${title} — onnxviz`;
    $('crumb-name').textContent = title;
    $('model-panel-title').textContent = s.kind === 'tensor' ? 'Tensor' : 'Model';
    $('toggle-model').textContent = 'Model';
    if (s.kind === 'tensor') {
      const t = s.tensor || {};
      $('crumb-meta').textContent = `tensor · ${t.dtype} ⟨${(t.dims || []).join('×') || 'scalar'}⟩ · ${fmtBytes(s.size)}`;
      clear($('model-body')).append(tensorUploadPanel(s, { fileName: names.get()[id] }));
      return;
    }
    const sm = (s.summary && s.summary.summary) || {};
    $('crumb-meta').textContent = `${fmtInt(sm.nodes)} nodes · ${fmtBytes(s.size)}`;
    clear($('model-body')).append(modelPanel(s, {
      fileName: names.get()[id], onNode: (node) => goToNode({ node }),
      loadCost: (dims) => getJSON(`${modelUrl(id)}/cost.json${dims ? `?dims=${encodeURIComponent(dims)}` : ''}`),
      dims: route.dims,
      // a binding redraws the boxes' MAC rows with it too (and the URL carries it)
      onBindDims: (dims) => { if (dims === '' || DIMS.test(dims)) navigate({ dims }); },
    }));
  } catch (e) {
    if (cur.id !== id) return;
    clear($('model-body')).append(errorNotice(e));
    showGraphState({
      error: true, title: e.status === 404 ? 'No such model on this server' : 'The model could not be opened', detail: e.message,
      actions: [['Try again', () => { cur.id = null; apply(route); }], ['All models', () => navigate({ id: null })]],
    });
  }
}

function errorNotice(e) {
  return h('div', { class: 'notice error' }, e.message,
    e instanceof ApiError && (e.where() || e.code) ? h('span', { class: 'err-where', text: [e.code, e.where()].filter(Boolean).join(' · ') }) : null);
}

// ------------------------------------------------------------------------- graph
const viewport = $('viewport');
const canvas = $('canvas');
const zoomLevel = $('zoom-level');
let minimap = null;
const pz = new PanZoom(viewport, canvas, (p) => {
  zoomLevel.textContent = `${p.k < 0.1 ? (p.k * 100).toFixed(1) : Math.round(p.k * 100)}%`;
  if (minimap) minimap.update();
});
minimap = new Minimap($('minimap'), pz);
new ResizeObserver(() => minimap.update()).observe(viewport);

let stateTimer = 0;
function showGraphState({ title, detail, error = false, soft = false, spinner = true, actions = [], delay = 0 }) {
  clearTimeout(stateTimer);
  const show = () => {
    const st = $('graph-state');
    st.hidden = false;
    st.classList.toggle('soft', soft);
    $('state-card').classList.toggle('error', error);
    $('state-spinner').hidden = !spinner || error;
    $('state-title').textContent = title;
    const d = clear($('state-detail'));
    if (detail instanceof Node) d.append(detail); else d.textContent = detail || '';
    const a = clear($('state-actions'));
    for (const [label, fn] of actions) a.append(h('button', { type: 'button', class: 'btn btn-plain btn-small', text: label, onclick: fn }));
  };
  if (delay) stateTimer = setTimeout(show, delay); else show();
}
function hideGraphState() { clearTimeout(stateTimer); $('graph-state').hidden = true; }

function graphUrl(ext, key = renderQuery(route)) {
  return `${modelUrl(route.id)}/graph.${ext}${key ? `?${key}` : ''}`;
}

// Fetch and show the drawing for route r; answers true when shown.
async function loadGraph(r, key, seq) {
  if (cur.loadCtl) cur.loadCtl.abort();
  const ctl = new AbortController();
  cur.loadCtl = ctl;
  const switching = !!(switchView && switchView.id === r.id);
  const hadDrawing = !!cur.svg || switching;
  announce('Laying out the graph…');
  showGraphState({
    title: 'Laying out the graph…',
    detail: 'The server draws it with Graphviz; a large model can take a few seconds the first time.',
    soft: hadDrawing, delay: hadDrawing ? 150 : 0,
  });
  const url = `${modelUrl(r.id)}/graph.svg${key ? `?${key}` : ''}`;
  let svg;
  for (let attempt = 0; ; attempt++) {
    try {
      const t0 = performance.now();
      svg = await fetchSvg(url, ctl.signal);
      cur.lastLayoutMs = performance.now() - t0;
      break;
    } catch (e) {
      if (e.name === 'AbortError' || seq !== applySeq) return false;
      if (e instanceof ApiError && e.status === 503 && attempt < 4) {
        const wait = Math.min(30, e.retryAfter || 2);
        showGraphState({ title: 'The server is busy', detail: `Trying again in ${wait} s…` });
        await new Promise((res) => setTimeout(res, wait * 1000));
        if (seq !== applySeq) return false;
        continue;
      }
      graphError(e, r);
      return false;
    }
  }
  if (seq !== applySeq) return false;
  hideGraphState();
  // the same drawing with scopes expanded or collapsed keeps the view; other options
  // (direction, grouping, ...) move everything: fit again
  const optsKey = renderQuery({ ...r, expand: [], unfold: [] });
  const keepView = hadDrawing && cur.id === r.id && !focusAfterLoad && cur.optsKey === optsKey;
  cur.optsKey = optsKey;
  let prev = keepView ? { x: pz.x, y: pz.y, k: pz.k } : null;
  if (switching) { prev = switchView; switchView = null; }
  cur.keptView = switching; // the selection is not brought into view this once
  clear(canvas).append(svg);
  canvas.dataset.model = r.id; // what is drawn (tests and debugging read these)
  canvas.dataset.key = key;
  svg.setAttribute('focusable', 'false');
  svg.setAttribute('aria-hidden', 'true'); // the graph is explored with search and the panel
  cur.svg = svg;
  cur.svgKey = key;
  cur.selected = null;
  const vb = svg.viewBox && svg.viewBox.baseVal;
  const w = parseFloat(svg.getAttribute('width')) || (vb && vb.width) || 100;
  const hgt = parseFloat(svg.getAttribute('height')) || (vb && vb.height) || 100;
  pz.setContent(w, hgt);
  markCollapsible();
  addRunButtons();
  const boxes = svg.getAttribute('data-boxes');
  const nodes = svg.querySelectorAll('g.node').length;
  $('graph-info').textContent = `${fmtInt(boxes ? +boxes : nodes)} boxes${svg.getAttribute('data-group-depth') && svg.getAttribute('data-group-depth') !== '0' ? ` · grouped by scope (depth ${svg.getAttribute('data-group-depth')})` : ''}`;
  // a new view opens at the graph inputs, at a readable scale (unless all of it is)
  const lr = r.opts.rankdir === 'LR';
  const vr = viewport.getBoundingClientRect();
  const start = startBox(svg, lr, vr.width / READABLE, vr.height / READABLE);
  pz.onHome = () => pz.home(start, { lr, animate: true });
  if (prev) pz.set(prev.x, prev.y, prev.k);
  else pz.home(start, { lr });
  const f = focusAfterLoad;
  focusAfterLoad = null;
  if (f) revealGroup(f);
  // the upload that opened this model is over: its card no longer covers the drawing
  if (uploadState.done && !uploadState.following && !uploadCard.classList.contains('error')) hideUploadCard();
  // the minimap's picture once the drawing is on screen (it reads every box)
  minimap.set(null);
  requestAnimationFrame(() => setTimeout(() => { if (cur.svg === svg) minimap.set(svg, w, hgt); }, 0));
  announce(`Graph shown: ${$('graph-info').textContent}.`);
  return true;
}

function graphError(e, r) {
  const actions = [['Try again', () => { cur.svgKey = null; apply(route); }]];
  if (r.opts.group !== 'auto' || r.expand.length) actions.push(['Show the overview', () => navigate({ opts: { group: 'auto' }, expand: [] })]);
  const where = e instanceof ApiError ? [e.code, e.where()].filter(Boolean).join(' · ') : '';
  const hint = {
    layout_timeout: 'The layout took too long. The grouped overview, or fewer expanded scopes, draws faster.',
    too_big: 'The drawing is too big. The grouped overview draws fewer boxes.',
    layout_worker_failed: 'The layout process failed or ran out of memory.',
  }[e.code];
  showGraphState({
    error: true, title: 'The graph could not be drawn',
    detail: h('span', null, e.message, hint ? h('span', { class: 'mono', text: hint }) : null, where ? h('span', { class: 'mono', text: where }) : null),
    actions,
  });
  announce(`The graph could not be drawn: ${e.message}`);
  cur.svgKey = null;
}

// Expanded scopes (clusters listed in the route) can be collapsed from their label.
function markCollapsible() {
  for (const c of cur.svg.querySelectorAll('g.cluster.scope[data-group]')) {
    if (collapseTarget(groupOf(c))) c.classList.add('collapsible');
  }
}

// A run of repeated blocks (g.node.group[data-open-all], "layers.1–47 ×47") opens its first
// member on a click, like a group; its "open all" button (beside the box, moving with the
// drawing) or a Shift+click opens every member in one click: expand=/p/layers.1..47/*.
function addRunButtons() {
  for (const g of cur.svg.querySelectorAll('g.node.group[data-open-all]')) {
    const rect = g.querySelector(':scope > rect');
    if (!rect) continue;
    const n = g.getAttribute('data-members') || '';
    const what = (g.querySelector('title') || {}).textContent || groupOf(g);
    const b = h('button', {
      type: 'button', class: 'run-open-all', text: `open all ${n}`,
      title: `Open every one of the ${n} alike (${what})`, 'aria-label': `Open all ${n} of ${what}`,
      dataset: { for: g.id },
      onclick: (e) => { e.stopPropagation(); openAll(g); },
    });
    // past the stack drawn behind the box (6 units)
    b.style.left = `${+rect.getAttribute('x') + +rect.getAttribute('width') + 10}px`;
    b.style.top = `${+rect.getAttribute('y') + 1}px`;
    canvas.append(b);
  }
}

function openAll(g) {
  const entry = pathAttr(g, 'data-open-all');
  if (!entry || route.expand.includes(entry)) return Promise.resolve();
  focusAfterLoad = { cluster: groupOf(g) };
  announce(`Opening all of ${entry}…`);
  return navigate({ expand: [...route.expand, entry], node: null, value: null, tensor: null });
}

// The expand entry that a click on cluster `path` collapses, or null (an automatic cluster).
function collapseTarget(path) {
  return route.expand.find((p) => p === path || normPath(p) === path) || null;
}
const normPath = (p) => (p.startsWith('/') ? p : `/${p}`);

function revealGroup(f) {
  if (!cur.svg) return;
  if (f.node) { keepNodeAt(f); return; }
  const sel = f.cluster ? `g.cluster[data-group="${CSS.escape(groupAttr(f.cluster))}"]` : `g.node.group[data-group="${CSS.escape(groupAttr(f.group))}"]`;
  const el = cur.svg.querySelector(sel);
  if (!el) return;
  pz.reveal(el, { animate: false });
  flash(el);
}

function flash(el) {
  el.classList.remove('flash');
  void el.getBoundingClientRect();
  el.classList.add('flash');
  setTimeout(() => el.classList.remove('flash'), 2600);
}

// A folded row (text[data-unfold]) opens the bookkeeping chains feeding its node: drawn
// again with unfold= plus that node, which stays where it was on the screen.
function unfoldChain(node) {
  if (!NODE_ID.test(node) || route.unfold.includes(node)) return Promise.resolve();
  const el = nodeEl(node);
  if (el) {
    const b = pz.boxOf(el);
    focusAfterLoad = { node, sx: pz.x + (b.x + b.w / 2) * pz.k, sy: pz.y + (b.y + b.h / 2) * pz.k, k: pz.k };
  }
  announce(`Drawing the bookkeeping behind ${nameOf(node) || node}…`);
  return navigate({ unfold: [...route.unfold, node], node, value: null, tensor: null });
}

function keepNodeAt(f) {
  const el = nodeEl(f.node);
  if (!el || f.sx === undefined) return;
  const b = pz.boxOf(el);
  pz.stop();
  pz.set(f.sx - (b.x + b.w / 2) * f.k, f.sy - (b.y + b.h / 2) * f.k, f.k);
  flash(el);
}

function expandGroup(path) {
  if (route.expand.includes(path)) return Promise.resolve();
  focusAfterLoad = { cluster: path };
  announce(`Expanding ${path}…`);
  return navigate({ expand: [...route.expand, path], node: null, value: null, tensor: null });
}

function collapseGroup(path) {
  const p = normPath(path);
  // a range ("/m/layers.0..99") also closes what was opened among its members
  const span = spanOf(p);
  focusAfterLoad = { group: p };
  announce(`Collapsing ${p}…`);
  return navigate({ expand: route.expand.filter((x) => normPath(x) !== p && !normPath(x).startsWith(`${p}/`) && !(span && inSpan(span, normPath(x)))) });
}

function renderExpandedChips() {
  const box = clear($('expanded'));
  if (route.unfold.length) {
    box.append(h('span', { class: 'chip-label', text: 'Bookkeeping drawn for:' }));
    for (const id of route.unfold) {
      box.append(h('span', { class: 'chip', title: id },
        h('span', { text: nameOf(id) || id }),
        h('button', { type: 'button', 'aria-label': `Fold the bookkeeping of ${id} again`, title: 'Fold again', text: '×', onclick: () => navigate({ unfold: route.unfold.filter((x) => x !== id) }) })));
    }
  }
  if (!route.expand.length) return;
  box.append(h('span', { class: 'chip-label', text: 'Expanded:' }));
  for (const p of route.expand) {
    box.append(h('span', { class: 'chip', title: p },
      h('span', { text: p }),
      h('button', { type: 'button', 'aria-label': `Collapse ${p}`, title: 'Collapse', text: '×', onclick: () => collapseGroup(p) })));
  }
  if (route.expand.length > 1) {
    box.append(h('button', { type: 'button', class: 'btn btn-plain btn-small', text: 'Collapse all', onclick: () => navigate({ expand: [] }) }));
  }
}

// ------------------------------------------------------------------------- selection
function nodeEl(id) {
  return cur.svg ? cur.svg.querySelector(`g.node[data-node="${CSS.escape(id)}"]`) : null;
}

function clearHighlights(cls) {
  if (!cur.svg) return;
  for (const e of cur.svg.querySelectorAll(`.${cls}`)) e.classList.remove(cls);
}

function highlightNode(el) {
  clearHighlights('selected');
  clearHighlights('incident');
  if (!el) return;
  el.classList.add('selected');
  const id = el.id;
  if (!id) return;
  for (const e of cur.svg.querySelectorAll(`g.edge[data-from="${CSS.escape(id)}"], g.edge[data-to="${CSS.escape(id)}"]`)) e.classList.add('incident');
}

function inView(el) {
  pz.flush();
  const r = el.getBoundingClientRect();
  const v = viewport.getBoundingClientRect();
  return r.left >= v.left && r.right <= v.right && r.top >= v.top && r.bottom <= v.bottom && r.width > 6;
}

// The node panel's button for folded bookkeeping feeding the node, as the drawing shown
// has it (the keyboard's way to what a click on the row does).
function syncUnfoldButton(r) {
  const old = $('unfold-row');
  if (old) old.remove();
  if (side.hidden || !r.node || r.tensor || !cur.svg ||
      !cur.svg.querySelector(`text[data-unfold="${CSS.escape(r.node)}"]`)) return;
  sideBody.append(h('p', { id: 'unfold-row' }, h('button', {
    type: 'button', class: 'btn btn-plain btn-small', id: 'btn-unfold',
    text: 'Draw the bookkeeping that feeds it', onclick: () => unfoldChain(r.node),
  })));
}

async function syncSelection(r, seq) {
  const key = `${r.id}|${r.node}|${r.value}|${r.tensor}|${r.dequantize}`;
  const el = r.node ? nodeEl(r.node) : r.value ? valueEl(r.value) : null;
  highlightNode(el);
  if (el && !inView(el) && !cur.keptView) pz.reveal(el);
  cur.keptView = false;
  if (key === cur.panelKey) { syncUnfoldButton(r); return; }
  cur.panelKey = key;
  if (r.tensor) await showTensor(r, seq);
  else if (r.node) await showNode(r, seq);
  else if (r.value) await showValue(r, seq);
  else closeSide();
}

function valueEl(v) {
  return cur.svg ? cur.svg.querySelector(`g.node[data-value="${CSS.escape(v)}"]:not([data-kind^="stub"])`) : null;
}

function nameOf(id) {
  const el = nodeEl(id);
  const t = el && el.querySelector('title');
  if (t && t.textContent) return t.textContent;
  if (cur.doc) {
    const n = cur.doc.nodeById.get(id);
    if (n) return n.name || `${n.op_type} ${id}`;
  }
  return null;
}

// The full document, once per model (names of nodes not drawn, values of terminals).
function loadDoc() {
  if (cur.docPromise) return cur.docPromise;
  const id = cur.id;
  cur.docPromise = getJSON(`${modelUrl(id)}/document.json`).then((d) => {
    d.nodeById = new Map((d.nodes || []).map((n) => [n.id, n]));
    if (cur.id === id) cur.doc = d;
    return d;
  });
  cur.docPromise.catch(() => { if (cur.id === id) cur.docPromise = null; });
  return cur.docPromise;
}

const side = $('side-panel');
const sideBody = $('side-body');

function openSide(title, { back = false } = {}) {
  side.hidden = false;
  $('side-title').textContent = title;
  $('side-back').hidden = !back;
  return clear(sideBody);
}

function closeSide() {
  side.hidden = true;
  clear(sideBody);
  cur.panelKey = null;
}

const panelCtx = () => ({
  nameOf,
  onNode: (id) => goToNode({ node: id }),
  onTensor: (ref, _label, { dequantize = false } = {}) => navigate({ tensor: ref, dequantize }),
  onScope: (scope) => showScope(scope),
});

async function showNode(r, seq) {
  const body = openSide('Node');
  body.append(h('p', { class: 'empty', text: 'Loading…' }));
  try {
    const n = await getJSON(`${modelUrl(r.id)}/nodes/${encodeURIComponent(r.node)}`);
    if (seq !== applySeq) return;
    $('side-title').textContent = `${n.op_type} node`;
    clear(sideBody).append(nodePanel(n, { ...panelCtx(), drawn: !!nodeEl(r.node), structure: structures.has(r.id) }));
    syncUnfoldButton(r);
    announce(`Node ${n.name || n.id} (${n.op_type}).`);
  } catch (e) {
    if (seq !== applySeq) return;
    clear(sideBody).append(errorNotice(e));
  }
}

async function showValue(r, seq) {
  const body = openSide('Value');
  body.append(h('p', { class: 'empty', text: 'Loading…' }));
  try {
    const d = await loadDoc();
    if (seq !== applySeq) return;
    const v = d.values[+r.value];
    if (!v) throw new Error('no such value');
    $('side-title').textContent = v.graph_input ? 'Graph input' : v.graph_output ? 'Graph output' : 'Value';
    clear(sideBody).append(valuePanel(v, panelCtx()));
  } catch (e) {
    if (seq !== applySeq) return;
    clear(sideBody).append(errorNotice(e));
  }
}

const tensorUrl = (id, ref, q) => `${modelUrl(id)}/tensors/${encodeURIComponent(ref)}?${q}`;

// The tensor preview of `ref` of model `id` into `box` (the side panel, or the main area
// for a tensor upload); with `dq`, its dequantized values (docs/quant.md).
async function renderTensor(box, id, ref, isCurrent, dq = false) {
  clear(box).append(h('p', { class: 'empty', text: 'Reading the values…' }));
  announce('Reading the tensor values…');
  const d = dq ? '&dequantize=1' : '';
  try {
    const t = await getJSON(tensorUrl(id, ref, `values=256&bins=48${d}`));
    if (!isCurrent()) return null;
    const safe = (t.name || 'tensor').replace(/[^\w.-]+/g, '_').slice(0, 80) + (dq ? '_dequantized' : '');
    clear(box).append(tensorPanel(t, {
      label: ref,
      onMore: (offset) => getJSON(tensorUrl(id, ref, `values=1024&offset=${offset}&stats=0${d}`)),
      npyUrl: async () => {
        announce(`Downloading ${safe}.npy…`);
        try { downloadBlob(await getBlob(tensorUrl(id, ref, `format=npy${d}`)), `${safe}.npy`); announce(`Downloaded ${safe}.npy.`); } catch (e) { announce(`The download failed: ${e.message}`); }
      },
      onDequantize: id === route.id && ref === route.tensor ? (on) => navigate({ dequantize: on }) : null,
      onNode: (n) => goToNode({ node: n }),
    }));
    announce(`Tensor ${t.name || ref}: ${t.dtype}, ${fmtInt(t.count)} values.`);
    return t;
  } catch (e) {
    if (!isCurrent()) return null;
    const st = structures.get(id);
    if (st && e.code === 'external_data_missing') {
      clear(box).append(h('div', { class: 'notice', id: 'weights-missing' },
        h('strong', { text: 'Weights not uploaded' }),
        h('span', { text: ` — this is the structure of ${st.name} (${fmtBytes(st.bytes)} of ${fmtBytes(st.size)}); ${st.state || 'its weights are not on the server'}.` })));
      announce('Weights not uploaded.');
      return null;
    }
    clear(box).append(errorNotice(e));
    if (e.code === 'external_data_missing') {
      box.append(h('p', { class: 'empty', text: 'The model was uploaded without this data file. Upload the model again together with its data files (select or drop them all at once).' }));
    }
    announce(`The tensor could not be read: ${e.message}`);
    return null;
  }
}

async function showTensor(r, seq) {
  openSide('Tensor', { back: !!(r.node || r.value) });
  const t = await renderTensor(sideBody, r.id, r.tensor, () => seq === applySeq, r.dequantize);
  if (t && seq === applySeq) $('side-title').textContent = `Tensor ${t.name || r.tensor}`;
}

// Subgraph scope from a GRAPH attribute: expand subgraphs and show its cluster.
function showScope(scope) {
  focusAfterLoad = null;
  const go = () => {
    const c = cur.svg && cur.svg.querySelector(`g.cluster[data-scope="${CSS.escape(groupAttr(scope))}"]`);
    if (c) { pz.reveal(c); flash(c); }
  };
  if (route.opts.subgraphs !== 'expand') navigate({ opts: { subgraphs: 'expand' } }).then(go);
  else go();
}

// Go to a node, expanding the collapsed groups that hold it (by its name's scope path),
// and in subgraphs drawn collapsed, expanding subgraphs.  hit: {node, name?, scope?}.
async function goToNode(hit) {
  for (let i = 0; i < 6; i++) {
    if (nodeEl(hit.node)) break;
    if (!cur.svg) break;
    let name = hit.name;
    if (name === undefined) {
      const d = await loadDoc().catch(() => null);
      const n = d && d.nodeById.get(hit.node);
      name = n ? n.name : '';
      hit = { ...hit, name, scope: n ? n.scope : '' };
    }
    const chain = groupChain(name || '');
    let drawn = chain.findIndex((p) => cur.svg.querySelector(`g.node.group[data-group="${CSS.escape(groupAttr(p))}"]`));
    // in a run of repeats or a range, the box is named after another scope: open from the
    // first scope of the chain that is not an open cluster
    if (drawn < 0 && !nodeEl(hit.node)) drawn = chain.findIndex((p) => !cur.svg.querySelector(`g.cluster[data-group="${CSS.escape(groupAttr(p))}"]`));
    if (drawn >= 0) {
      const add = chain.slice(drawn).filter((p) => !route.expand.includes(p));
      announce(`Expanding ${chain[drawn]} to show the node…`);
      await navigate({ expand: [...route.expand, ...add], node: hit.node, value: null, tensor: null });
      continue;
    }
    if (hit.scope && route.opts.subgraphs !== 'expand') {
      await navigate({ opts: { subgraphs: 'expand' }, node: hit.node, value: null, tensor: null });
      continue;
    }
    // bookkeeping folded into a row: draw it (and the chain behind it)
    const d = await loadDoc().catch(() => null);
    const n = d && d.nodeById.get(hit.node);
    if (n && n.bookkeeping && route.opts.arith !== 'nodes' && !route.unfold.includes(hit.node)) {
      announce('Drawing the bookkeeping node…');
      await navigate({ unfold: [...route.unfold, hit.node], node: hit.node, value: null, tensor: null });
      continue;
    }
    break;
  }
  await navigate({ node: hit.node, value: null, tensor: null });
  const el = nodeEl(hit.node);
  if (el) { pz.reveal(el); flash(el); }
}

// "/encoder/layers.3/self_attn/MatMul" -> ["/encoder", "/encoder/layers.3", "/encoder/layers.3/self_attn"]
function groupChain(name) {
  const parts = name.split('/').filter(Boolean);
  parts.pop();
  const out = [];
  let p = '';
  for (const c of parts.slice(0, 16)) { p += `/${c}`; out.push(p); }
  return out;
}

// ------------------------------------------------------------------------- graph events
viewport.addEventListener('click', (e) => {
  if (route.diff && !pz.dragged) { /* the diff view: a box selects its change */
    const dg = e.target.closest && e.target.closest('g.node');
    if (dg) diffView.onBoxClick(dg);
    return;
  }
  if (pz.dragged || !cur.svg) return;
  const t = e.target;
  const fold = t.closest && t.closest('text[data-unfold]');
  if (fold) { unfoldChain(fold.getAttribute('data-unfold')); return; }
  const g = t.closest && t.closest('g.node, g.cluster');
  if (!g) return;
  if (g.classList.contains('cluster')) {
    const path = groupOf(g);
    const target = path && collapseTarget(path);
    // the label (or the frame) of an expanded scope collapses it
    if (target && (t.localName === 'text' || t.localName === 'rect')) collapseGroup(target);
    return;
  }
  const kind = g.getAttribute('data-kind');
  if (kind === 'group' && e.shiftKey && g.hasAttribute('data-open-all')) { openAll(g); return; }
  if (kind === 'group') { expandGroup(groupOf(g)); return; }
  if (kind === 'stub-in' || kind === 'stub-out') { jumpFromStub(g); return; }
  const node = g.getAttribute('data-node');
  if (node) { navigate({ node, value: null, tensor: null }); return; }
  const value = g.getAttribute('data-value');
  if (value) navigate({ node: null, value, tensor: null });
});

// The view moves by its transform only: undo any scrolling of the clipped viewport (a
// find-in-page or a focus change would otherwise shift it under the transform).
viewport.addEventListener('scroll', () => { viewport.scrollTop = 0; viewport.scrollLeft = 0; });
document.querySelector('.skip-link').addEventListener('click', (e) => {
  e.preventDefault();
  (route.id ? viewport : $('dropzone')).focus();
});

viewport.addEventListener('dblclick', (e) => {
  if (!e.target.closest || !e.target.closest('g.node')) pz.zoomBy(1.6, e.clientX - viewport.getBoundingClientRect().left, e.clientY - viewport.getBoundingClientRect().top, true);
});

// Stubs: hovering highlights the other end(s); a click jumps there.
const stubTip = $('stub-tip');
let hoverStub = null;
const stubCycle = new WeakMap();

function stubTargets(stub) {
  const peers = stubPeers(cur.svg, stub);
  const producer = cur.svg.querySelector(`[id="${CSS.escape(stub.getAttribute('data-peer') || '')}"]`);
  return { peers, producer };
}

function showTip(e, text) {
  const vr = viewport.getBoundingClientRect();
  const gr = $('graph-area').getBoundingClientRect();
  stubTip.textContent = text;
  stubTip.style.left = `${Math.max(0, Math.min(e.clientX - gr.left + 14, vr.width - 320))}px`;
  stubTip.style.top = `${e.clientY - gr.top + 16}px`;
  stubTip.hidden = false;
}

viewport.addEventListener('mouseover', (e) => {
  const t = e.target;
  const g = t.closest && t.closest('g.node[data-kind^="stub"]');
  if (!g) {
    const c = t.closest && t.closest('g.cluster.collapsible');
    if (c && (t.localName === 'text' || t.localName === 'rect')) {
      showTip(e, `Click to collapse ${groupOf(c)}`);
      hoverStub = null;
      clearHighlights('peer');
      return;
    }
  }
  if (g === hoverStub && g) return;
  clearHighlights('peer');
  hoverStub = g;
  if (!g) { stubTip.hidden = true; return; }
  const { peers, producer } = stubTargets(g);
  const out = g.getAttribute('data-kind') === 'stub-out';
  const lit = [...peers];
  if (producer) lit.push(producer);
  for (const p of lit) p.classList.add('peer');
  // the consumers fed by the incoming stubs
  for (const si of out ? peers : [g]) {
    for (const ed of cur.svg.querySelectorAll(`g.edge[data-from="${CSS.escape(si.id)}"]`)) {
      ed.classList.add('peer');
      const c = cur.svg.querySelector(`[id="${CSS.escape(ed.getAttribute('data-to'))}"]`);
      if (c) c.classList.add('peer');
    }
  }
  const valueName = (g.querySelector('title') || {}).textContent || 'value';
  const prodName = producer ? ((producer.querySelector('title') || {}).textContent || producer.id) : '?';
  showTip(e, out
    ? `${valueName} continues further on (${peers.length} place${peers.length === 1 ? '' : 's'}). Click to jump there.`
    : `${valueName} comes from ${prodName}. Click to jump there.`);
});
viewport.addEventListener('mouseleave', () => { clearHighlights('peer'); hoverStub = null; stubTip.hidden = true; });

function jumpFromStub(g) {
  const { peers, producer } = stubTargets(g);
  let target;
  if (g.getAttribute('data-kind') === 'stub-out') {
    if (!peers.length) return;
    const i = ((stubCycle.get(g) ?? -1) + 1) % peers.length;
    stubCycle.set(g, i);
    target = peers[i];
  } else {
    target = producer || peers[0];
  }
  if (!target) return;
  stubTip.hidden = true;
  pz.reveal(target, { minK: Math.max(pz.k, 0.7) });
  flash(target);
  announce('Jumped to the other end of the edge.');
}

// ------------------------------------------------------------------------- toolbar
$('zoom-in').addEventListener('click', () => pz.zoomBy(1.25, undefined, undefined, true));
$('zoom-out').addEventListener('click', () => pz.zoomBy(0.8, undefined, undefined, true));
$('zoom-fit').addEventListener('click', () => pz.fit(true));
$('zoom-100').addEventListener('click', () => pz.actualSize());
// The model panel can be folded away for room (remembered in this browser).
function setModelPanel(on) {
  $('model-panel').hidden = !on;
  $('toggle-model').setAttribute('aria-pressed', String(on));
  try { localStorage.setItem('onnxviz.modelPanel', on ? '1' : '0'); } catch { /* storage off */ }
}
$('toggle-model').addEventListener('click', () => setModelPanel($('model-panel').hidden));
try { if (localStorage.getItem('onnxviz.modelPanel') === '0') setModelPanel(false); } catch { /* storage off */ }
$('side-close').addEventListener('click', () => navigate({ node: null, value: null, tensor: null }));
$('side-back').addEventListener('click', () => navigate({ tensor: null }));

// ------------------------------------------------------------------------- options
const optForm = $('options');

function syncOptionsForm() {
  for (const k of ['rankdir', 'initializers', 'subgraphs', 'arith', 'quant']) {
    for (const inp of optForm.querySelectorAll(`input[name="${k}"]`)) inp.checked = inp.value === route.opts[k];
  }
  for (const inp of optForm.querySelectorAll('input[name="group"]')) inp.checked = inp.value === (route.opts.group === 'none' ? 'none' : 'auto');
  optForm.querySelector('input[name="shapes"]').checked = route.opts.shapes === 'on';
  optForm.querySelector('select[name="attrs"]').value = route.opts.attrs;
}

optForm.addEventListener('change', (e) => {
  const t = e.target;
  const opts = {};
  if (t.name === 'shapes') opts.shapes = t.checked ? 'on' : 'off';
  else if (t.name in DEFAULTS) opts[t.name] = t.value;
  const patch = { opts };
  if (t.name === 'group') patch.expand = [];
  if (t.name === 'arith') patch.unfold = [];
  focusAfterLoad = null;
  navigate(patch);
});
$('btn-reset-options').addEventListener('click', () => navigate({ opts: { ...DEFAULTS }, expand: [], unfold: [] }));

// Menus (View, Download): one open at a time, Escape or a click outside closes.
const menus = [['btn-options', 'options'], ['btn-download', 'downloads']];
function closeMenus(except) {
  for (const [b, m] of menus) {
    if (m === except) continue;
    $(m).hidden = true;
    $(b).setAttribute('aria-expanded', 'false');
  }
}
for (const [b, m] of menus) {
  $(b).addEventListener('click', () => {
    const open = $(m).hidden;
    closeMenus(m);
    $(m).hidden = !open;
    $(b).setAttribute('aria-expanded', String(open));
    if (open) { const first = $(m).querySelector('input:checked, button, input'); if (first) first.focus(); }
  });
}
document.addEventListener('pointerdown', (e) => {
  if (!e.target.closest('.menu-wrap')) closeMenus(null);
  if (!e.target.closest('.search')) closeSearch();
});

// ------------------------------------------------------------------------- downloads
function baseName() {
  const n = modelTitle(route.id, cur.summary).replace(/\.onnx$/i, '').replace(/[^\w.-]+/g, '_').slice(0, 80);
  return n || shortId(route.id);
}

$('downloads').addEventListener('click', async (e) => {
  const b = e.target.closest('button[data-download]');
  if (!b) return;
  const kind = b.dataset.download;
  const urls = {
    svg: [graphUrl('svg'), `${baseName()}.svg`],
    dot: [graphUrl('dot'), `${baseName()}.dot`],
    json: [graphUrl('json'), `${baseName()}.layout.json`],
    document: [`${modelUrl(route.id)}/document.json`, `${baseName()}.json`],
    onnx: [`${modelUrl(route.id)}/model.onnx`, `${baseName()}.onnx`],
  };
  const [url, file] = urls[kind];
  closeMenus(null);
  announce(`Downloading ${file}…`);
  try {
    downloadBlob(await getBlob(url), file);
    announce(`Downloaded ${file}.`);
  } catch (err) {
    announce(`The download failed: ${err.message}`);
  }
});

// ------------------------------------------------------------------------- search
const searchInput = $('search');
const searchPopup = $('search-popup');
const searchList = $('search-results');
let searchHits = [];
let searchActive = -1;
let searchCtl = null;

function closeSearch() {
  searchPopup.hidden = true;
  searchInput.setAttribute('aria-expanded', 'false');
  searchInput.removeAttribute('aria-activedescendant');
  clearHighlights('hit');
}

function resetSearch() {
  if (searchCtl) searchCtl.abort();
  runSearch.cancel();
  searchInput.value = '';
  searchHits = [];
  searchActive = -1;
  clear(searchList);
  delete searchList.dataset.query;
  closeSearch();
}

function markText(text, q) {
  const i = text.toLowerCase().indexOf(q.toLowerCase());
  if (i < 0 || !q) return [text];
  return [text.slice(0, i), h('mark', { text: text.slice(i, i + q.length) }), text.slice(i + q.length)];
}

const runSearch = debounce(async () => {
  const q = searchInput.value.trim();
  if (searchCtl) searchCtl.abort();
  if (!q || !route.id) { closeSearch(); return; }
  searchCtl = new AbortController();
  try {
    const res = await getJSON(`${modelUrl(route.id)}/search?q=${encodeURIComponent(q)}&limit=50`, { signal: searchCtl.signal });
    if (searchInput.value.trim() !== q) return;
    searchHits = res.hits || [];
    searchActive = searchHits.length ? 0 : -1;
    $('search-summary').textContent = res.total === 0 ? `No match for “${q}”`
      : `${fmtInt(res.total)} match${res.total === 1 ? '' : 'es'}${res.total > searchHits.length ? ` (first ${searchHits.length})` : ''} — ↑↓ to choose, Enter to go`;
    clear(searchList);
    searchHits.forEach((hit, i) => {
      searchList.append(h('li', {
        id: `hit-${i}`, role: 'option', 'aria-selected': String(i === searchActive),
        onmousedown: (ev) => { ev.preventDefault(); chooseHit(i); },
      },
      h('span', { class: 'hit-op', text: hit.op_type }),
      h('span', { class: 'hit-name' }, markText(hit.name || hit.node, hit.match === 'name' ? q : '')),
      hit.match !== 'name' ? h('span', { class: 'hit-text' }, `${hit.match}: `, markText(hit.text || '', q)) : null));
    });
    searchList.dataset.query = q;
    searchPopup.hidden = false;
    searchInput.setAttribute('aria-expanded', 'true');
    updateActive();
    // mark the hits drawn in this view
    clearHighlights('hit');
    for (const hit of searchHits) { const el = nodeEl(hit.node); if (el) el.classList.add('hit'); }
    announce(`${fmtInt(res.total)} search results.`);
  } catch (e) {
    if (e.name === 'AbortError') return;
    $('search-summary').textContent = e.message;
    clear(searchList);
    searchPopup.hidden = false;
  }
}, 160);

function updateActive() {
  [...searchList.children].forEach((li, i) => li.setAttribute('aria-selected', String(i === searchActive)));
  if (searchActive >= 0) {
    searchInput.setAttribute('aria-activedescendant', `hit-${searchActive}`);
    const li = searchList.children[searchActive];
    if (li) li.scrollIntoView({ block: 'nearest' });
  }
}

async function chooseHit(i) {
  const hit = searchHits[i];
  if (!hit) return;
  closeSearch();
  await goToNode(hit);
}

searchInput.addEventListener('input', runSearch);
searchInput.addEventListener('focus', () => { if (searchHits.length && searchInput.value.trim()) { searchPopup.hidden = false; searchInput.setAttribute('aria-expanded', 'true'); } });
searchInput.addEventListener('keydown', (e) => {
  if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
    if (!searchHits.length) return;
    e.preventDefault();
    searchActive = (searchActive + (e.key === 'ArrowDown' ? 1 : -1) + searchHits.length) % searchHits.length;
    searchPopup.hidden = false;
    updateActive();
  } else if (e.key === 'Enter') {
    e.preventDefault();
    runSearch.cancel();
    if (searchActive >= 0 && !searchPopup.hidden) chooseHit(searchActive);
    else runSearch();
  } else if (e.key === 'Escape') {
    e.stopPropagation();
    if (!searchPopup.hidden) closeSearch(); else searchInput.blur();
  }
});

// ------------------------------------------------------------------------- keyboard
document.addEventListener('keydown', (e) => {
  const typing = e.target.closest && e.target.closest('input, textarea, select, [contenteditable]');
  if (e.key === '/' && !typing && !$('search-box').hidden) {
    e.preventDefault();
    searchInput.focus();
    searchInput.select();
  } else if (e.key === 'Escape') {
    if (!$('options').hidden || !$('downloads').hidden) { closeMenus(null); return; }
    if (!searchPopup.hidden) { closeSearch(); return; }
    if (!$('upload-card').hidden && uploadState.done) { hideUploadCard(); return; }
    if (!side.hidden) {
      if (route.tensor && (route.node || route.value)) navigate({ tensor: null });
      else navigate({ node: null, value: null, tensor: null });
      viewport.focus();
    }
  } else if (!typing && e.target === document.body && cur.svg && ['+', '=', '-', '0'].includes(e.key)) {
    viewport.focus();
    viewport.dispatchEvent(new KeyboardEvent('keydown', { key: e.key, bubbles: true }));
  }
});

// ------------------------------------------------------------------------- upload
const fileInput = $('file-input');
const uploadCard = $('upload-card');
const uploadState = { abort: null, done: true, files: null, following: false };

$('btn-upload').addEventListener('click', () => fileInput.click());
$('dropzone').addEventListener('click', () => fileInput.click());
$('dropzone').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); fileInput.click(); }
});
fileInput.addEventListener('change', () => {
  const files = [...fileInput.files];
  fileInput.value = '';
  uploadFiles(files);
});

// Drag and drop anywhere on the window.
let dragDepth = 0;
const hasFiles = (e) => e.dataTransfer && [...e.dataTransfer.types].includes('Files');
window.addEventListener('dragenter', (e) => {
  if (!hasFiles(e)) return;
  e.preventDefault();
  dragDepth++;
  $('drop-overlay').hidden = false;
  $('dropzone').classList.add('over');
});
window.addEventListener('dragover', (e) => { if (hasFiles(e)) { e.preventDefault(); e.dataTransfer.dropEffect = 'copy'; } });
window.addEventListener('dragleave', (e) => {
  if (!hasFiles(e)) return;
  if (--dragDepth <= 0) { dragDepth = 0; $('drop-overlay').hidden = true; $('dropzone').classList.remove('over'); }
});
window.addEventListener('drop', (e) => {
  if (!hasFiles(e)) return;
  e.preventDefault();
  dragDepth = 0;
  $('drop-overlay').hidden = true;
  $('dropzone').classList.remove('over');
  if (e.target.closest && e.target.closest('#compare-drop')) { compare.files(e.dataTransfer.files); return; }
  uploadFiles([...e.dataTransfer.files]);
});

$('upload-cancel').addEventListener('click', () => {
  if (uploadState.abort && (!uploadState.done || uploadState.following)) uploadState.abort();
  else hideUploadCard();
});
$('upload-token').addEventListener('submit', (e) => {
  e.preventDefault();
  setToken($('token-input').value.trim());
  $('token-input').value = '';
  $('upload-token').hidden = true;
  if (uploadState.files) uploadFiles(uploadState.files);
});

function hideUploadCard() { uploadCard.hidden = true; }

function setUploadDetail(...parts) { clear($('upload-detail')).append(...parts.filter(Boolean)); }

// Split a selection into models (.onnx) and data files (external data, sent with each
// model); a lone file of another kind (a TensorProto .pb) is uploaded as it is.
async function uploadFiles(files) {
  if (!files.length || !uploadState.done) return;
  if (uploadState.following && uploadState.abort) uploadState.abort(); // a new upload ends the last one's weights
  let models = files.filter((f) => /\.onnx$/i.test(f.name));
  if (!models.length) models = files.length === 1 ? files : [];
  const extra = files.filter((f) => !models.includes(f));
  uploadState.files = files;
  uploadCard.hidden = false;
  uploadCard.classList.remove('error', 'following');
  for (const k of ['structureBytes', 'structureId', 'fileBytes', 'weights', 'toGraph', 'walkMs', 'hashMs']) delete uploadCard.dataset[k];
  $('upload-token').hidden = true;
  if (!models.length) {
    uploadCard.classList.add('error');
    $('upload-name').textContent = `${files.length} files`;
    setUploadDetail(h('span', { class: 'err-title', text: 'No .onnx file among them' }), 'Choose the model file (.onnx) together with its external data files.');
    return;
  }
  const extraNote = extra.length
    ? h('span', { class: 'note-ok', text: `With ${extra.length} data file${extra.length === 1 ? '' : 's'}: ${extra.map(dataLocation).join(', ')}` })
    : null;
  let last = null;
  // one .onnx alone: its structure first (docs/web.md)
  if (models.length === 1 && !extra.length && /\.onnx$/i.test(models[0].name) && typeof Worker !== 'undefined' && structureFirstOn()) {
    await structureFirst(models[0]);
    return;
  }
  for (const [i, f] of models.entries()) {
    const res = await uploadOne(f, extra, models.length > 1 ? `(${i + 1} of ${models.length}) ` : '', extraNote);
    if (!res) return;
    last = res;
  }
  if (last) openUploaded(last, extraNote);
}

function openUploaded(res, note) {
  setUploadDetail(`${res.status === 201 ? 'Stored' : 'Already stored'} · opening it…`, note);
  // the card closes once the graph is drawn (loadGraph), or now if it already was
  return navigate({ id: res.body.id, opts: { ...DEFAULTS }, expand: [], unfold: [], node: null, value: null, tensor: null }).then(() => {
    if (uploadState.done && !uploadState.following && !uploadCard.classList.contains('error')) hideUploadCard();
  });
}

// Off in this browser with localStorage['onnxviz.structureFirst'] = 'off' (the bench's
// anchor, the whole file as before).
function structureFirstOn() {
  try { return localStorage.getItem('onnxviz.structureFirst') !== 'off'; } catch { return true; }
}

// Structure first (issue 23): the worker cuts the weights out, the structure goes up and
// is drawn; then the file's SHA-256 asks the server whether it holds the whole model
// (HEAD), and otherwise the weights follow (weights.js).  Either way the page then moves
// to the whole model's id and keeps the view.  A file the walk cannot read, and a
// structure the server refuses, go up as they are: the server's message names the file's
// own bytes.
async function structureFirst(file) {
  const t0 = performance.now();
  $('upload-name').textContent = file.name;
  $('upload-progress').hidden = true;
  uploadState.done = false;
  setUploadDetail('Reading the structure…');
  announce(`Reading the structure of ${file.name}…`);
  const sw = structureWorker(file);
  let s;
  try { s = await sw.read(); } catch (e) { s = { bytes: null, reason: e.message }; }
  if (!s.bytes) {
    sw.close();
    uploadCard.dataset.structureBytes = String(file.size);
    const res = await uploadOne(file, [], '', null);
    if (res) openUploaded(res, null);
    return;
  }
  const structure = new File([s.bytes], file.name, { type: 'application/octet-stream' });
  uploadCard.dataset.structureBytes = String(structure.size);
  uploadCard.dataset.fileBytes = String(file.size);
  uploadCard.dataset.walkMs = String(Math.round(s.ms));
  const sizes = () => h('span', { class: 'note-ok', id: 'structure-sizes', text: `Structure ${fmtBytes(structure.size)} of ${fmtBytes(file.size)} (read in ${Math.round(s.ms)} ms)` });
  const res = await uploadOne(structure, [], '', sizes(), { refused: () => 'refused' });
  if (res === 'refused') { // the server judges the file itself
    sw.close();
    uploadCard.dataset.structureBytes = String(file.size);
    const whole = await uploadOne(file, [], '', null);
    if (whole) openUploaded(whole, null);
    return;
  }
  if (!res) { sw.close(); return; }
  const sid = res.body.id;
  uploadCard.dataset.structureId = sid;
  const info = { name: file.name, size: file.size, bytes: structure.size, state: 'checking whether the server holds them', full: null, toGraph: 0 };
  structures.set(sid, info);
  uploadState.following = true;
  uploadCard.classList.add('following');
  uploadCard.dataset.weights = 'checking';
  const state = (text, step) => {
    info.state = text;
    if (step) uploadCard.dataset.weights = step;
    if (!uploadCard.hidden && uploadState.following) setUploadDetail(sizes(), h('span', { id: 'weights-state', text: `Weights: ${text}` }));
    const m = document.getElementById('weights-missing');
    if (m && route.id === sid) m.lastChild.textContent = ` — this is the structure of ${info.name} (${fmtBytes(info.bytes)} of ${fmtBytes(info.size)}); ${text}.`;
  };
  openUploaded(res, sizes()).then(() => { info.toGraph = performance.now() - t0; uploadCard.dataset.toGraph = String(Math.round(info.toGraph)); });
  let abort = () => sw.close();
  uploadState.abort = () => abort();
  const done = (text, step) => {
    state(text, step);
    uploadState.following = false;
    uploadCard.classList.remove('following');
    $('upload-cancel').setAttribute('aria-label', 'Close');
  };
  try {
    const t1 = performance.now();
    const hex = await sw.sha256((hashed, size) => state(`hashing the file · ${Math.floor((100 * hashed) / size)}%`));
    uploadCard.dataset.hashMs = String(Math.round(performance.now() - t1));
    sw.close();
    info.sha256 = hex;
    if (await serverHas(hex)) {
      done('the server already holds this model: nothing more is sent', 'held');
    } else {
      const t2 = performance.now();
      const w = sendWeights({
        file, structure: s, sha256: hex,
        onProgress: (loaded, total) => {
          const bar = $('upload-progress'); // the bar follows the weights now
          bar.hidden = false;
          bar.value = total ? (100 * loaded) / total : 0;
          const secs = (performance.now() - t2) / 1000;
          state(`sending · ${fmtBytes(loaded)} of ${fmtBytes(total)} · ${Math.floor((100 * loaded) / total)}%${secs > 0.3 ? ` · ${fmtBytes(loaded / secs)}/s` : ''}`, 'sending');
        },
      });
      abort = w.abort;
      const id = await w.promise;
      if (id !== hex) throw new Error(`the server stored the file as ${shortId(id)}, not ${shortId(hex)}`);
      done('sent: the page now shows the whole model', 'sent');
    }
    info.full = hex;
    names.set(hex, file.name);
    moveToWhole(sid, hex);
  } catch (e) {
    sw.close();
    done(e.code === 'aborted' ? 'not sent (cancelled)' : `not sent: ${e.message}`, 'failed');
  }
}

// The whole model is on the server: if its structure is shown, show the whole model
// instead, with the same view (options, scopes, selection in the route; zoom and
// position from here).
function moveToWhole(structureId, id) {
  if (route.id !== structureId) return;
  switchView = { id, x: pz.x, y: pz.y, k: pz.k };
  navigate({ id }, { replace: true });
}

function uploadOne(file, data, prefix, extraNote, { refused: onRefused } = {}) {
  const bar = $('upload-progress');
  $('upload-name').textContent = `${prefix}${file.name}`;
  bar.max = 100;
  bar.value = 0;
  bar.hidden = false;
  delete bar.dataset.sent;
  uploadState.done = false;
  $('upload-cancel').setAttribute('aria-label', 'Cancel upload');
  const t0 = performance.now();
  let lastAnnounce = 0;
  setUploadDetail(`Uploading · 0 of ${fmtBytes(file.size + data.reduce((n, d) => n + d.size, 0))}`, extraNote);
  announce(`Uploading ${file.name}…`);
  const up = upload(file, {
    data,
    onProgress: (loaded, total) => {
      const pct = total ? Math.min(100, (100 * loaded) / total) : 0;
      bar.value = pct;
      const secs = (performance.now() - t0) / 1000;
      const rate = secs > 0.3 ? ` · ${fmtBytes(loaded / secs)}/s` : '';
      setUploadDetail(`Uploading · ${fmtBytes(loaded)} of ${fmtBytes(total)} · ${Math.floor(pct)}%${rate}`, extraNote);
      if (performance.now() - lastAnnounce > 2000) { lastAnnounce = performance.now(); announce(`Uploading: ${Math.floor(pct)}%`); }
    },
    onSent: () => {
      bar.value = 100;
      bar.dataset.sent = '1';
      setUploadDetail('Uploaded · the server is checking the model…', extraNote);
      announce('Upload complete; the server is checking the model.');
    },
  });
  uploadState.abort = up.abort;
  return up.promise.then((res) => {
    uploadState.done = true;
    $('upload-cancel').setAttribute('aria-label', 'Close');
    if (res.body && res.body.id) names.set(res.body.id, file.name);
    announce(`${file.name}: ${res.status === 201 ? 'stored' : 'already stored'}.`);
    return res;
  }, (e) => {
    uploadState.done = true;
    $('upload-cancel').setAttribute('aria-label', 'Close');
    uploadCard.classList.add('error');
    bar.value = 0;
    if (e.code === 'aborted') {
      setUploadDetail(h('span', { class: 'err-title', text: 'Upload cancelled' }));
      announce('Upload cancelled.');
      return null;
    }
    if (e.status === 401) $('upload-token').hidden = false;
    bar.hidden = true;
    const refused = e.status === 400 || e.status === 422;
    if (refused && onRefused) { uploadCard.classList.remove('error'); uploadState.done = false; return onRefused(e); }
    setUploadDetail(
      h('span', { class: 'err-title', text: refused ? 'Not an ONNX model this server accepts' : 'Upload failed' }),
      h('span', { text: `${e.message}${e.where() ? ` ${e.where()}` : ''}` }),
      e.code ? h('span', { class: 'err-where', text: `error code ${e.code}${e.status ? ` (HTTP ${e.status})` : ''}` }) : null);
    announce(`Upload failed: ${e.message} ${e.where()}`);
    return null;
  });
}

// ------------------------------------------------------------------------- home
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

// ------------------------------------------------------------------------- diff
const diffView = new DiffView({
  pz, canvas, viewport, minimap, announce, showGraphState, hideGraphState, flash, openSide, closeSide, names,
  listBody: $('model-body'),
  info: $('graph-info'),
  setTitle: (a, b) => {
    const t = (id) => names.get()[id] || shortId(id);
    $('crumb').hidden = false;
    $('crumb-name').textContent = `${t(a)} → ${t(b)}`;
    $('crumb-meta').textContent = 'what changed from A to B';
    document.title = `${t(a)} → ${t(b)} — onnxviz`;
  },
  navigateChange: (i) => navigate({ change: i }),
  renderQuery: (r) => renderQuery(r),
  retry: () => apply(route),
});
const compare = compareSection({
  names, announce,
  onCompare: (a, b) => navigate({ id: null, diff: { a, b }, change: null, opts: { ...DEFAULTS }, expand: [], node: null, value: null, tensor: null }),
  onError: (e) => announce(`The upload failed: ${e.message}`),
});
$('recent').before(compare.section);

// ------------------------------------------------------------------------- start
function onLocation() {
  if (location.hash === buildHash(route) && (route.id ? cur.id === route.id : true) && !route.diff && document.body.dataset.ready) return;
  apply(parseHash(location.hash));
}
window.addEventListener('popstate', onLocation);
window.addEventListener('hashchange', onLocation);
apply(route).finally(() => { document.body.dataset.ready = '1'; });
