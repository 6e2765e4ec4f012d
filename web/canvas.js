// canvas.js — big drawings drawn on a <canvas> from the layout JSON (issue 37): a
// 20,000-node full detail as SVG is 332,821 DOM elements that took 7.9 s to show and panned
// at 8.7 fps.  Here the layout JSON is parsed in a worker (layoutworker.js) with a uniform
// grid over boxes and edge bounding boxes; each frame draws only what the grid says is in
// view, edges batched into one Path2D per style, boxes into one per colour, text only when
// it is readable (level of detail), at devicePixelRatio.
//
// The rest of the page keeps working unchanged through a *detached* copy of the SVG's
// structure: one <g class="node ..." data-*> per box (with <title>, and <text> for the
// header and the rows that carry data-value / data-unfold; its frame is its __ox, not a
// <rect>), <g class="edge" data-from data-to> per edge, <g class="cluster"> per cluster,
// never put in the document (no style, no layout), made of HTML elements of those names
// (see buildProxy).  The
// page's selectors, attributes and classList calls (selection, search hits, incident edges,
// flash) run on it as on the SVG; a MutationObserver turns class changes into marks on the
// canvas, and hit tests answer these elements as the click's target.  Screen readers and
// the keyboard get a list of the boxes in view (buttons: Tab, ↓ ↑ along edges, ← → within
// a step, Enter).

import { ApiError, readHeaders } from './api.js';

// the page's own query (?draw=canvas|svg) forces a renderer (tests, comparisons)
const FORCED = new URLSearchParams(location.search).get('draw');
// full-detail drawings of more nodes than this go to the canvas (decision 94)
export const CANVAS_NODES = 5000;

export function wantCanvas(nodes, group) {
  if (FORCED === 'canvas') return true;
  if (FORCED === 'svg') return false;
  return group === 'none' && nodes > CANVAS_NODES;
}

// render/svg.c's drawing, by the same numbers (internal.h) and colours
const FONT = 'Helvetica, Arial, sans-serif';
const HDR_H = 17, ROW_H = 12, PAD_X = 8, PAD_Y = 4, STACK = 3;
const FAMILY = {
  other: '#5b6470', conv: '#2f6fb5', linear: '#1f4e8c', activation: '#b5432f', normalization: '#3a8a4f',
  pool: '#1d8080', attention: '#7a4fb0', math: '#56606d', reduce: '#8a6d1d', shape: '#8c5a8c',
  constant: '#8d8d8d', control: '#c06f12', quant: '#a05a2c', recurrent: '#b03a6f', sequence: '#4f7f9f',
  random: '#6f6f6f', custom: '#9a7d00', io: '#2b2b2b', group: '#34495e',
};
const MARK = { same: '#9aa5b1', added: '#1e8e3e', changed: '#d97706', removed: '#c0392b' };
const TINT = { added: '#e6f4ea', changed: '#fff3d6', removed: '#fdecea' };
const SAME_FILL = '#f4f5f7', SAME_BAND = '#6b7280', ROW_MARK = '#fcd34d'; // a diff's context
const ROW_COLOUR = { name: '#6b7280', tensor: '#7a5c12', sub: '#1f4e8c', badge: '#8a3b12', default: '#8a94a3' };
const EDGE = {
  data: ['#6b7280', []], outer: ['#8e44ad', [5, 3]], sub: ['#c06f12', [2, 3]],
  stub: ['#6b7280', [4, 2]], reads: ['#9aa3ad', [1, 2]],
};
const SELECT = '#d97706';
// level of detail, in CSS px per drawing unit (the rows are 9 units high)
const TEXT_K = 0.5;   // rows readable from here (4.5 px)
const CURVE_K = 0.25; // edges as curves and arrows from here; below, straight segments
const LABEL_K = 0.8;  // edge labels

