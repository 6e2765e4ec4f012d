// graph.js — the service's SVG, parsed strictly and placed inline; pan and zoom by a CSS
// transform on one element, applied once per animation frame (never a re-layout).

import { getText } from './api.js';
import { SVGNS } from './util.js';

const XLINKNS = 'http://www.w3.org/1999/xlink';

// Elements our renderer emits (and a few harmless relatives).  Anything else — <script>,
// <foreignObject>, <iframe>, <image>, <use>, animation, <style> — refuses the drawing.
const ALLOWED = new Set([
  'svg', 'g', 'title', 'desc', 'rect', 'path', 'polygon', 'polyline', 'line', 'ellipse',
  'circle', 'text', 'tspan', 'defs', 'marker', 'linearGradient', 'radialGradient', 'stop',
  'clipPath',
]);

// Fetch graph.svg as text, parse it as image/svg+xml, check it, and answer an <svg> element
// imported into this document.  Throws Error with a message for people.
export async function fetchSvg(url, signal) {
  const text = await getText(url, { signal });
  return parseSvg(text);
}

export function parseSvg(text) {
  const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
  const root = doc.documentElement;
  if (doc.getElementsByTagName('parsererror').length > 0 || root.namespaceURI !== SVGNS ||
      root.localName !== 'svg') {
    throw new Error('the server sent a drawing that is not valid SVG');
  }
  const bad = unsafeContent(root);
  if (bad) throw new Error(`the drawing was refused: it contains ${bad}`);
  return document.adoptNode(root); // moved, not copied: the check holds for what is shown
}

