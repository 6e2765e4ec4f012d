// app.js — the onnxviz page: the current route and what it shows (the model's drawing with
// its toolbar, options, downloads and selection, the side panels, the diff view), and the
// start.  Other concerns are modules of their own: the URL (route.js), search (search.js),
// the keyboard (keys.js), uploads (upload.js), the home page (home.js), the panels
// (panels.js), the diff view (diff.js), formatters (util.js).
// No framework; every piece of server text goes into text nodes; the SVG is parsed as XML,
// checked, and imported (graph.js).

import { ApiError, getJSON, getBlob, modelUrl } from './api.js';
import { blockPanel } from './blockpanel.js';
import { boxFrame, fetchSvg, Minimap, PanZoom, READABLE, startBox, stubPeers } from './graph.js';
import { modelPanel, nodePanel, tensorPanel, tensorUploadPanel, valuePanel } from './panels.js';
import { h, clear, errorNotice, fmtInt, fmtBytes, shortId, downloadBlob, groupAttr, groupOf, pathAttr, spanOf, inSpan } from './util.js';
import { DiffView } from './diff.js';
import { SideBySide } from './sidebyside.js';
import { structures } from './first.js';
import { initHome } from './home.js';
import { initKeys } from './keys.js';
import { names } from './names.js';
import { initNodeKeys } from './nodekeys.js';
import { CanvasGraph, buildProxy, loadLayout, wantCanvas } from './canvas.js';
import { buildHash, DEFAULTS, DIMS, NODE_ID, parseHash, renderQuery } from './route.js';
import { initSearch } from './search.js';
import { initUpload } from './upload.js';
import { initEmbed, pathRoute } from './embed.js';
import { onTheme, themeQuery } from './theme.js';
import { hideChecked, hideFieldset, syncHide } from './hide.js';
import { HEAT_DEFAULTS, heatFieldset, heatMetrics, heatPatch, isOverlayFile, postOverlay, showHottest, syncHeat } from './heat.js';

const $ = (id) => document.getElementById(id);

// ------------------------------------------------------------------------- route
// the current route (route.js: the URL as a route object and back)
pathRoute(); // /m/{id} and /embed/{id}: their #route (embed.js)
let route = parseHash(location.hash);