// The style of box b as svg.c's box_svg gives it: fill, stroke, width, dash, corner.
function boxStyle(b) {
  let fill = '#ffffff', stroke = '#7b8794', dash = null, rx = 4;
  switch (b.kind) {
    case 'input': case 'output':
      fill = b.kind === 'input' ? '#e8f0f8' : '#eef6ea'; stroke = b.missing ? '#c0392b' : '#2b2b2b';
      if (b.missing) dash = [4, 2];
      rx = b.h / 2; break;
    case 'tensor': fill = '#f7f3e8'; stroke = '#a08c5a'; break;
    case 'stub-in': case 'stub-out': fill = '#f5f5f5'; stroke = '#9aa3ad'; dash = [3, 2]; rx = b.h / 2; break;
    case 'group': fill = '#f2f4f7'; stroke = '#34495e'; break;
    default: break;
  }
  let width = b.kind === 'group' ? 1.6 : 1;
  if (TINT[b.mark]) {
    fill = TINT[b.mark]; stroke = MARK[b.mark]; width = 2.4;
    if (b.mark === 'removed') dash = [5, 3];
  } else if (b.mark === 'same') { fill = SAME_FILL; stroke = MARK.same; } // muted, text as readable
  if (b.heat && /^#[0-9a-f]{6}$/i.test(b.heat.color)) fill = b.heat.color;
  return { fill, stroke, width, dash, rx: Math.min(rx, b.h / 2, b.w / 2) };
}

// A box's header band: its family's colour, muted for a diff's unchanged context
const bandOf = (b) => (b.mark === 'same' ? SAME_BAND : FAMILY[b.family] || FAMILY.other);

// black or white text on a heat fill (svg.c's heat_dark: the fill's luminance)
function darkFill(hex) {
  const n = parseInt(hex.slice(1), 16);
  const l = 0.2126 * ((n >> 16) & 255) + 0.7152 * ((n >> 8) & 255) + 0.0722 * (n & 255);
  return l < 128;
}

// Fetch and parse the layout JSON at url in a worker; answers {layout, geo, ms}.  Rejects
// like api.js's requests do: an AbortError, or an ApiError.
export function loadLayout(url, signal) {
  return new Promise((resolve, reject) => {
    const w = new Worker(new URL('./layoutworker.js', import.meta.url));
    const done = () => { w.terminate(); signal.removeEventListener('abort', abort); };
    const abort = () => { done(); reject(new DOMException('aborted', 'AbortError')); };
    signal.addEventListener('abort', abort, { once: true });
    w.onmessage = (m) => {
      done();
      const e = m.data.error;
      if (e) reject(new ApiError(e.status, e.body, e.retryAfter));
      else resolve(m.data);
    };
    w.onerror = (ev) => { done(); reject(new Error(ev.message || 'the layout could not be read')); };
    w.postMessage({ url: new URL(url, location.href).href, headers: readHeaders(url) });
  });
}

// The detached structure is markup parsed once (innerHTML), not elements made one by one:
// for the 100,000-node full detail 100,001 boxes' createElementNS and setAttribute calls
// took 1.0-1.5 s of the page's thread.  Its elements are in the HTML namespace (an HTML
// <svg>, <g>, <title>, <rect>, <text>, never rendered): the page's selectors, attributes,
// classList and textContent read them alike, and each weighs a fraction of an SVG element
// (which carries its animated x, y, width, lists...): the 100,000-node tab was 1.6-1.8 GB.
// Only the <g> of a box, edge or cluster (and a cluster's <rect>) carries __ox.
const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
const esc = (v) => { const s = String(v); return /[&<>"]/.test(s) ? s.replace(/[&<>"]/g, (c) => ESC[c]) : s; };
// ` name="value"` for each attribute whose value is not undefined or null
function attrs(a) {
  let s = '';
  for (const k in a) if (a[k] !== undefined && a[k] !== null) s += ` ${k}="${esc(a[k])}"`;
  return s;
}
const tag = (name, a, inner = '') => `<${name}${attrs(a)}>${inner}</${name}>`;

// Edges of the detached structure from svg.__edgesDone on, at most n; answers true when all
// are in.  Those of a big drawing follow its first frame (CanvasGraph.show), a task per
// EDGE_CHUNK: the page reads them only for a selection's incident edges and stubs.
const EDGES_NOW = 4000, EDGE_CHUNK = 5000, BOX_CHUNK = 1000;
export function proxyEdges(svg, layout, n) {
  const edges = layout.edges || [];
  const eg = svg.querySelector(':scope > #edges');
  const from = svg.__edgesDone, end = Math.min(edges.length, from + n);
  let html = '';
  for (let i = from; i < end; i++) {
    const e = edges[i];
    html += tag('g', { id: e.id, class: `edge${e.style && e.style !== 'data' ? ` ${e.style}` : ''}${e.mark ? ' ghost' : ''}`, 'data-from': e.from, 'data-to': e.to, 'data-value': e.value, 'data-count': e.count > 1 ? e.count : null });
  }
  eg.insertAdjacentHTML('beforeend', html);
  const gs = eg.children;
  for (let i = from; i < end; i++) gs[i].__ox = { edge: i };
  svg.__edgesDone = end;
  return end === edges.length;
}