// The attributes render/svg.c (and render/heat.c's legend) write, each with the values it
// writes: numbers, "#rrggbb" colours, a few keywords, path data.  Checking values by what
// they must be rather than by what they must not contain: CSS reads `u\72 l(`, `U/**/RL(`
// and `\75rl(` as url( (issue 35: `mask="u\72 l(/probe#m)"` made Chromium fetch it), and
// any attribute not listed here (mask, filter, clip-path, marker-*, style, href, cursor,
// xlink:*, xml:base) is refused, whatever its value.
const NUM = /^-?\d+(\.\d+)?$/;
const NUMS = /^-?\d+(\.\d+)?([ ,]+-?\d+(\.\d+)?)*$/;
const COLOUR = /^(#[0-9a-f]{3}|#[0-9a-f]{6}|none)$/i;
const ATTRS = new Map([
  ['x', NUM], ['y', NUM], ['width', NUM], ['height', NUM], ['rx', NUM], ['font-size', NUM],
  ['stroke-width', NUM], ['opacity', NUM],
  ['viewBox', NUMS], ['stroke-dasharray', NUMS], ['points', NUMS],
  ['d', /^[MC][-\d., MC]*$/], // "M x,y C x,y x,y ..." (edge_svg)
  ['fill', COLOUR], ['stroke', COLOUR],
  ['text-anchor', /^(start|middle|end)$/], ['font-weight', /^(bold|normal)$/],
  ['font-style', /^(italic|normal)$/], ['font-family', /^[A-Za-z0-9 ,-]*$/],
  ['class', /^[A-Za-z0-9 _-]*$/], ['id', /^[A-Za-z0-9_.:-]*$/],
]);
const XMLNSNS = 'http://www.w3.org/2000/xmlns/';

// The first active or unexpected thing in the tree (for the error message), or ''.
export function unsafeContent(root) {
  if (root.getElementsByTagNameNS('*', 'script').length) return 'a <script> element';
  if (root.getElementsByTagNameNS('*', 'foreignObject').length) return 'a <foreignObject> element';
  const walker = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
  for (let el = root; el; el = walker.nextNode()) {
    if (el.namespaceURI !== SVGNS || !ALLOWED.has(el.localName)) return `a <${el.localName}> element`;
    for (const a of el.attributes) {
      const n = a.localName.toLowerCase();
      if (n.charCodeAt(0) === 111 /* o */ && n.charCodeAt(1) === 110 /* n */) return `an event handler attribute (${a.name})`;
      if (n === 'href' || a.namespaceURI === XLINKNS) return `a link attribute (${a.name})`;
      if (a.namespaceURI === XMLNSNS) continue; // a namespace declaration: inert
      // data-* hold model names: inert (nothing reads them as CSS or a URL)
      if (a.namespaceURI === null && /^data-[a-z0-9-]+$/.test(a.name)) continue;
      const want = a.namespaceURI === null ? ATTRS.get(a.name) : undefined;
      if (!want) return `an attribute our renderer does not write (${a.name})`;
      if (!want.test(a.value)) return `an unexpected value of ${a.name}`;
    }
  }
  return '';
}

const clamp = (v, lo, hi) => Math.max(lo, Math.min(hi, v));

// The smallest text of a box is 9 units high (render/svg.c: rows 9, headers 11) and one
// unit of the drawing is one CSS pixel at scale 1.  The page's 100% (the zoom shown, "1:1",
// the first view of a big drawing) is READABLE: rows of 11.25 px, headers of 13.75 px, the
// size of the page's own small text (at scale 1 a row's capitals were 7 px high: too small
// to read at "100%", issue 39).  The drawing itself (SVG, PNG, layout) is unchanged.
export const READABLE = 1.25;
// Fit shows the whole drawing down to this scale (a box's outline still a shape); below,
// it fits the drawing across and starts at its top.
const FIT_WHOLE = 0.08;

// The boxes nodes[from..to) of a drawing (its g.node elements) read from their attributes
// (no layout is forced) into `out`: content px and the colour a small picture shows them
// in (a header's family colour, else the outline).  Answers `to`.
function readBoxes(nodes, from, to, out) {
  const num = (el, a) => +el.getAttribute(a) || 0;
  for (let i = from; i < to; i++) {
    const o = nodes[i].__ox; // a canvas drawing's box (canvas.js): its frame without a <rect>
    if (o) { out.push({ x: o.x, y: o.y, w: o.w, h: o.h, colour: o.colour }); continue; }
    // render/svg.c writes <title>, the frame <rect>, then (op and group boxes) the header's
    let frame = nodes[i].firstElementChild;
    if (frame && frame.localName === 'title') frame = frame.nextElementSibling;
    if (!frame || frame.localName !== 'rect') continue;
    let header = frame.nextElementSibling;
    if (header && header.localName !== 'rect') header = null;
    out.push({
      x: num(frame, 'x'), y: num(frame, 'y'), w: num(frame, 'width'), h: num(frame, 'height'),
      colour: (header && header.getAttribute('fill')) || frame.getAttribute('stroke') || '#7b8794',
    });
  }
  return to;
}

const ease = (t) => 1 - Math.pow(1 - t, 3);
const reducedMotion = () => window.matchMedia('(prefers-reduced-motion: reduce)').matches;

// Pan and zoom of `canvas` (absolutely placed in `viewport`) by translate + scale.
export class PanZoom {
  constructor(viewport, canvas, onChange) {
    this.vp = viewport;
    this.canvas = canvas;
    this.onChange = onChange || (() => {});
    this.x = 0; this.y = 0; this.k = 1;
    this.w = 0; this.h = 0; // content size in CSS px at k = 1
    this.frame = 0;
    this.anim = null;
    this.idle = 0;
    this.drag = null;
    this.dragged = false;
    this.onHome = () => this.fit(true); // the page sets where Home goes (the graph inputs)
    this.lr = false; // the drawing runs left to right (the page sets it)
    this.bind();
  }

  setContent(w, h) { this.w = w; this.h = h; }

  minScale() {
    const r = this.vp.getBoundingClientRect();
    const fit = Math.min(r.width / Math.max(1, this.w), r.height / Math.max(1, this.h));
    return Math.max(0.005, Math.min(0.05, fit * 0.5));
  }

  // Schedule the transform for the next frame (one write per frame whatever the events).
  apply() {
    this.canvas.classList.add('moving');
    clearTimeout(this.idle);
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => this.flush());
  }

  // Write the transform now (also what the scheduled frame does).
  flush() {
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = 0;
    this.canvas.style.transform = `translate(${this.x}px, ${this.y}px) scale(${this.k})`;
    // once still (counted from the last write: a slow frame is not stillness), drop
    // will-change so that the browser redraws the SVG sharp at this scale
    clearTimeout(this.idle);
    this.idle = setTimeout(() => this.canvas.classList.remove('moving'), 180);
    this.onChange(this);
  }

  set(x, y, k) {
    this.x = x; this.y = y; this.k = k;
    this.apply();
  }

  // Zoom by factor f around the viewport point (px, py) (default: the centre).
  zoomBy(f, px, py, animate = false) {
    const r = this.vp.getBoundingClientRect();
    if (px === undefined) { px = r.width / 2; py = r.height / 2; }
    const k = clamp(this.k * f, this.minScale(), 8);
    const x = px - (px - this.x) * (k / this.k);
    const y = py - (py - this.y) * (k / this.k);
    if (animate) this.animateTo(x, y, k); else { this.stop(); this.set(x, y, k); }
  }

  panBy(dx, dy, animate = false) {
    if (animate) this.animateTo(this.x + dx, this.y + dy, this.k);
    else { this.stop(); this.set(this.x + dx, this.y + dy, this.k); }
  }

  // The whole drawing in view; a drawing so long that all of it would be an unreadable
  // strip (under FIT_WHOLE) is fitted across instead, from its start: its width fills the
  // view, its top (left, when lr) at the edge (a 2.1% strip told nothing, issue 39).
  fit(animate = false, lr = this.lr) {
    const r = this.vp.getBoundingClientRect();
    const pad = 24;
    const kw = (r.width - 2 * pad) / Math.max(1, this.w), kh = (r.height - 2 * pad) / Math.max(1, this.h);
    let k = Math.min(kw, kh);
    const across = lr ? kh : kw; // fits across the direction the graph runs
    const strip = k < FIT_WHOLE && across >= 2 * k;
    if (strip) k = Math.min(across, 1.5);
    else k = Math.max(0.01, clamp(k, this.minScale(), 1.5));
    let x = (r.width - this.w * k) / 2;
    let y = (r.height - this.h * k) / 2;
    if (strip && lr) x = pad;
    else if (strip) y = pad;
    else if (this.h * k > r.height) y = pad; // at 1%, still longer than the view: its top
    if (animate) this.animateTo(x, y, k); else { this.stop(); this.set(x, y, k); }
  }

  // The first view of a drawing: all of it when its text is readable so, else the start
  // of the graph at a readable scale (READABLE): `start` (content px; the graph inputs)
  // at the top edge, or the left edge when `lr`, centred across when it fits.
  home(start, { lr = false, animate = false } = {}) {
    const r = this.vp.getBoundingClientRect();
    const pad = 24;
    const fitK = Math.min((r.width - 2 * pad) / Math.max(1, this.w), (r.height - 2 * pad) / Math.max(1, this.h));
    if (fitK >= READABLE || !start) { this.fit(animate); return; }
    const k = READABLE;
    let x, y;
    if (lr) {
      x = pad - start.x * k;
      y = start.h * k <= r.height - 2 * pad ? r.height / 2 - (start.y + start.h / 2) * k : pad - start.y * k;
    } else {
      y = pad - start.y * k;
      x = start.w * k <= r.width - 2 * pad ? r.width / 2 - (start.x + start.w / 2) * k : pad - start.x * k;
    }
    // a drawing narrower (lower) than the view is centred; a wider one leaves no empty
    // margin beyond its edges
    if (this.w * k <= r.width) x = (r.width - this.w * k) / 2;
    else x = clamp(x, r.width - pad - this.w * k, pad);
    if (this.h * k <= r.height) y = (r.height - this.h * k) / 2;
    else y = clamp(y, r.height - pad - this.h * k, pad);
    // unless what the first screen holds (every box of it, not only the inputs) fits
    // across: then it is centred, whatever margin that leaves (a graph that drifts to one
    // side of a wide drawing opened hugging the view's edge, empty across the rest;
    // issue 39)
    const band = start.band;
    if (band && lr && band.h * k <= r.height - 2 * pad && this.h * k > r.height) y = r.height / 2 - (band.y + band.h / 2) * k;
    if (band && !lr && band.w * k <= r.width - 2 * pad && this.w * k > r.width) x = r.width / 2 - (band.x + band.w / 2) * k;
    if (animate) this.animateTo(x, y, k); else { this.stop(); this.set(x, y, k); }
  }

  actualSize() {
    const r = this.vp.getBoundingClientRect();
    // keep the point at the centre of the viewport where it is
    this.zoomBy(READABLE / this.k, r.width / 2, r.height / 2, true);
  }

  // Centre content point (cx, cy) (CSS px at k = 1); zoom to k when given.
  centreOn(cx, cy, k = this.k, animate = true) {
    const r = this.vp.getBoundingClientRect();
    const x = r.width / 2 - cx * k;
    const y = r.height / 2 - cy * k;
    if (animate) this.animateTo(x, y, k); else { this.stop(); this.set(x, y, k); }
  }

  // Content box (CSS px at k = 1) of an element inside the drawing: from its SVG bounding
  // box and the matrix to the <svg>'s viewport, so independent of the CSS transform (which
  // may not be applied yet).
  boxOf(el) {
    // a box of a canvas drawing (canvas.js): its box is known, nothing to measure
    if (el.__ox) return { x: el.__ox.x, y: el.__ox.y, w: el.__ox.w, h: el.__ox.h };
    const svg = el.ownerSVGElement || el;
    const b = el.getBBox();
    const m = el.getCTM();
    const sx = svg.width.baseVal.value / (svg.viewBox.baseVal && svg.viewBox.baseVal.width ? svg.viewBox.baseVal.width : svg.width.baseVal.value);
    if (!m) return { x: b.x * sx, y: b.y * sx, w: b.width * sx, h: b.height * sx };
    const p = svg.createSVGPoint();
    p.x = b.x; p.y = b.y;
    const a = p.matrixTransform(m);
    p.x = b.x + b.width; p.y = b.y + b.height;
    const c = p.matrixTransform(m);
    return { x: Math.min(a.x, c.x), y: Math.min(a.y, c.y), w: Math.abs(c.x - a.x), h: Math.abs(c.y - a.y) };
  }

  // Bring an element into view at a readable zoom (at least minK): centred when it fits,
  // else its top (or left, for a wide one) at the edge of the view.
  reveal(el, { minK = READABLE, animate = true } = {}) {
    const b = this.boxOf(el);
    const r = this.vp.getBoundingClientRect();
    let k = Math.max(this.k, minK);
    // small boxes are not blown up past 2; big ones shrink to fit, down to minK
    k = Math.min(k, 2, Math.max(minK, Math.min((r.width * 0.85) / Math.max(1, b.w), (r.height * 0.85) / Math.max(1, b.h))));
    k = clamp(k, this.minScale(), 8);
    let cx = b.x + b.w / 2, cy = b.y + b.h / 2;
    const pad = 28;
    if (b.h * k > r.height - 2 * pad) cy = b.y + (r.height / 2 - pad) / k;
    if (b.w * k > r.width - 2 * pad) cx = b.x + (r.width / 2 - pad) / k;
    this.centreOn(cx, cy, k, animate);
  }

  stop() {
    if (this.anim) cancelAnimationFrame(this.anim.raf);
    this.anim = null;
    delete this.canvas.dataset.animating;
  }

  animateTo(x, y, k) {
    this.stop();
    if (reducedMotion()) { this.set(x, y, k); return; }
    const from = { x: this.x, y: this.y, k: this.k };
    const t0 = performance.now();
    const dur = 260;
    const step = (now) => {
      const t = Math.min(1, (now - t0) / dur);
      const e = ease(t);
      // interpolate the scale geometrically so zooming feels even
      const kk = from.k * Math.pow(k / from.k, e);
      // keep the path of the target point straight in screen space
      const fx = from.x + (x - from.x) * e;
      const fy = from.y + (y - from.y) * e;
      this.set(fx, fy, kk);
      if (t < 1) this.anim.raf = requestAnimationFrame(step);
      else { this.anim = null; delete this.canvas.dataset.animating; }
    };
    this.anim = { raf: requestAnimationFrame(step) };
    this.canvas.dataset.animating = '1'; // until the last step (tests wait on it)
  }

  bind() {
    const vp = this.vp;
    vp.addEventListener('wheel', (e) => {
      e.preventDefault();
      const r = vp.getBoundingClientRect();
      const unit = e.deltaMode === 1 ? 16 : e.deltaMode === 2 ? r.height : 1;
      if (e.shiftKey && !e.ctrlKey) { // horizontal pan
        this.panBy(-(e.deltaY || e.deltaX) * unit, 0);
        return;
      }
      const speed = e.ctrlKey ? 0.01 : 0.0022; // pinch gestures arrive as ctrl+wheel
      const f = Math.exp(-e.deltaY * unit * speed);
      this.zoomBy(f, e.clientX - r.left, e.clientY - r.top);
    }, { passive: false });

    vp.addEventListener('pointerdown', (e) => {
      if (e.button !== 0) return;
      this.stop();
      this.drag = { id: e.pointerId, sx: e.clientX, sy: e.clientY, x: this.x, y: this.y, on: false };
      this.dragged = false;
    });
    vp.addEventListener('pointermove', (e) => {
      const d = this.drag;
      if (!d || d.id !== e.pointerId) return;
      const dx = e.clientX - d.sx, dy = e.clientY - d.sy;
      if (!d.on && Math.hypot(dx, dy) > 4) {
        d.on = true;
        this.dragged = true;
        vp.setPointerCapture(e.pointerId);
        vp.classList.add('dragging');
      }
      if (d.on) this.set(d.x + dx, d.y + dy, this.k);
    });
    const end = (e) => {
      if (!this.drag || this.drag.id !== e.pointerId) return;
      if (this.drag.on) vp.releasePointerCapture(e.pointerId);
      vp.classList.remove('dragging');
      this.drag = null;
      // the click that follows a drag is not a click on a node
      setTimeout(() => { this.dragged = false; }, 0);
    };
    vp.addEventListener('pointerup', end);
    vp.addEventListener('pointercancel', end);

    vp.addEventListener('keydown', (e) => {
      if (e.target !== vp || e.altKey || e.metaKey || e.ctrlKey) return;
      const step = e.shiftKey ? 320 : 80;
      const keys = {
        ArrowLeft: () => this.panBy(step, 0, true),
        ArrowRight: () => this.panBy(-step, 0, true),
        ArrowUp: () => this.panBy(0, step, true),
        ArrowDown: () => this.panBy(0, -step, true),
        '+': () => this.zoomBy(1.25, undefined, undefined, true),
        '=': () => this.zoomBy(1.25, undefined, undefined, true),
        '-': () => this.zoomBy(0.8, undefined, undefined, true),
        _: () => this.zoomBy(0.8, undefined, undefined, true),
        0: () => this.fit(true),
        1: () => this.actualSize(),
        PageDown: () => this.panBy(0, -vp.clientHeight * 0.8, true),
        PageUp: () => this.panBy(0, vp.clientHeight * 0.8, true),
        Home: () => this.onHome(),
      };
      const f = keys[e.key];
      if (f) { e.preventDefault(); f(); }
    });
  }
}

