// graph.js — the service's SVG, parsed strictly and placed inline; pan and zoom by a CSS
// transform on one element, applied once per animation frame (never a re-layout).

import { getText } from './api.js';

const SVGNS = 'http://www.w3.org/2000/svg';
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
      // data-* hold model names (inert); presentation attributes must not load anything
      const v = a.value;
      if ((v.indexOf('(') >= 0 || v.indexOf(':') >= 0) && !n.startsWith('data-') &&
          /url\s*\(|javascript:|expression\s*\(/i.test(v)) {
        return `an attribute with a URL (${a.name})`;
      }
    }
  }
  return '';
}

const clamp = (v, lo, hi) => Math.max(lo, Math.min(hi, v));
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
    // once still, drop will-change so that the browser redraws the SVG sharp at this scale
    this.idle = setTimeout(() => this.canvas.classList.remove('moving'), 180);
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => this.flush());
  }

  // Write the transform now (also what the scheduled frame does).
  flush() {
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = 0;
    this.canvas.style.transform = `translate(${this.x}px, ${this.y}px) scale(${this.k})`;
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

  // The whole drawing in view; `initial`: a tall drawing that would be tiny is shown at a
  // readable scale from its top instead.
  fit(animate = false, initial = false) {
    const r = this.vp.getBoundingClientRect();
    const pad = 24;
    let k = Math.min((r.width - 2 * pad) / Math.max(1, this.w), (r.height - 2 * pad) / Math.max(1, this.h));
    const tooSmall = k < 0.01; // a drawing hundreds of screens long: its top, at 1%
    k = tooSmall ? 0.01 : clamp(k, this.minScale(), 1.5);
    let x = (r.width - this.w * k) / 2;
    let y = tooSmall ? pad : (r.height - this.h * k) / 2;
    if (initial && k < 0.45) {
      k = clamp((r.width - 2 * pad) / Math.max(1, this.w), 0.45, 1);
      x = (r.width - this.w * k) / 2;
      y = pad;
    }
    if (animate) this.animateTo(x, y, k); else { this.stop(); this.set(x, y, k); }
  }

  actualSize() {
    const r = this.vp.getBoundingClientRect();
    // keep the point at the centre of the viewport where it is
    this.zoomBy(1 / this.k, r.width / 2, r.height / 2, true);
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
  reveal(el, { minK = 0.8, animate = true } = {}) {
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
        Home: () => this.fit(true, true),
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