// The detached structure the page's code reads (see the top of this file).  A box's,
// edge's or cluster's <g> (and a cluster's <rect>) carries __ox: {box | edge | cluster: its
// index, x, y, w, h: its box in content px; a box's `dashed` (an outline startBox skips),
// `fill` and `colour` (the minimap's: its header band's, else its outline's)}.  A box has
// no <rect>: its __ox is its frame.
export function buildProxy(layout) {
  const nodes = layout.nodes || [], edges = layout.edges || [], clusters = layout.clusters || [];
  const svg = document.createElement('svg');
  const top = {
    class: 'onnxviz', width: layout.width, height: layout.height, 'data-format': 'onnxviz.layout/1',
    'data-boxes': nodes.length, 'data-group-depth': layout.group_depth || 0,
    'data-hidden': layout.hidden ? layout.hidden.nodes : null, // hide= (svg.c's data-hidden)
  };
  for (const k in top) if (top[k] !== undefined && top[k] !== null) svg.setAttribute(k, top[k]);
  let html = '<g id="clusters">';
  for (const c of clusters) {
    const sub = c.kind === 'subgraph', name = c.scope || c.group;
    html += tag('g', { id: c.id, class: `cluster ${sub ? 'subgraph' : 'scope'}`, [sub ? 'data-scope' : 'data-group']: sub ? c.scope : c.group },
      `${name ? tag('title', {}, esc(name)) : ''}${tag('rect', { x: c.x, y: c.y, width: c.w, height: c.h })}`);
  }
  html += '</g><g id="edges"></g><g id="nodes"></g>';
  // a heat overlay's legend as svg.c writes it (web/heat.js reads its swatches and captions)
  const lg = layout.heat && layout.heat.legend;
  if (lg && Array.isArray(lg.items)) {
    let inner = '';
    for (const [what, v] of lg.items) inner += what === 'swatch' ? tag('rect', { fill: v }) : tag('text', {}, esc(v));
    inner += tag('rect', { fill: '#ffffff', stroke: '#7b8794' }) + tag('text', {}, 'no data') + tag('text', {}, esc(lg.caption || ''));
    if (lg.source) inner += tag('text', {}, esc(lg.source));
    html += tag('g', { id: 'legend', class: 'legend heat-legend' }, inner);
  }
  svg.innerHTML = html;
  const [cg, , ng] = svg.children;
  for (let i = 0; i < clusters.length; i++) {
    const c = clusters[i], g = cg.children[i];
    g.__ox = g.querySelector(':scope > rect').__ox = { cluster: i, x: c.x, y: c.y, w: c.w, h: c.h };
  }
  // the boxes BOX_CHUNK at a time: each chunk's markup is garbage at once (one string of
  // 100,001 boxes' markup was ~40 MB more for the collector, and the tab's peak)
  const boxes = new Array(nodes.length);
  html = '';
  nodes.forEach((b, i) => {
    const st = boxStyle(b);
    // what the SVG's frame <rect> tells the page (startBox, the minimap, run buttons, the
    // heat panel read __ox instead): a fifth of the structure's elements fewer
    const head = b.rows && b.rows[0] && b.rows[0].style === 'header';
    boxes[i] = {
      box: i, x: b.x - b.w / 2, y: b.y - b.h / 2, w: b.w, h: b.h,
      dashed: !!st.dash, fill: st.fill, colour: head ? bandOf(b) : st.stroke,
    };
    let inner = b.title ? tag('title', {}, esc(b.title)) : '';
    (b.rows || []).forEach((r, k) => {
      // the header is the label (nodekeys, search); rows others read: values, unfolds, heat
      if (k > 0 && r.value === undefined && !r.unfold && !r.heat) return;
      inner += tag('text', { 'data-value': r.value, 'data-unfold': r.unfold, class: r.heat ? 'heat-value' : null }, esc(r.text));
    });
    html += tag('g', {
      id: b.id, class: `node ${b.kind} fam-${b.family}${b.mark ? ` mark-${b.mark}` : ''}`, 'data-kind': b.kind, 'data-mark': b.mark, 'data-other': b.other, 'data-node': b.node,
      'data-value': b.value, 'data-peer': b.peer, 'data-group': b.kind === 'group' ? b.group : null,
      'data-members': b.members, 'data-values': Array.isArray(b.values) ? b.values.join(' ') : null,
      'data-open-all': b.open_all, 'data-heat': b.heat ? b.heat.value : null, 'data-pattern': b.pattern,
    }, inner);
    if (i % BOX_CHUNK === BOX_CHUNK - 1 || i === nodes.length - 1) { ng.insertAdjacentHTML('beforeend', html); html = ''; }
  });
  const gs = ng.children;
  for (let i = 0; i < boxes.length; i++) gs[i].__ox = boxes[i];
  svg.__edgesDone = 0;
  if (edges.length <= EDGES_NOW) proxyEdges(svg, layout, edges.length);
  return svg;
}

export class CanvasGraph {
  // viewport: the view (the <canvas> goes in it, under the page's overlays); pz: PanZoom;
  // activate(g): what a click or Enter on a box does; listEl: the <ul> of boxes in view.
  constructor(viewport, pz, { activate, listEl }) {
    this.vp = viewport;
    this.pz = pz;
    this.activate = activate;
    this.list = listEl;
    this.el = document.createElement('canvas');
    this.el.className = 'graph-canvas';
    this.el.setAttribute('aria-hidden', 'true');
    this.el.hidden = true;
    this.el.__graph = this; // for the tests (tests/e2e/canvas.test.mjs)
    viewport.prepend(this.el);
    this.g = this.el.getContext('2d');
    this.data = null;
    this.raf = 0;
    this.listTimer = 0;
    this.items = new Map(); // box index → its <li> in the list
    this.observer = new MutationObserver((recs) => this.marksChanged(recs));
    this.el.addEventListener('pointermove', (e) => this.hover(e));
    this.list.addEventListener('keydown', (e) => this.listKey(e));
    this.list.addEventListener('focusin', (e) => this.listFocus(e, true));
    this.list.addEventListener('focusout', (e) => this.listFocus(e, false));
    this.list.addEventListener('click', (e) => {
      const li = e.target.closest('li');
      if (li) this.activate(this.proxy.querySelector(`[id="${CSS.escape(li.dataset.id)}"]`));
    });
  }

  get active() { return !!this.data; }