// Stubs cut from one long edge share data-value and data-peer (the producing box): the
// "x →" stub sits under the producer, the "→ x" stubs above the consumers.
export function stubPeers(svg, stub) {
  const v = stub.getAttribute('data-value');
  const p = stub.getAttribute('data-peer');
  const out = [];
  for (const s of svg.querySelectorAll('g.node[data-kind^="stub"]')) {
    if (s !== stub && s.getAttribute('data-value') === v && s.getAttribute('data-peer') === p) out.push(s);
  }
  return out;
}

// A box's frame in content px, {x, y, w, h, dashed}, read from attributes (no layout):
// its own <rect> (render/svg.c: the first child <rect>; a run's stack copies are in a
// <g class="stack"> before it), or a canvas drawing's __ox (canvas.js: no <rect>); null
// for a box without one.  startBox, the side by side's pairs and the run buttons read it.
export function boxFrame(g) {
  if (g.__ox) return g.__ox;
  const r = g.querySelector(':scope > rect');
  return r && { x: +r.getAttribute('x') || 0, y: +r.getAttribute('y') || 0, w: +r.getAttribute('width') || 0, h: +r.getAttribute('height') || 0, dashed: r.hasAttribute('stroke-dasharray') };
}

// Where a drawing starts, for its first view (PanZoom.home): the box around its graph
// inputs (terminals of values nobody produces, dashed, left out) that lie within one view
// (vw x vh content px) of the first, the first being the topmost (leftmost when `lr`);
// without inputs the first box of the drawing.  Read from attributes: no layout.
export function startBox(svg, lr, vw, vh) {
  const all = [...svg.querySelectorAll('g.node')].map(boxFrame).filter(Boolean);
  let boxes = [...svg.querySelectorAll('g.node[data-kind="input"]')].map(boxFrame).filter((b) => b && !b.dashed);
  if (!boxes.length) boxes = all;
  if (!boxes.length) return null;
  const along = lr ? (b) => b.x : (b) => b.y;
  let first = Infinity;
  for (const b of boxes) first = Math.min(first, along(b));
  const union = (bs) => {
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const b of bs) {
      if (along(b) < first || along(b) > first + (lr ? vw : vh)) continue;
      x0 = Math.min(x0, b.x); y0 = Math.min(y0, b.y);
      x1 = Math.max(x1, b.x + b.w); y1 = Math.max(y1, b.y + b.h);
    }
    return x0 === Infinity ? null : { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
  };
  // band: every box of that first screen, not only the inputs (home() centres it when it
  // fits: inputs off to one side of the drawing left the view hugging its edge, issue 39)
  return { ...union(boxes), band: union(all) };
}