// Change the route: a new history entry (or the current one replaced) and apply it.
// model: the caller knows patch.id names a model (its own upload's answer), so the
// drawing is asked for with the summary rather than after it (apply).
function navigate(patch, { replace = false, model = false } = {}) {
  const next = { ...route, ...patch, opts: { ...route.opts, ...(patch.opts || {}) } };
  const hash = buildHash(next);
  if (hash !== location.hash) {
    if (replace) history.replaceState(null, '', hash);
    else history.pushState(null, '', hash);
  }
  return apply(next, { model });
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

function modelTitle(id, summary) {
  const n = names.get()[id];
  if (n) return n;
  if (summary && summary.kind === 'tensor') return (summary.tensor && summary.tensor.name) || `tensor ${shortId(id)}`;
  const m = summary && summary.summary && summary.summary.model;
  if (m && m.graph_name) return m.graph_name;
  return `model ${shortId(id)}`;
}

// ------------------------------------------------------------------------- apply
async function apply(r, { model = false } = {}) {
  const seq = ++applySeq;
  route = r;
  document.body.classList.toggle('diff-mode', !!r.diff);
  // the diff side by side (sidebyside.js) in place of the view; a switch between the two
  const sideBySide = !!r.diff && r.view === 'sbs';
  document.body.classList.toggle('sbs-mode', sideBySide);
  $('btn-sbs').hidden = !r.diff;
  $('btn-sbs').setAttribute('aria-pressed', String(sideBySide));
  if (!sideBySide) $('sbs').hidden = true;
  if (r.diff) { await showDiff(r); return; }
  if (diffView.key) { diffView.key = null; delete canvas.dataset.diff; clear(canvas); cv.clear(); sbs.clear(); } // left the diff view
  if (!r.id) { showHome(); return; }
  showWorkspace();
  // the model's summary, once (a route of the same model applied while it is still loading,
  // e.g. after quick steps back in history, waits for it too)
  if (cur.id !== r.id) {
    if (model) fetchGraphEarly(r);
    cur.opening = openModel(r.id);
  }
  await cur.opening;
  if (seq !== applySeq || !cur.summary) return; // no summary: openModel says why
  const isTensor = !!(cur.summary && cur.summary.kind === 'tensor');
  showGraphParts(!isTensor);
  if (isTensor) { await showTensorUpload(r, seq); return; }
  const key = themeQuery(renderQuery(r));
  syncOptionsForm();
  renderExpandedChips();
  if (key !== cur.svgKey) {
    const ok = await loadGraph(r, key, seq);
    if (!ok || seq !== applySeq) return;
  }
  await syncSelection(r, seq);
  if (seq === applySeq) embed.shown(r, cur.svg);
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
  cv.clear();
  minimap.set(null);
  delete canvas.dataset.key;
  delete canvas.dataset.model;
  home.refresh();
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
  showHottest($('graph-area'), null); // a model's heat list and scale are not the diff's
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
  if (!(switchView && switchView.id === id)) { clear($('canvas')); cv.clear(); }
  minimap.set(null);
  delete canvas.dataset.key;
  delete canvas.dataset.model;
  clear($('model-body')).append(h('p', { class: 'empty', text: 'Loading…' }));
  $('crumb').hidden = false;
  $('crumb-name').textContent = modelTitle(id, null);
  $('crumb-meta').textContent = '';
  closeSide();
  search.reset();
  try {
    // the file's name (the server's when this browser did not upload it) with the
    // summary: the header, the File row and the download names use it
    const [s] = await Promise.all([getJSON(modelUrl(id)), names.lookup(id)]);
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

// ------------------------------------------------------------------------- graph
const viewport = $('viewport');
const canvas = $('canvas');
const zoomLevel = $('zoom-level');
let minimap = null;
let cv = null; // the canvas renderer (below)
// 100%: the drawing's text at the page's size (graph.js READABLE)
const showZoom = (k) => { const pct = (k / READABLE) * 100; zoomLevel.textContent = `${pct < 10 ? pct.toFixed(1) : Math.round(pct)}%`; };
const pz = new PanZoom(viewport, canvas, (p) => {
  if (cv && cv.active) cv.draw(); // a canvas drawing: redrawn in the same frame
  showZoom(p.k);
  if (minimap) minimap.update();
});
minimap = new Minimap($('minimap'), pz, { toggle: $('minimap-toggle'), sideOpen: () => !$('side-panel').hidden });
// big drawings on a canvas (canvas.js, decision 94); a click or Enter on one of its boxes
cv = new CanvasGraph(viewport, pz, { activate: (g) => { if (g) { if (route.diff) diffView.onBoxClick(g); else activateBox(g); } }, listEl: $('canvas-list') });
new ResizeObserver(() => cv.schedule()).observe(viewport);
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

const drawingUrl = (id, ext, key) => `${modelUrl(id)}/graph.${ext}${key ? `?${key}` : ''}`;
function graphUrl(ext, key = themeQuery(renderQuery(route))) {
  return drawingUrl(route.id, ext, key);
}

// A drawing asked for before the model's summary is in: when the page knows that an id
// names a model (the answer to its own upload), the server's layout overlaps the
// summary's round trip instead of following it (issue 23: time to graph).  loadGraph
// takes it for its first attempt when it asks for the same URL, and drops it otherwise.
let early = null; // {url, ctl, promise}
function fetchGraphEarly(r) {
  if (early) early.ctl.abort();
  const ctl = new AbortController();
  const url = drawingUrl(r.id, 'svg', themeQuery(renderQuery(r)));
  const promise = fetchSvg(url, ctl.signal);
  promise.catch(() => {}); // its failure is loadGraph's to see, or nobody's
  early = { url, ctl, promise };
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
  const url = drawingUrl(r.id, 'svg', key);
  let pre = null;
  if (early && early.url === url) pre = early;
  else if (early) early.ctl.abort();
  early = null;
  if (pre) ctl.signal.addEventListener('abort', () => pre.ctl.abort(), { once: true });
  let svg;
  // a big full detail is drawn on a canvas from the layout JSON (parsed in a worker)
  const sm = cur.summary && cur.summary.summary && cur.summary.summary.summary;
  const onCanvas = wantCanvas(sm ? +sm.nodes || 0 : 0, r.opts.group);
  let layout = null;
  if (onCanvas && pre) { pre.ctl.abort(); pre = null; }
  for (let attempt = 0; ; attempt++) {
    try {
      const t0 = performance.now();
      if (onCanvas) layout = await loadLayout(drawingUrl(r.id, 'json', key), ctl.signal);
      else svg = await (attempt === 0 && pre ? pre.promise : fetchSvg(url, ctl.signal));
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
  if (layout) {
    const t0 = performance.now();
    svg = buildProxy(layout.layout);
    layout.ms.proxy = performance.now() - t0;
    clear(canvas);
    cv.show(layout, svg);
    canvas.dataset.renderer = 'canvas';
  } else {
    cv.clear();
    clear(canvas).append(svg);
    canvas.dataset.renderer = 'svg';
  }
  canvas.dataset.model = r.id; // what is drawn (tests and debugging read these)
  canvas.dataset.key = key;
  svg.setAttribute('focusable', 'false');
  // one box at a time is in the Tab order (nodekeys.js); the rest is a picture
  svg.setAttribute('role', 'group');
  svg.setAttribute('aria-label', 'The drawing: Tab reaches a box, the arrows move along the edges, Enter opens it');
  cur.svg = svg;
  cur.svgKey = key;
  cur.selected = null;
  showHottest($('graph-area'), svg, (id) => navigate({ node: id, value: null, tensor: null }), overlayTable(r));
  const vb = svg.viewBox && svg.viewBox.baseVal;
  const w = parseFloat(svg.getAttribute('width')) || (vb && vb.width) || 100;
  const hgt = parseFloat(svg.getAttribute('height')) || (vb && vb.height) || 100;
  pz.setContent(w, hgt);
  markCollapsible();
  addRunButtons();
  nodeKeys.attach(layout ? null : svg, r.node); // a canvas drawing: its list (canvas.js)
  const boxes = svg.getAttribute('data-boxes');
  const nodes = svg.querySelectorAll('g.node').length;
  $('graph-info').textContent = `${fmtInt(boxes ? +boxes : nodes)} boxes${svg.getAttribute('data-group-depth') && svg.getAttribute('data-group-depth') !== '0' ? ` · grouped by scope (depth ${svg.getAttribute('data-group-depth')})` : ''}${svg.hasAttribute('data-hidden') ? ` · ${fmtInt(+svg.getAttribute('data-hidden'))} hidden (${r.opts.hide.replace(/,/g, ', ')})` : ''}`;
  // a new view opens at the graph inputs, at a readable scale (unless all of it is)
  const lr = r.opts.rankdir === 'LR';
  const vr = viewport.getBoundingClientRect();
  const start = startBox(svg, lr, vr.width / READABLE, vr.height / READABLE);
  pz.onHome = () => pz.home(start, { lr, animate: true });
  pz.lr = lr; // Fit fits a long drawing across its direction
  if (prev) pz.set(prev.x, prev.y, prev.k);
  else pz.home(start, { lr });
  const f = focusAfterLoad;
  focusAfterLoad = null;
  if (f) revealGroup(f);
  // the upload that opened this model is over: its card no longer covers the drawing
  uploads.closeCardIfDone();
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
    const rect = boxFrame(g); // the SVG's <rect>, a canvas drawing's box (canvas.js)
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
    b.style.left = `${rect.x + rect.w + 10}px`;
    b.style.top = `${rect.y + 1}px`;
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
  nodeKeys.follow(el);
  const id = el.id;
  if (!id) return;
  for (const e of cur.svg.querySelectorAll(`g.edge[data-from="${CSS.escape(id)}"], g.edge[data-to="${CSS.escape(id)}"]`)) e.classList.add('incident');
}

function inView(el) {
  pz.flush();
  if (el.__ox) return cv.inView(el);
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
  const el = nodeEl(r.node);
  const pattern = el && el.getAttribute('data-pattern'); // a named pattern's box opens it
  sideBody.append(h('p', { id: 'unfold-row' }, h('button', {
    type: 'button', class: 'btn btn-plain btn-small', id: 'btn-unfold',
    text: pattern ? `Draw this ${pattern} as its ops` : 'Draw the bookkeeping that feeds it',
    onclick: () => unfoldChain(r.node),
  })));
}

async function syncSelection(r, seq) {
  const key = `${r.id}|${r.node}|${r.value}|${r.tensor}|${r.dequantize}`;
  let el = r.node ? nodeEl(r.node) : r.value ? valueEl(r.value) : null;
  // a node inside a named pattern drawn as one box (a shared URL's node=): that box
  if (!el && r.node && cur.svg && route.opts.patterns !== 'nodes') {
    el = await patternBox(r.node);
    if (seq !== applySeq) return; // a later route draws and selects for itself
  }
  highlightNode(el);
  if (el && !inView(el) && !cur.keptView) pz.reveal(el);
  cur.keptView = false;
  if (key === cur.panelKey) { syncUnfoldButton(r); return; }
  cur.panelKey = key;
  if (r.tensor) await showTensor(r);
  else if (r.node) await showNode(r, seq);
  else if (r.value) await showValue(r, seq);
  else closeSide();
}

// A value's box: its terminal, else the family terminal listing it (data-values), else the
// box it is a row of (an input or output folded by io=fold: text[data-value]).
function valueEl(v) {
  if (!cur.svg) return null;
  const q = CSS.escape(v);
  const row = cur.svg.querySelector(`g.node text[data-value="${q}"]`);
  return cur.svg.querySelector(`g.node[data-value="${q}"]:not([data-kind^="stub"])`)
    || cur.svg.querySelector(`g.node[data-values~="${q}"]`)
    || (row && row.closest('g.node'));
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
  onTensor: (ref, _label, { dequantize = null } = {}) => navigate({ tensor: ref, dequantize }),
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
// for a tensor upload); with `dq`, its dequantized values (docs/quant.md); dq null: those
// of a quantized tensor (an int4 weight's packed bytes drew a meaningless sawtooth by
// default, issue 39), the stored values of any other (asked first without values).
async function renderTensor(box, id, ref, isCurrent, dq = false) {
  clear(box).append(h('p', { class: 'empty', text: 'Reading the values…' }));
  announce('Reading the tensor values…');
  try {
    if (dq === null) dq = !!(await getJSON(tensorUrl(id, ref, 'values=0&stats=0'))).quantized_by;
    if (!isCurrent()) return null;
    const d = dq ? '&dequantize=1' : '';
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

async function showTensor(r) {
  openSide('Tensor', { back: !!(r.node || r.value) });
  // current while the panel is still this one's: a later apply of the same route (a URL
  // spelled another way, e.g. tensor=%40i3, fires hashchange and popstate) leaves the
  // panel to this rendering (syncSelection's key), so a newer seq alone must not drop it
  const key = cur.panelKey;
  const mine = () => cur.panelKey === key && cur.id === r.id;
  const t = await renderTensor(sideBody, r.id, r.tensor, mine, r.dequantize);
  if (t && mine()) $('side-title').textContent = `Tensor ${t.name || r.tensor}`;
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
    // a node of a named pattern drawn as one box: open the pattern (unfold= its node)
    const pat = d && route.opts.patterns !== 'nodes' && patternOf(d, hit.node);
    if (pat && !route.unfold.includes(hit.node)) {
      announce(`Opening the ${pat.op_type} pattern…`);
      await navigate({ unfold: [...route.unfold, hit.node], node: hit.node, value: null, tensor: null });
      continue;
    }
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

// The box of the named pattern holding node id, as drawn (patterns=fold), or null.
async function patternBox(id) {
  const svg = cur.svg;
  if (!svg.querySelector('g.node[data-pattern]')) return null;
  const d = await loadDoc().catch(() => null);
  const m = d && cur.svg === svg && patternOf(d, id);
  return m ? nodeEl(m.node) : null;
}

// The named pattern (document "patterns") holding a node, or null.
function patternOf(d, id) {
  const ms = (d.patterns && d.patterns.matches) || [];
  return ms.find((m) => m.nodes.includes(id)) || null;
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
    const t = e.target === cv.el ? cv.targetAt(e.clientX, e.clientY) : e.target;
    const dg = t && t.closest && t.closest('g.node');
    if (dg) diffView.onBoxClick(dg);
    return;
  }
  if (pz.dragged || !cur.svg) return;
  const t = e.target === cv.el ? cv.targetAt(e.clientX, e.clientY) : e.target;
  if (!t) return;
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
  activateBox(g, e.shiftKey);
});

// What a click on a box does (also Enter on a focused box, nodekeys.js): a group opens
// (shift: every instance of a run), a stub jumps to its peer, a node or value is selected.
// A block (a group box) is selected and summed up by a click; Enter on it once selected
// (`again`), or a double click, opens it.
function activateBox(g, shift = false, again = false) {
  const kind = g.getAttribute('data-kind');
  if (kind === 'group' && shift && g.hasAttribute('data-open-all')) { openAll(g); return; }
  if (kind === 'group' && again && g.classList.contains('selected')) { expandGroup(groupOf(g)); return; }
  if (kind === 'group') { selectBlock(g); return; }
  if (kind === 'stub-in' || kind === 'stub-out') { jumpFromStub(g); return; }
  const node = g.getAttribute('data-node');
  if (node) { navigate({ node, value: null, tensor: null }); return; }
  const value = g.getAttribute('data-value');
  if (value) navigate({ node: null, value, tensor: null });
}

// The block's summary in the side panel, the view left where it is (blockpanel.js).
function selectBlock(g) {
  const path = groupOf(g);
  highlightNode(g);
  cur.panelKey = `block:${path}`; // the next route's selection replaces it
  const fill = (doc) => {
    if (cur.panelKey !== `block:${path}`) return;
    clear(sideBody).append(blockPanel(g, path, doc, {
      onExpand: () => expandGroup(path),
      onOpenAll: g.hasAttribute('data-open-all') ? () => openAll(g) : null,
      onNode: (id) => goToNode({ node: id }),
    }));
  };
  openSide('Block');
  fill(cur.doc || null);
  if (!cur.doc) loadDoc().then(fill, () => {});
  announce(`Block ${path} selected: press Enter again to open it.`);
}

const nodeKeys = initNodeKeys({
  canvas, viewport, lr: () => route.opts.rankdir === 'LR',
  reveal: (g) => { if (!inView(g)) pz.reveal(g, { minK: Math.max(pz.k, READABLE) }); },
  activate: (g) => { if (!route.diff && cur.svg) activateBox(g, false, true); },
});

// The view moves by its transform only: undo any scrolling of the clipped viewport (a
// find-in-page or a focus change would otherwise shift it under the transform).
viewport.addEventListener('scroll', () => { viewport.scrollTop = 0; viewport.scrollLeft = 0; });
document.querySelector('.skip-link').addEventListener('click', (e) => {
  e.preventDefault();
  (route.id || route.diff ? viewPz().vp : $('dropzone')).focus(); // side by side: the leading pane
});

viewport.addEventListener('dblclick', (e) => {
  const t = e.target === cv.el ? cv.targetAt(e.clientX, e.clientY) : e.target;
  const block = !route.diff && cur.svg && t && t.closest && t.closest('g.node[data-kind="group"]');
  if (block) { expandGroup(groupOf(block)); return; } // a double click opens a block
  if (!t || !t.closest || !t.closest('g.node')) pz.zoomBy(1.6, e.clientX - viewport.getBoundingClientRect().left, e.clientY - viewport.getBoundingClientRect().top, true);
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
// side by side, the pane that leads (the other follows it)
const viewPz = () => (route.diff && route.view === 'sbs' ? sbs.leadPz() : pz);
$('zoom-in').addEventListener('click', () => viewPz().zoomBy(1.25, undefined, undefined, true));
$('zoom-out').addEventListener('click', () => viewPz().zoomBy(0.8, undefined, undefined, true));
$('zoom-fit').addEventListener('click', () => viewPz().fit(true));
$('zoom-100').addEventListener('click', () => viewPz().actualSize());
$('btn-sbs').addEventListener('click', () => navigate({ view: route.view === 'sbs' ? null : 'sbs', pick: null }));
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
// heat.js: overlay, metric, scale; a loaded profile (picked in the View menu, or dropped
// on the open model: upload.js) is posted and drawn
const overlayLoaded = (overlay, metric) => navigate({ opts: { overlay, metric } });
const overlayRefused = (e) => showGraphState({ title: 'The overlay was refused', detail: errorNotice(e), error: true, spinner: false, actions: [['Close', hideGraphState]] });
heatFieldset(optForm, () => route.id, overlayLoaded, overlayRefused);
hideFieldset(optForm);
async function dropOverlay(file) {
  const id = route.id;
  if (!id) return;
  announce(`Attributing ${file.name} to the model…`);
  try {
    const o = await postOverlay(id, file);
    if (route.id !== id) return; // the page moved on meanwhile
    announce(`${file.name}: coverage ${(Math.floor((o.coverage || 0) * 1000) / 10).toFixed(1)}%, ${o.unmatched} unmatched.`);
    overlayLoaded(o.id, (o.metrics || [])[0] || '');
  } catch (e) { overlayRefused(e); }
}
// A stored overlay's table (coverage, unmatched, its metrics for the "Figure" choices).
function overlayTable(r) {
  if (!/^[0-9a-f]{64}$/.test(r.opts.overlay || '')) return null;
  const q = r.opts.metric ? `?metric=${encodeURIComponent(r.opts.metric)}` : '';
  return getJSON(`${modelUrl(r.id)}/overlays/${r.opts.overlay}${q}`).then((t) => {
    if (route.id === r.id && route.opts.overlay === r.opts.overlay) {
      heatMetrics(optForm, (t.metrics || []).map((m) => m.name));
      syncHeat(optForm, route.opts);
    }
    return t;
  });
}

function syncOptionsForm() {
  for (const k of ['rankdir', 'initializers', 'subgraphs', 'arith', 'quant', 'io', 'patterns']) {
    for (const inp of optForm.querySelectorAll(`input[name="${k}"]`)) inp.checked = inp.value === route.opts[k];
  }
  for (const inp of optForm.querySelectorAll('input[name="group"]')) inp.checked = inp.value === (route.opts.group === 'none' ? 'none' : 'auto');
  optForm.querySelector('input[name="shapes"]').checked = route.opts.shapes === 'on';
  optForm.querySelector('select[name="attrs"]').value = route.opts.attrs;
  syncHeat(optForm, route.opts);
  const sm = cur.summary && cur.summary.summary && cur.summary.summary.summary;
  syncHide(optForm, route.diff ? [] : (sm && sm.op_types) || [], route.opts.hide);
}

optForm.addEventListener('change', (e) => {
  const t = e.target;
  const opts = {};
  if (t.name === 'shapes') opts.shapes = t.checked ? 'on' : 'off';
  else if (t.name === 'hide') opts.hide = hideChecked(optForm);
  else if (t.name in HEAT_DEFAULTS) Object.assign(opts, heatPatch(t.name, t.value));
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
  if (!e.target.closest('.search')) search.close();
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
const search = initSearch({ modelId: () => route.id, goToNode, nodeEl, clearHighlights, announce });

// ------------------------------------------------------------------------- upload
const uploads = initUpload({
  navigate, modelId: () => route.id, names, announce, showWhole: moveToWhole,
  compareFiles: (files) => home.compareFiles(files),
  overlayFiles: (files) => (route.id && files.length === 1 && isOverlayFile(files[0]) ? (dropOverlay(files[0]), true) : false),
});

// The whole model is on the server: if its structure is shown, show the whole model
// instead, with the same view (options, scopes, selection in the route; zoom and
// position from here).
function moveToWhole(structureId, id) {
  if (route.id !== structureId) return;
  switchView = { id, x: pz.x, y: pz.y, k: pz.k };
  navigate({ id }, { replace: true });
}

// ------------------------------------------------------------------------- home
const home = initHome({
  names, announce,
  onCompare: (a, b) => navigate({ id: null, diff: { a, b }, change: null, view: null, pick: null, opts: { ...DEFAULTS }, expand: [], node: null, value: null, tensor: null }),
});

// ------------------------------------------------------------------------- keyboard
initKeys({
  search, view: () => viewPz().vp,
  menusOpen: () => !$('options').hidden || !$('downloads').hidden,
  closeMenus: () => closeMenus(null),
  uploadCardOpen: () => uploads.finishedCardOpen(),
  closeUploadCard: () => uploads.closeCard(),
  sideOpen: () => !side.hidden,
  closeSide: () => {
    if (cur.panelKey && cur.panelKey.startsWith('block:')) { closeSide(); clearHighlights('selected'); clearHighlights('incident'); return; }
    if (route.tensor && (route.node || route.value)) navigate({ tensor: null });
    else navigate({ node: null, value: null, tensor: null });
  },
  zoomable: () => !!cur.svg || (!!route.diff && (route.view === 'sbs' ? sbs.active : !!diffView.svg)),
});

// ------------------------------------------------------------------------- diff
// A and B side by side: a click or Enter on a box picks it (the route), zooming shows in
// the toolbar
const sbs = new SideBySide($('sbs'), {
  pick: (side, id) => navigate({ pick: `${side}:${id}`, change: null }),
  zoomed: (p) => showZoom(p.k),
});
const diffView = new DiffView({
  pz, canvas, cv, viewport, minimap, announce, showGraphState, hideGraphState, flash, openSide, closeSide, names, sbs,
  listBody: $('model-body'),
  info: $('graph-info'),
  setTitle: async (a, b) => {
    const t = (id) => names.get()[id] || shortId(id);
    const show = () => {
      $('crumb').hidden = false;
      $('crumb-name').textContent = `${t(a)} → ${t(b)}`;
      $('crumb-meta').textContent = 'what changed from A to B';
      document.title = `${t(a)} → ${t(b)} — onnxviz`;
    };
    show();
    // the server's names of models this browser did not upload (a shared link)
    await Promise.all([names.lookup(a), names.lookup(b)]);
    if (route.diff && route.diff.a === a && route.diff.b === b) show();
  },
  navigateChange: (i) => navigate({ change: i, pick: null }),
  renderQuery: (r) => themeQuery(renderQuery(r)),
  retry: () => apply(route),
});
// ------------------------------------------------------------------------- start
function onLocation() {
  if (location.hash === buildHash(route) && (route.id ? cur.id === route.id : true) && !route.diff && document.body.dataset.ready) return;
  apply(parseHash(location.hash));
}
const embed = initEmbed({ navigate });
// the drawing in the other theme's palette (the page's colours change by themselves)
onTheme(() => { if (route.id || route.diff) apply(route); });
window.addEventListener('popstate', onLocation);
window.addEventListener('hashchange', onLocation);
apply(route).finally(() => { document.body.dataset.ready = '1'; });