  // Show a layout ({layout, geo} from loadLayout) and its proxy (buildProxy).
  show(data, proxy) {
    this.clear();
    this.data = data;
    this.proxy = proxy;
    const n = data.layout.nodes.length, m = data.layout.edges.length;
    this.boxFlags = new Uint8Array(n);  // 1 selected, 2 search hit, 4 flash, 8 focus
    this.edgeFlags = new Uint8Array(m); // 1 incident
    this.clusterFlags = new Uint8Array((data.layout.clusters || []).length); // 1 flash
    this.seenBox = new Uint32Array(n);
    this.seenEdge = new Uint32Array(m);
    this.stamp = 0;
    this.styles = data.layout.nodes.map(boxStyle);
    this.byId = new Map(data.layout.nodes.map((b, i) => [b.id, i]));
    this.graph = null;
    this.observer.observe(proxy, { attributes: true, attributeFilter: ['class'], subtree: true });
    // where the time went (the web benchmark prints it): fetch, parse and index in the
    // worker, the copy of the structure, the first frame
    const ms = data.ms || {};
    this.el.dataset.loadMs = ['fetch', 'parse', 'proxy'].map((k) => (ms[k] || 0).toFixed(0)).join(' ');
    this.el.hidden = false;
    this.list.hidden = false;
    this.schedule();
    // the rest of the edges' structure once the drawing is on screen
    const more = () => {
      if (this.proxy !== proxy) return; // another drawing meanwhile
      if (!proxyEdges(proxy, data.layout, EDGE_CHUNK)) { setTimeout(more, 0); return; }
      // a selection made meanwhile (a shared URL's node=) gets its incident edges, as
      // app.js's highlightNode gives them
      const sel = new Set(data.layout.nodes.filter((b, i) => this.boxFlags[i] & 1).map((b) => b.id));
      if (!sel.size) return;
      for (const g of proxy.querySelectorAll('#edges > g.edge')) {
        if (sel.has(g.getAttribute('data-from')) || sel.has(g.getAttribute('data-to'))) g.classList.add('incident');
      }
    };
    if (proxy.__edgesDone < data.layout.edges.length) requestAnimationFrame(() => setTimeout(more, 0));
  }

  clear() {
    this.observer.disconnect();
    this.data = null;
    this.proxy = null;
    this.el.hidden = true;
    this.list.hidden = true;
    this.list.replaceChildren();
    this.items.clear();
    this.focused = -1;
  }

  // class changes on the proxy (selected, hit, flash, incident): flags, then a frame
  marksChanged(recs) {
    for (const r of recs) {
      const o = r.target.__ox;
      if (!o || r.target.localName !== 'g') continue;
      const c = r.target.classList;
      if (o.box !== undefined) {
        this.boxFlags[o.box] = (c.contains('selected') ? 1 : 0) | (c.contains('hit') ? 2 : 0) |
          (c.contains('flash') ? 4 : 0) | (this.boxFlags[o.box] & 8);
      } else if (o.edge !== undefined) this.edgeFlags[o.edge] = c.contains('incident') ? 1 : 0;
      else if (o.cluster !== undefined) this.clusterFlags[o.cluster] = c.contains('flash') ? 1 : 0;
    }
    this.schedule();
  }

  schedule() {
    if (this.raf || !this.data) return;
    this.raf = requestAnimationFrame(() => { this.raf = 0; this.draw(); });
  }

  // The items of a grid (boxes or edges) in the content rectangle, each once.
  query(start, items, seen, x0, y0, x1, y1, out) {
    const { cell, cols, rows } = this.data.geo;
    const c0 = Math.max(0, Math.floor(x0 / cell)), c1 = Math.min(cols - 1, Math.floor(x1 / cell));
    const r0 = Math.max(0, Math.floor(y0 / cell)), r1 = Math.min(rows - 1, Math.floor(y1 / cell));
    const s = this.stamp;
    for (let r = r0; r <= r1; r++) {
      for (let c = c0; c <= c1; c++) {
        const k = r * cols + c;
        for (let j = start[k]; j < start[k + 1]; j++) {
          const i = items[j];
          if (seen[i] !== s) { seen[i] = s; out.push(i); }
        }
      }
    }
    return out;
  }

  // What is in view: box and edge indices (content rectangle of the viewport)
  visible() {
    const pz = this.pz, geo = this.data.geo;
    const r = this.vp.getBoundingClientRect();
    const x0 = -pz.x / pz.k, y0 = -pz.y / pz.k, x1 = x0 + r.width / pz.k, y1 = y0 + r.height / pz.k;
    this.stamp = (this.stamp + 1) >>> 0 || 1;
    const boxes = [], edges = [];
    this.query(geo.boxStart, geo.boxItems, this.seenBox, x0, y0, x1, y1, boxes);
    this.query(geo.edgeStart, geo.edgeItems, this.seenEdge, x0, y0, x1, y1, edges);
    const b = geo.box, e = geo.ebox;
    const inside = (a, i) => a[4 * i] <= x1 && a[4 * i + 2] >= x0 && a[4 * i + 1] <= y1 && a[4 * i + 3] >= y0;
    return { boxes: boxes.filter((i) => inside(b, i)), edges: edges.filter((i) => inside(e, i)), x0, y0, x1, y1, w: r.width, h: r.height };
  }

  draw() {
    if (!this.data) return;
    const t0 = performance.now();
    const pz = this.pz, k = pz.k;
    const v = this.visible();
    const dpr = window.devicePixelRatio || 1;
    const cw = Math.round(v.w * dpr), ch = Math.round(v.h * dpr);
    if (this.el.width !== cw || this.el.height !== ch) {
      this.el.width = cw; this.el.height = ch;
      this.el.style.width = `${v.w}px`; this.el.style.height = `${v.h}px`;
    }
    const g = this.g;
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.clearRect(0, 0, cw, ch);
    g.setTransform(dpr * k, 0, 0, dpr * k, dpr * pz.x, dpr * pz.y);
    const { layout } = this.data;
    // the drawing's white page
    g.fillStyle = '#ffffff';
    g.fillRect(0, 0, layout.width, layout.height);
    this.drawClusters(g, v, k);
    this.drawEdges(g, v, k);
    this.drawBoxes(g, v, k);
    this.drawNotes(g, layout);
    this.el.dataset.drawMs = (performance.now() - t0).toFixed(1);
    this.el.dataset.drawn = `${v.boxes.length} ${v.edges.length}`;
    this.scheduleList();
  }