// A small picture of the whole drawing in a corner of the view, for drawings larger than
// the view: the boxes as rectangles of their colour on a canvas (drawn once per drawing:
// cheap for 10,000 boxes, no copy of the SVG), the part in view as a frame over it.
// Clicking or dragging on it moves the view there.
// It folds away (a "Map" button brings it back) while the side panel is open: the view is
// narrower then and it covered the boxes beside the selected one (issue 39); a fold or an
// unfold chosen by hand holds until the panel opens or closes.
export class Minimap {
  constructor(el, pz, { toggle = null, sideOpen = () => false } = {}) {
    this.el = el;
    this.pz = pz;
    this.toggle = toggle;
    this.sideOpen = sideOpen;
    this.userFold = null;     // null: folded while the side panel is open
    this.lastSide = null;
    if (toggle) toggle.addEventListener('click', () => { this.userFold = !this.folded(); this.update(); });
    this.canvas = el.querySelector('canvas');
    this.frame = el.querySelector('.minimap-view');
    this.sx = 0; this.sy = 0; // minimap px per content px
    this.on = false;          // a drawing is set and read
    this.gen = 0;             // which set() is being read
    this.drag = null;
    el.addEventListener('pointerdown', (e) => {
      if (e.button !== 0 || !this.on) return;
      e.preventDefault();
      this.drag = e.pointerId;
      el.setPointerCapture(e.pointerId);
      el.classList.add('dragging');
      this.moveTo(e, true);
    });
    el.addEventListener('pointermove', (e) => { if (this.drag === e.pointerId) this.moveTo(e, false); });
    const end = (e) => {
      if (this.drag !== e.pointerId) return;
      this.drag = null;
      el.releasePointerCapture(e.pointerId);
      el.classList.remove('dragging');
    };
    el.addEventListener('pointerup', end);
    el.addEventListener('pointercancel', end);
  }