  // what svg.c writes under the drawing: a diff's legend of its marks (legend_svg, at the
  // places the layout JSON gives), hide='s note ("12 nodes hidden (hide=Relu)")
  drawNotes(g, layout) {
    const lg = layout.mark_legend;
    if (lg && Array.isArray(lg.at) && lg.at.length === 6) {
      const y = lg.y;
      g.font = `10px ${FONT}`;
      g.textAlign = 'left';
      ['added', 'changed', 'removed', 'same'].forEach((m, i) => {
        const x = lg.at[i];
        g.beginPath(); g.roundRect(x, y, 22, 13, 3);
        g.fillStyle = TINT[m] || SAME_FILL; g.fill();
        g.strokeStyle = MARK[m]; g.lineWidth = 2; g.setLineDash(m === 'removed' ? [5, 3] : []); g.stroke();
        g.fillStyle = '#1f2933'; g.fillText(m === 'same' ? 'unchanged' : m, x + 27, y + 10.5);
      });
      g.setLineDash([]);
      g.fillStyle = ROW_MARK; g.fillRect(lg.at[4], y + 0.5, 22, 12);
      g.fillStyle = '#1f2933'; g.fillText('changed row', lg.at[4] + 27, y + 10.5);
      if (lg.caption) { g.fillStyle = '#4b5563'; g.fillText(lg.caption, lg.at[5], y + 10.5); }
    }
    const hd = layout.hidden;
    if (hd && Array.isArray(hd.note_at)) {
      g.font = `11px ${FONT}`;
      g.fillStyle = '#5f6368';
      g.textAlign = 'left';
      g.fillText(`${hd.nodes} node${hd.nodes === 1 ? '' : 's'} hidden (hide=${hd.ops})`, hd.note_at[0], hd.note_at[1]);
    }
  }

  drawClusters(g, v, k) {
    (this.data.layout.clusters || []).forEach((c, i) => {
      if (c.x > v.x1 || c.x + c.w < v.x0 || c.y > v.y1 || c.y + c.h < v.y0) return;
      const sub = c.kind === 'subgraph';
      g.beginPath();
      g.roundRect(c.x, c.y, c.w, c.h, 6);
      g.fillStyle = sub ? '#fdf6ec' : '#f7f9fc';
      g.fill();
      g.setLineDash(sub ? [6, 3] : []);
      g.lineWidth = 1;
      g.strokeStyle = sub ? '#c06f12' : '#9fb3c8';
      g.stroke();
      if (this.clusterFlags[i]) { // a scope just opened or brought into view (app.js flash)
        g.setLineDash([]); g.strokeStyle = SELECT; g.lineWidth = Math.max(3, 2 / k); g.stroke();
      }
      if (c.label && k >= TEXT_K) {
        g.font = `bold 10px ${FONT}`;
        g.fillStyle = sub ? '#8a4b08' : '#334e68';
        g.textAlign = 'left';
        g.fillText(c.label, c.x + 6, c.y + 12);
      }
    });
    g.setLineDash([]);
  }

  drawEdges(g, v, k) {
    const { layout, geo } = this.data;
    const { pts, ptStart } = geo;
    const curves = k >= CURVE_K;
    const paths = new Map(), arrows = new Map();
    for (const i of v.edges) {
      const e = layout.edges[i];
      // a diff's ghost edge (to or from a removed node): dashed in its mark's colour
      const [colour, dash] = e.mark && MARK[e.mark] ? [MARK[e.mark], [5, 3]] : EDGE[e.style] || EDGE.data;
      const hot = this.edgeFlags[i] & 1;
      const width = hot ? 2 : e.style === 'reads' ? 0.8 : e.count > 1 ? 1.8 : 1;
      const stroke = hot ? SELECT : colour;
      const key = `${stroke}|${width}|${hot ? '' : dash.join(' ')}`;
      let p = paths.get(key);
      if (!p) { p = { path: new Path2D(), stroke, width, dash: hot ? [] : dash }; paths.set(key, p); }
      const a = ptStart[i], b = ptStart[i + 1];
      if (b - a < 2) continue;
      p.path.moveTo(pts[2 * a], pts[2 * a + 1]);
      if (curves) {
        for (let j = a + 1; j + 2 < b + 0; j += 3) p.path.bezierCurveTo(pts[2 * j], pts[2 * j + 1], pts[2 * j + 2], pts[2 * j + 3], pts[2 * j + 4], pts[2 * j + 5]);
      } else {
        // straight through the curve's end points: at this scale a pixel or two apart
        for (let j = a + 3; j < b; j += 3) p.path.lineTo(pts[2 * j], pts[2 * j + 1]);
      }
      if (curves && Array.isArray(e.arrow)) {
        const lx = pts[2 * (b - 1)], ly = pts[2 * (b - 1) + 1];
        let dx = e.arrow[0] - lx, dy = e.arrow[1] - ly;
        const len = Math.hypot(dx, dy);
        if (len > 0) {
          dx /= len; dy /= len;
          const bx = e.arrow[0] - dx * 7, by = e.arrow[1] - dy * 7;
          let ap = arrows.get(stroke);
          if (!ap) { ap = new Path2D(); arrows.set(stroke, ap); }
          ap.moveTo(e.arrow[0], e.arrow[1]);
          ap.lineTo(bx - dy * 3.2, by + dx * 3.2);
          ap.lineTo(bx + dy * 3.2, by - dx * 3.2);
          ap.closePath();
        }
      }
    }
    // plain edges first, the selection's on top
    const order = [...paths.values()].sort((p, q) => (p.stroke === SELECT) - (q.stroke === SELECT));
    for (const p of order) {
      g.strokeStyle = p.stroke;
      g.lineWidth = Math.max(p.width, 0.6 / k);
      g.setLineDash(k >= CURVE_K ? p.dash : []);
      g.stroke(p.path);
    }
    g.setLineDash([]);
    for (const [fill, p] of arrows) { g.fillStyle = fill; g.fill(p); }
    if (k >= LABEL_K) {
      g.font = `8px ${FONT}`;
      g.fillStyle = '#4b5563';
      g.textAlign = 'left';
      for (const i of v.edges) {
        const e = layout.edges[i];
        if (e.label && Array.isArray(e.label_at)) g.fillText(e.label, e.label_at[0], e.label_at[1]);
      }
    }
  }

  drawBoxes(g, v, k) {
    const { layout, geo } = this.data;
    const nodes = layout.nodes, box = geo.box;
    const round = k >= 0.3;
    // one pass of fills and one of outlines per style
    const fills = new Map(), strokes = new Map(), bands = new Map();
    const stacks = []; // runs of alike blocks: a stack of three, back to front (few)
    const add = (m, key, make) => { let p = m.get(key); if (!p) { p = make(); m.set(key, p); } return p; };
    for (const i of v.boxes) {
      const b = nodes[i], s = this.styles[i];
      const x = box[4 * i], y = box[4 * i + 1], w = b.w, h = b.h;
      if (b.open_all) { stacks.push(i); continue; } // drawn one by one, below
      const f = add(fills, s.fill, () => ({ path: new Path2D(), fill: s.fill }));
      const o = add(strokes, `${s.stroke}|${s.width}|${s.dash || ''}`, () => ({ path: new Path2D(), stroke: s.stroke, width: s.width, dash: s.dash }));
      if (round) { f.path.roundRect(x, y, w, h, s.rx); o.path.roundRect(x, y, w, h, s.rx); } else { f.path.rect(x, y, w, h); o.path.rect(x, y, w, h); }
      if (b.rows && b.rows[0] && b.rows[0].style === 'header') {
        const colour = bandOf(b);
        const p = add(bands, colour, () => ({ path: new Path2D(), fill: colour }));
        if (round) p.path.roundRect(x + 0.5, y + 0.5, w - 1, HDR_H - 1, 4); else p.path.rect(x + 0.5, y + 0.5, w - 1, HDR_H - 1);
      }
    }
    // all fills, then all outlines: boxes do not overlap, so this is svg.c's picture
    for (const p of fills.values()) { g.fillStyle = p.fill; g.fill(p.path); }
    for (const p of strokes.values()) {
      g.strokeStyle = p.stroke; g.lineWidth = Math.max(p.width, 0.6 / k);
      g.setLineDash(p.dash && k >= CURVE_K ? p.dash : []); g.stroke(p.path);
    }
    g.setLineDash([]);
    // a stack: two copies 3 units apart behind the front box, each filled and outlined in
    // turn (svg.c's stack copies have the plain 1-unit outline)
    for (const i of stacks) {
      const b = nodes[i], s = this.styles[i];
      for (const r of [2, 1, 0]) {
        g.beginPath();
        g.roundRect(box[4 * i] + STACK * r, box[4 * i + 1] + STACK * r, b.w, b.h, s.rx);
        g.fillStyle = s.fill; g.fill();
        g.strokeStyle = s.stroke; g.lineWidth = Math.max(r ? 1 : s.width, 0.6 / k); g.stroke();
      }
      if (b.rows && b.rows[0] && b.rows[0].style === 'header') {
        g.beginPath();
        g.roundRect(box[4 * i] + 0.5, box[4 * i + 1] + 0.5, b.w - 1, HDR_H - 1, 4);
        g.fillStyle = bandOf(b); g.fill();
      }
    }
    g.setLineDash([]);
    for (const p of bands.values()) { g.fillStyle = p.fill; g.fill(p.path); }
    if (k >= TEXT_K) for (const i of v.boxes) this.drawRows(g, i);
    // marks of the page: search hits, the selection, a flash, the focused box
    for (const i of v.boxes) {
      const f = this.boxFlags[i];
      if (!f) continue;
      const b = nodes[i], s = this.styles[i];
      const x = box[4 * i], y = box[4 * i + 1];
      g.beginPath();
      g.roundRect(x, y, b.w, b.h, s.rx);
      if (f & 8) { g.strokeStyle = '#2563eb'; g.lineWidth = 4; g.setLineDash([]); g.stroke(); }
      if (f & 1 || f & 4) { g.strokeStyle = SELECT; g.lineWidth = Math.max(3.5, 2 / k); g.setLineDash([]); g.stroke(); }
      else if (f & 2) { g.strokeStyle = SELECT; g.lineWidth = Math.max(2.5, 2 / k); g.setLineDash([5, 3]); g.stroke(); }
    }
    g.setLineDash([]);
  }