  // The drawing (its <svg>, null: none) and its size in content px.  Its boxes are read
  // 2,000 at a time, a task each, so that a big drawing does not hold up the page; the
  // time taken to read them and to draw them goes into data-read-ms and data-draw-ms (the
  // web benchmark prints them).
  set(svg, w, h) {
    const gen = ++this.gen;
    this.on = false;
    this.data = null;
    this.cw = w; this.ch = h;
    this.drawn = false;
    delete this.el.dataset.readMs;
    delete this.el.dataset.drawMs;
    this.update();
    if (!svg) return;
    const nodes = svg.querySelectorAll('g.node');
    const num = (el, a) => +el.getAttribute(a) || 0;
    const data = { boxes: [], clusters: [] };
    for (const c of svg.querySelectorAll('g.cluster > rect')) {
      data.clusters.push({ x: num(c, 'x'), y: num(c, 'y'), w: num(c, 'width'), h: num(c, 'height') });
    }
    let next = 0, spent = 0;
    const step = () => {
      if (gen !== this.gen) return; // another drawing meanwhile
      const t0 = performance.now();
      next = readBoxes(nodes, next, Math.min(nodes.length, next + 2000), data.boxes);
      spent += performance.now() - t0;
      if (next < nodes.length) { setTimeout(step, 0); return; }
      this.data = data;
      this.on = true;
      this.el.dataset.readMs = spent.toFixed(1);
      this.update();
    };
    step();
  }