  // the rows of box i as box_svg writes them
  drawRows(g, i) {
    const b = this.data.layout.nodes[i];
    const x0 = this.data.geo.box[4 * i], y0 = this.data.geo.box[4 * i + 1];
    const center = b.kind !== 'op' && b.kind !== 'group';
    const heat = b.heat && /^#[0-9a-f]{6}$/i.test(b.heat.color) ? darkFill(b.heat.color) ? 'dark' : 'light' : '';
    let y = y0;
    (b.rows || []).forEach((r, n) => {
      if (r.style === 'header') {
        if (r.mark) { g.strokeStyle = '#f59e0b'; g.lineWidth = 2; g.beginPath(); g.roundRect(x0 + 1.5, y + 1.5, b.w - 3, HDR_H - 3, 4); g.stroke(); }
        g.font = `bold 11px ${FONT}`;
        g.fillStyle = '#ffffff';
        g.textAlign = 'center';
        g.fillText(r.text, x0 + b.w / 2, y + 12.5);
        y += HDR_H;
        return;
      }
      if (n === 0) y += PAD_Y;
      if (r.mark) { g.fillStyle = ROW_MARK; g.fillRect(x0 + 2, y, b.w - 4, ROW_H); }
      let colour = ROW_COLOUR[r.style] || '#1f2933';
      if (heat) colour = heat === 'dark' ? (r.style === 'name' ? '#e5e7eb' : '#ffffff') : (r.style === 'name' ? '#374151' : '#111827');
      g.font = `${r.style === 'default' ? 'italic ' : ''}9px ${FONT}`;
      if (r.style === 'badge') {
        const tw = g.measureText(r.text).width;
        g.beginPath(); g.roundRect(x0 + PAD_X - 3, y + 0.5, tw + 6, ROW_H - 1, 5);
        g.fillStyle = '#fdebd8'; g.fill(); g.strokeStyle = '#e8a86f'; g.lineWidth = 0.6; g.stroke();
      }
      g.fillStyle = colour;
      g.textAlign = center ? 'center' : 'left';
      g.fillText(r.text, center ? x0 + b.w / 2 : x0 + PAD_X, y + 9);
      y += ROW_H;
    });
    g.globalAlpha = 1;
  }

  // The proxy element under a viewport point: a row's <text> (data-unfold), a box's <g>, a
  // cluster's <rect>; null for empty paper.
  targetAt(clientX, clientY) {
    if (!this.data) return null;
    const r = this.vp.getBoundingClientRect();
    const x = (clientX - r.left - this.pz.x) / this.pz.k, y = (clientY - r.top - this.pz.y) / this.pz.k;
    const { geo, layout } = this.data;
    const c = Math.floor(x / geo.cell), rr = Math.floor(y / geo.cell);
    if (c >= 0 && c < geo.cols && rr >= 0 && rr < geo.rows) {
      const cell = rr * geo.cols + c;
      let hit = -1;
      for (let j = geo.boxStart[cell]; j < geo.boxStart[cell + 1]; j++) {
        const i = geo.boxItems[j];
        if (x >= geo.box[4 * i] && x <= geo.box[4 * i + 2] && y >= geo.box[4 * i + 1] && y <= geo.box[4 * i + 3]) hit = Math.max(hit, i);
      }
      if (hit >= 0) {
        const b = layout.nodes[hit];
        const g = this.proxy.querySelector(`#nodes > [id="${CSS.escape(b.id)}"]`);
        const row = this.rowAt(hit, y);
        return (row && row.unfold && g.querySelector(`:scope > text[data-unfold="${CSS.escape(row.unfold)}"]`)) || g;
      }
    }
    let best = null;
    for (const cl of this.proxy.querySelectorAll('g.cluster > rect')) {
      const o = cl.__ox;
      if (x >= o.x && x <= o.x + o.w && y >= o.y && y <= o.y + o.h && (!best || o.w * o.h < best.__ox.w * best.__ox.h)) best = cl;
    }
    return best;
  }

  rowAt(i, y) {
    const b = this.data.layout.nodes[i];
    let at = this.data.geo.box[4 * i + 1];
    for (let n = 0; n < (b.rows || []).length; n++) {
      const r = b.rows[n];
      const h = r.style === 'header' ? HDR_H : ROW_H;
      if (r.style !== 'header' && n === 0) at += PAD_Y;
      if (y >= at && y < at + h) return r;
      at += h;
    }
    return null;
  }

  hover(e) {
    if (this.hoverRaf) return;
    this.hoverRaf = requestAnimationFrame(() => {
      this.hoverRaf = 0;
      const t = this.targetAt(e.clientX, e.clientY);
      const g = t && (t.localName === 'g' ? t : t.parentNode);
      const title = g && g.querySelector('title');
      this.el.title = title ? title.textContent : '';
      this.el.style.cursor = t && t.localName !== 'rect' ? 'pointer' : '';
    });
  }

  // A proxy element's box in content px (PanZoom.boxOf for the canvas)
  static boxOf(el) { return el && el.__ox ? { x: el.__ox.x, y: el.__ox.y, w: el.__ox.w, h: el.__ox.h } : null; }