  folded() { return this.userFold === null ? this.sideOpen() : this.userFold; }

  draw() {
    const t0 = performance.now();
    const { boxes, clusters } = this.data;
    const w = this.cw, h = this.ch;
    // at most 200 x 240 px (less in a low window), aspect kept unless the drawing is so
    // long and narrow that it would be a sliver: then at least 56 px wide; drawn again
    // when the view's height changes (its size follows the window's, never the first one's)
    const vp = this.pz.vp.getBoundingClientRect();
    this.drawnH = vp.height;
    const maxW = 200, maxH = Math.max(80, Math.min(240, vp.height * 0.4));
    const s = Math.min(maxW / Math.max(1, w), maxH / Math.max(1, h));
    this.sy = s;
    this.sx = Math.max(s, Math.min(maxW, 56) / Math.max(1, w));
    const cw = Math.max(8, Math.round(w * this.sx)), chh = Math.max(8, Math.round(h * this.sy));
    const dpr = window.devicePixelRatio || 1;
    this.canvas.width = Math.round(cw * dpr);
    this.canvas.height = Math.round(chh * dpr);
    this.el.style.width = `${cw}px`;
    this.el.style.height = `${chh}px`;
    const g = this.canvas.getContext('2d');
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.clearRect(0, 0, this.canvas.width, this.canvas.height);
    const fx = this.sx * dpr, fy = this.sy * dpr;
    g.fillStyle = '#e8eef5';
    for (const c of clusters) g.fillRect(c.x * fx, c.y * fy, Math.max(1, c.w * fx), Math.max(1, c.h * fy));
    // one path per colour: a few fills for any number of boxes
    const paths = new Map();
    for (const b of boxes) {
      let p = paths.get(b.colour);
      if (!p) { p = new Path2D(); paths.set(b.colour, p); }
      p.rect(b.x * fx, b.y * fy, Math.max(1, b.w * fx), Math.max(1, b.h * fy));
    }
    for (const [colour, p] of paths) { g.fillStyle = colour; g.fill(p); }
    this.drawn = true;
    this.el.dataset.drawMs = (performance.now() - t0).toFixed(1);
  }

  // Show it when the drawing is larger than the view, and frame the part in view.
  update() {
    const pz = this.pz;
    const r = pz.vp.getBoundingClientRect();
    const larger = this.on && r.width > 0 && (this.cw * pz.k > r.width + 1 || this.ch * pz.k > r.height + 1);
    const side = this.sideOpen();
    if (side !== this.lastSide) { this.lastSide = side; this.userFold = null; }
    const show = larger && !this.folded();
    if (this.el.hidden === show) this.el.hidden = !show;
    if (this.toggle) {
      this.toggle.hidden = !larger;
      if (!show) this.toggle.style.bottom = '';
      this.toggle.textContent = show ? '×' : 'Map';
      this.toggle.setAttribute('aria-label', show ? 'Hide the map of the drawing' : 'Show the map of the drawing');
      this.toggle.setAttribute('aria-expanded', String(show));
      this.toggle.classList.toggle('open', show);
    }
    if (!show) return;
    if (!this.drawn || Math.abs(this.drawnH - r.height) > 1) this.draw();
    if (this.toggle) this.toggle.style.bottom = `${14 + (parseFloat(this.el.style.height) || 0) + 4}px`;
    const x0 = -pz.x / pz.k, y0 = -pz.y / pz.k;
    const left = x0 * this.sx, top = y0 * this.sy;
    const w = (r.width / pz.k) * this.sx, h = (r.height / pz.k) * this.sy;
    this.frame.style.transform = `translate(${left}px, ${top}px)`;
    this.frame.style.width = `${Math.max(4, w)}px`;
    this.frame.style.height = `${Math.max(4, h)}px`;
  }

  // Centre the view on the point of the drawing under the pointer.
  moveTo(e, animate) {
    const b = this.canvas.getBoundingClientRect();
    const cx = clamp((e.clientX - b.left) / this.sx, 0, this.cw);
    const cy = clamp((e.clientY - b.top) / this.sy, 0, this.ch);
    this.pz.centreOn(cx, cy, this.pz.k, animate);
  }
}