  inView(el) {
    const b = CanvasGraph.boxOf(el);
    const r = this.vp.getBoundingClientRect(), pz = this.pz;
    const x = pz.x + b.x * pz.k, y = pz.y + b.y * pz.k;
    return x >= 0 && y >= 0 && x + b.w * pz.k <= r.width && y + b.h * pz.k <= r.height && b.w * pz.k > 6;
  }

  // ---------------------------------------------------------------- the accessible list
  // The boxes in view as buttons (at most LIST_MAX, top to bottom), rebuilt once the view
  // is still: what a screen reader reads and where Tab goes after the view.
  scheduleList() {
    clearTimeout(this.listTimer);
    this.listTimer = setTimeout(() => this.buildList(), 200);
  }

  label(i) {
    const b = this.data.layout.nodes[i];
    const head = b.rows && b.rows[0] ? b.rows[0].text : '';
    const title = b.title || b.id;
    return head && head !== title ? `${head}: ${title}` : title;
  }

  li(i) {
    let li = this.items.get(i);
    if (li) return li;
    li = document.createElement('li');
    li.dataset.id = this.data.layout.nodes[i].id;
    li.dataset.i = i;
    const btn = document.createElement('button');
    btn.type = 'button';
    btn.tabIndex = -1;
    btn.textContent = this.label(i);
    li.append(btn);
    this.items.set(i, li);
    return li;
  }

  buildList() {
    if (!this.data) return;
    const v = this.visible();
    const box = this.data.geo.box;
    const order = v.boxes.sort((p, q) => box[4 * p + 1] - box[4 * q + 1] || box[4 * p] - box[4 * q]).slice(0, 400);
    if (this.focused >= 0 && !order.includes(this.focused)) order.push(this.focused);
    const want = new Set(order);
    for (const [i, li] of this.items) if (!want.has(i)) { li.remove(); this.items.delete(i); }
    const had = document.activeElement;
    const frag = order.map((i) => this.li(i));
    this.list.append(...frag);
    // one button is in the Tab order: the focused one, else the selection, else the first
    const sel = order.find((i) => this.boxFlags[i] & 1);
    const stop = this.focused >= 0 ? this.focused : sel !== undefined ? sel : order[0];
    for (const [i, li] of this.items) li.firstChild.tabIndex = i === stop ? 0 : -1;
    if (had && had !== document.activeElement && this.list.contains(had)) had.focus({ preventScroll: true });
    this.list.dataset.count = order.length;
  }

  listFocus(e, on) {
    const li = e.target.closest('li');
    if (!li) return;
    const i = +li.dataset.i;
    if (on) { this.focused = i; this.boxFlags[i] |= 8; } else { this.boxFlags[i] &= ~8; if (this.focused === i) this.focused = -1; }
    this.schedule();
  }

  // as nodekeys.js on the SVG: ↓ / ↑ the first consumer / producer, ← / → the other boxes
  // of that step (ordered across the drawing: by x, by y when it runs LR), Enter opens
  listKey(e) {
    const li = e.target.closest('li');
    if (!li || e.altKey || e.ctrlKey || e.metaKey) return;
    const i = +li.dataset.i;
    const id = this.data.layout.nodes[i].id;
    if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); this.activate(this.proxy.querySelector(`#nodes > [id="${CSS.escape(id)}"]`)); return; }
    const dir = { ArrowDown: 'out', ArrowUp: 'in', ArrowRight: 1, ArrowLeft: -1 }[e.key];
    if (dir === undefined) return;
    e.preventDefault();
    e.stopPropagation();
    if (!this.graph) {
      this.graph = { out: new Map(), in: new Map() };
      for (const ed of this.data.layout.edges) {
        if (ed.from === ed.to) continue;
        for (const [m, a, b] of [[this.graph.out, ed.from, ed.to], [this.graph.in, ed.to, ed.from]]) {
          if (!m.has(a)) m.set(a, []);
          if (!m.get(a).includes(b)) m.get(a).push(b);
        }
      }
    }
    const across = this.data.layout.rankdir === 'LR' ? 1 : 0;
    const boxes = (ids) => (ids || []).map((n) => this.byId.get(n)).filter((n) => n !== undefined)
      .sort((p, q) => this.data.geo.box[4 * p + across] - this.data.geo.box[4 * q + across]);
    let next;
    if (typeof dir === 'string') {
      const list = boxes(this.graph[dir].get(id));
      this.step = { list, at: 0 };
      next = list[0];
    } else {
      if (!this.step || this.step.list[this.step.at] !== i) {
        // no step yet: this box's siblings (the consumers of its first producer)
        const from = boxes(this.graph.in.get(id))[0];
        const list = from === undefined ? [] : boxes(this.graph.out.get(this.data.layout.nodes[from].id));
        this.step = { list, at: Math.max(0, list.indexOf(i)) };
      }
      const at = this.step.at + dir;
      if (at < 0 || at >= this.step.list.length) return;
      this.step.at = at;
      next = this.step.list[at];
    }
    if (next !== undefined) this.focusBox(next);
  }

  focusBox(i) {
    const li = this.li(i);
    if (!li.isConnected) this.list.append(li);
    for (const [, other] of this.items) other.firstChild.tabIndex = -1;
    li.firstChild.tabIndex = 0;
    li.firstChild.focus({ preventScroll: true });
    const g = this.proxy.querySelector(`#nodes > [id="${CSS.escape(li.dataset.id)}"]`);
    if (g && !this.inView(g)) this.pz.reveal(g, { minK: Math.max(this.pz.k, 1) });
  }
}
