// sidebyside.js — the diff side by side (issue 37, decision 96; Netron #705, #1543, #1544,
// Model Explorer #46): A's drawing and B's in two panes, each the model's own (graph.svg,
// or the layout JSON on a canvas for a big full detail: canvas.js), its boxes marked from
// the diff document's pairing of nodes (added, removed, changed; a scope box holding a
// change).  Pan, zoom and selection follow each other through that pairing: a box selected
// in one pane selects its pair in the other and centres it; the pane being moved leads and
// the other keeps the pair nearest the leader's centre under the same spot of its own
// view, at the same scale.  diff.js loads the document and the list of changes and hands
// the route's selection here; app.js holds the switch between this and the single view.

import { modelUrl } from './api.js';
import { boxFrame, fetchSvg, PanZoom, READABLE, startBox } from './graph.js';
import { CanvasGraph, buildProxy, loadLayout, wantCanvas } from './canvas.js';
import { initNodeKeys } from './nodekeys.js';
import { clear, fmtInt, groupOf, inSpan, pathAttr, spanOf } from './util.js';

// The changed scopes opened in both drawings go into the drawing's expand= (render/oxr.h:
// OXR_EXPAND_MAX is 1024 bytes with the route's own entries); past this many characters
// they stay collapsed and their scope boxes carry the mark instead.
const EXPAND_TEXT_MAX = 700;
// Changed nodes folded into a row or a named pattern's box are drawn on their own
// (unfold=, as the page's search does for one node) on each side: their ids, up to this
// many characters (render/oxr.h: OXR_UNFOLD_MAX is 512); past it they stay folded.
const UNFOLD_TEXT_MAX = 400;
// The anchor of the sync stays while it is this near the leader's centre (a fraction of
// the view each way): switching anchors at every frame would make the follower jitter.
const ANCHOR_KEEP = 0.3;

const scopeOf = (name) => { const i = (name || '').lastIndexOf('/'); return i > 0 ? name.slice(0, i) : ''; };
const OTHER = { a: 'b', b: 'a' };
const NAME = { a: 'A', b: 'B' };

// The expand entries opening the scopes that hold a change (the deepest only: an entry
// keeps its ancestors open, docs/render.md), beside the route's own; the route's alone
// when they would not fit.
export function changedExpand(doc, own) {
  const scopes = new Set();
  for (const n of doc.nodes) if (n.status !== 'unchanged' && scopeOf(n.name)) scopes.add(scopeOf(n.name));
  const deepest = [...scopes].filter((s) => ![...scopes].some((t) => t !== s && t.startsWith(`${s}/`))).sort();
  const all = [...new Set([...own, ...deepest])];
  return all.join(',').length <= EXPAND_TEXT_MAX ? all : own;
}

// Side s's node ids of the changes, for unfold=, beside the route's own; the route's alone
// when they would not fit.
export function changedUnfold(doc, s, own) {
  const ids = doc.nodes.filter((n) => n.status !== 'unchanged' && n[s]).map((n) => n[s]);
  const all = [...new Set([...own, ...ids])];
  return all.join(',').length <= UNFOLD_TEXT_MAX ? all : own;
}

// A box's centre in content px (its frame: graph.js), null for a box without a frame.
const centreOf = (g) => { const r = boxFrame(g); return r && { cx: r.x + r.w / 2, cy: r.y + r.h / 2 }; };

// What a pane shows (one side of the comparison): its drawing, view, keyboard and list.
class Pane {
  constructor(side, el, owner) {
    this.side = side;
    this.el = el;
    this.vp = el.querySelector('.viewport');
    this.canvas = el.querySelector('.canvas');
    this.note = el.querySelector('.sbs-note');
    this.title = el.querySelector('.sbs-name');
    this.svg = null;
    this.pz = new PanZoom(this.vp, this.canvas, () => {
      if (this.cv.active) this.cv.draw();
      owner.moved(this);
    });
    this.cv = new CanvasGraph(this.vp, this.pz, { activate: (g) => owner.activate(this, g), listEl: el.querySelector('.sbs-list') });
    this.keys = initNodeKeys({
      canvas: this.canvas, viewport: this.vp, lr: () => owner.lr,
      reveal: (g) => { if (!this.inView(g)) { owner.lead = this; this.pz.reveal(g, { minK: Math.max(this.pz.k, READABLE) }); } },
      activate: (g) => owner.activate(this, g),
    });
    // whatever the person touches leads the other pane (the list of a canvas drawing is
    // outside the view, inside the pane)
    for (const ev of ['pointerdown', 'wheel', 'keydown', 'focusin']) el.addEventListener(ev, () => owner.touched(this), { capture: true, passive: true });
    this.vp.addEventListener('click', (e) => {
      if (this.pz.dragged || !this.svg) return;
      const t = e.target === this.cv.el ? this.cv.targetAt(e.clientX, e.clientY) : e.target;
      const g = t && t.closest && t.closest('g.node');
      if (g) owner.activate(this, g);
    });
    new ResizeObserver(() => this.cv.schedule()).observe(this.vp);
  }

  clear() {
    this.svg = null;
    this.cv.clear();
    clear(this.canvas);
    this.keys.attach(null);
    this.note.textContent = '';
    delete this.canvas.dataset.model;
  }

  // Show model `id` drawn with render query `key` (a canvas when it is a big full detail);
  // `mark(g)` answers a box's mark.  Throws as the requests do.
  async load(id, key, nodes, group, mark, signal) {
    const url = (ext) => `${modelUrl(id)}/graph.${ext}${key ? `?${key}` : ''}`;
    let svg, layout = null;
    if (wantCanvas(nodes, group)) {
      layout = await loadLayout(url('json'), signal);
      svg = buildProxy(layout.layout);
    } else {
      svg = await fetchSvg(url('svg'), signal);
    }
    for (const g of svg.querySelectorAll('g.node')) {
      const m = mark(g);
      if (!m) continue;
      g.classList.add(`sbs-${m}`);
      g.setAttribute('data-sbs', m);
      // the canvas draws a box's mark from its layout (canvas.js boxStyle: tint, outline)
      if (layout && g.__ox) layout.layout.nodes[g.__ox.box].mark = m === 'holds' ? 'changed' : m;
    }
    return { svg, layout };
  }

  // Put a loaded drawing on screen (both panes appear together).
  show(id, { svg, layout }, lr) {
    this.id = id;
    if (layout) { clear(this.canvas); this.cv.show(layout, svg); } else { this.cv.clear(); clear(this.canvas).append(svg); }
    svg.setAttribute('focusable', 'false');
    svg.setAttribute('role', 'group');
    svg.setAttribute('aria-label', `${NAME[this.side]}'s drawing: Tab reaches a box, the arrows move along the edges, Enter selects it and its pair`);
    this.svg = svg;
    this.canvas.dataset.model = id;
    this.canvas.dataset.renderer = layout ? 'canvas' : 'svg';
    const w = +svg.getAttribute('width') || 100, h = +svg.getAttribute('height') || 100;
    this.pz.setContent(w, h);
    this.keys.attach(layout ? null : svg, null);
    const vr = this.vp.getBoundingClientRect();
    const start = startBox(svg, lr, vr.width / READABLE, vr.height / READABLE);
    this.pz.onHome = () => this.pz.home(start, { lr, animate: true });
    this.pz.home(start, { lr });
  }

  boxes() { return this.svg ? +this.svg.getAttribute('data-boxes') || this.svg.querySelectorAll('g.node').length : 0; }

  inView(g) {
    this.pz.flush();
    if (g.__ox) return this.cv.inView(g);
    const r = g.getBoundingClientRect(), v = this.vp.getBoundingClientRect();
    return r.left >= v.left && r.right <= v.right && r.top >= v.top && r.bottom <= v.bottom && r.width > 6;
  }

  box(sel) { return this.svg ? this.svg.querySelector(sel) : null; }
}

export class SideBySide {
  // root: the element holding the two panes (.sbs-pane[data-side=a|b]); deps: {pick(side,
  // box id): the route's selection, zoomed(pz): the toolbar's zoom level}
  constructor(root, deps) {
    this.root = root;
    this.d = deps;
    this.a = new Pane('a', root.querySelector('[data-side="a"]'), this);
    this.b = new Pane('b', root.querySelector('[data-side="b"]'), this);
    this.panes = { a: this.a, b: this.b };
    this.lead = this.a;
    this.lr = false;
    this.key = null;
    this.ctl = null;
    this.pairs = [];   // [{a: {cx, cy}, b: {cx, cy}, ga, gb}]: boxes drawn on both sides
    this.anchor = null;
    this.pinned = false; // the anchor is a selected pair: kept until the next touch
    this.loading = false;
  }

  // A pane is touched (pointer, wheel, key, focus): it leads, and a selection's anchor
  // gives way to the nearest pair again.
  touched(p) {
    this.lead = p;
    this.pinned = false;
  }

  get active() { return !this.root.hidden; }

  clear() {
    if (this.ctl) this.ctl.abort();
    this.key = null;
    this.a.clear();
    this.b.clear();
    this.pairs = [];
    this.setAnchor(null);
  }

  // Draw A and B (doc: the diff document; query(expand, unfold): a render query); answers when
  // both are on screen.  Throws as the requests do (an AbortError when superseded).
  async load({ a, b, doc, route, query, names }) {
    const expand = route.opts.group === 'none' ? route.expand : changedExpand(doc, route.expand);
    const keys = { a: query(expand, changedUnfold(doc, 'a', route.unfold)), b: query(expand, changedUnfold(doc, 'b', route.unfold)) };
    const whole = `${a}|${b}|${keys.a}|${keys.b}`;
    this.lr = route.opts.rankdir === 'LR';
    if (whole === this.key) return;
    if (this.ctl) this.ctl.abort();
    const ctl = new AbortController();
    this.ctl = ctl;
    this.key = null;
    this.index(doc);
    const sides = { a, b };
    this.loading = true;
    try {
      const [da, db] = await Promise.all(['a', 'b'].map((s) => this.panes[s].load(sides[s], keys[s], +(doc[s] && doc[s].nodes) || 0, route.opts.group, (g) => this.markOf(s, g), ctl.signal)));
      if (ctl.signal.aborted) throw new DOMException('aborted', 'AbortError');
      this.root.hidden = false;
      this.a.show(a, da, this.lr);
      this.b.show(b, db, this.lr);
    } finally {
      this.loading = false;
    }
    for (const s of ['a', 'b']) this.panes[s].title.textContent = `${names(sides[s])} · ${fmtInt(this.panes[s].boxes())} boxes`;
    this.pairUp();
    this.key = whole;
    // both open at A's start (its graph inputs), B in step with it
    this.lead = this.a;
    this.moved(this.a);
  }

  // The document's nodes by their id on each side, and the scopes holding a change.
  index(doc) {
    this.doc = doc;
    this.byId = { a: new Map(), b: new Map() };
    this.changedNames = { a: [], b: [] };
    for (const n of doc.nodes) {
      if (n.a) this.byId.a.set(n.a, n);
      if (n.b) this.byId.b.set(n.b, n);
      if (n.status === 'unchanged') continue;
      if (n.a) this.changedNames.a.push(n.name);
      if (n.b) this.changedNames.b.push(n.name);
    }
  }

  // A box's mark on side s: its node's status, or 'holds' for a scope box (or a run of
  // them) holding a change; null when nothing differs.
  markOf(s, g) {
    const id = g.getAttribute('data-node');
    if (id) {
      const n = this.byId[s].get(id);
      return n && n.status !== 'unchanged' ? n.status : null;
    }
    if (g.getAttribute('data-kind') !== 'group') return null;
    const path = groupOf(g);
    const all = pathAttr(g, 'data-open-all');
    const span = all ? spanOf(all.replace(/\/\*$/, '')) : null;
    const holds = (name) => (path && name.startsWith(`${path}/`)) || (span && inSpan(span, scopeOf(name)));
    return this.changedNames[s].some(holds) ? 'holds' : null;
  }

  // Box g of pane p: the node entry of the document it draws, or null.
  entryOf(p, g) {
    const id = g.getAttribute('data-node');
    return id ? this.byId[p.side].get(id) || null : null;
  }

  // The box in the other pane that pairs with g: {el, exact, why}.  exact: the same node
  // (or scope, or graph input/output) drawn there; otherwise el is the scope box holding
  // it (exact false), or null with why (only on this side; not drawn there).
  pairOf(p, g) {
    const q = this.panes[OTHER[p.side]];
    if (!q.svg) return { el: null, why: 'not drawn' };
    const kind = g.getAttribute('data-kind');
    const id = g.getAttribute('data-node');
    if (id) {
      const n = this.byId[p.side].get(id);
      if (!n) return { el: null, why: 'not in the comparison' };
      const other = n[q.side];
      if (!other) return { el: null, why: `only in ${NAME[p.side]} (${n.status})`, alone: true };
      const el = q.box(`g.node[data-node="${CSS.escape(other)}"]`);
      if (el) return { el, exact: true };
      const holder = this.holderOf(q, n.name);
      return holder ? { el: holder, exact: false, why: `inside ${groupOf(holder)} in ${NAME[q.side]}` } : { el: null, why: `not drawn as a box in ${NAME[q.side]}` };
    }
    if (kind === 'group') {
      const path = g.getAttribute('data-group');
      const el = q.box(`g.node[data-group="${CSS.escape(path)}"]`) || q.box(`g.cluster[data-group="${CSS.escape(path)}"]`);
      if (el) return { el, exact: true };
      return { el: null, why: `not drawn as one box in ${NAME[q.side]}` };
    }
    if (kind === 'input' || kind === 'output') {
      const title = (g.querySelector('title') || {}).textContent;
      const el = title && [...q.svg.querySelectorAll(`g.node[data-kind="${kind}"]`)].find((x) => (x.querySelector('title') || {}).textContent === title);
      if (el) return { el, exact: true };
      return { el: null, why: `no graph ${kind} of that name in ${NAME[q.side]}` };
    }
    return { el: null, why: 'not paired' };
  }

  // The deepest scope box of pane q holding node name, or null.
  holderOf(q, name) {
    let best = null, depth = -1;
    for (const g of q.svg.querySelectorAll('g.node[data-kind="group"]')) {
      const path = groupOf(g) || '';
      if (!name.startsWith(`${path}/`)) continue;
      const dd = path.split('/').length;
      if (dd > depth) { best = g; depth = dd; }
    }
    return best;
  }

  // The boxes drawn on both sides as the same thing: the anchors of the sync.
  pairUp() {
    this.pairs = [];
    this.setAnchor(null);
    for (const g of this.a.svg.querySelectorAll('g.node')) {
      const p = this.pairOf(this.a, g);
      if (!p.exact || !p.el.matches('g.node')) continue;
      const ca = centreOf(g), cb = centreOf(p.el);
      if (ca && cb) this.pairs.push({ a: ca, b: cb, ga: g, gb: p.el });
    }
    this.root.dataset.pairs = String(this.pairs.length);
  }

  // The pair the follower is aligned on: the one in use while it stays near the leader's
  // centre, else the nearest to it; null when nothing pairs.
  anchorFor(p) {
    if (!this.pairs.length) return null;
    const w = p.vp.clientWidth, h = p.vp.clientHeight, k = p.pz.k;
    const cx = (w / 2 - p.pz.x) / k, cy = (h / 2 - p.pz.y) / k;
    const an = this.anchor;
    if (an && this.pinned) return an;
    if (an && Math.abs(an[p.side].cx - cx) * k < w * ANCHOR_KEEP && Math.abs(an[p.side].cy - cy) * k < h * ANCHOR_KEEP) return an;
    let best = null, bd = Infinity;
    for (const pr of this.pairs) {
      const c = pr[p.side];
      const d = (c.cx - cx) ** 2 + (c.cy - cy) ** 2;
      if (d < bd) { bd = d; best = pr; }
    }
    this.setAnchor(best);
    return best;
  }

  setAnchor(pr, pinned = false) {
    this.anchor = pr;
    this.pinned = pinned;
    if (pr) this.root.dataset.anchor = `${pr.ga.id} ${pr.gb.id}`; else delete this.root.dataset.anchor;
  }

  // The leader moved (a frame of its view was written): the other pane follows in the same
  // frame, the anchor's point of its drawing under the same spot as in the leader's, at the
  // same scale.  The follower's own frames do not lead back.
  moved(p) {
    if (p === this.lead) this.d.zoomed(p.pz);
    if (p !== this.lead || this.loading || !this.a.svg || !this.b.svg) return;
    const q = this.panes[OTHER[p.side]];
    const k = p.pz.k;
    const an = this.anchorFor(p);
    const x = an ? p.pz.x + (an[p.side].cx - an[q.side].cx) * k : p.pz.x;
    const y = an ? p.pz.y + (an[p.side].cy - an[q.side].cy) * k : p.pz.y;
    if (x === q.pz.x && y === q.pz.y && k === q.pz.k) return;
    q.pz.stop();
    q.pz.set(x, y, k);
    q.pz.flush();
  }

  // A click or Enter on box g of pane p: the route's selection (app.js navigates, then
  // select() shows it).
  activate(p, g) {
    if (g && g.id) this.d.pick(p.side, g.id);
  }

  // The box of the route's pick ("a:n12", "b:g3"), or null.
  boxOfPick(pick) {
    const m = /^([ab]):(.+)$/.exec(pick || '');
    const p = m && this.panes[m[1]];
    return p && p.svg ? { p, g: p.box(`g.node[id="${CSS.escape(m[2])}"]`) } : null;
  }

  // Select box g of pane p and its pair in the other; with move, the pair is centred (the
  // selecting pane follows it), or g brought into view when it has none.  Answers
  // {entry, pair, message}: entry the document's node (null for a scope or terminal),
  // message what a screen reader is told (the panes' notes say it too).
  select(p, g, { move = true } = {}) {
    for (const s of ['a', 'b']) {
      for (const e of this.panes[s].svg ? this.panes[s].svg.querySelectorAll('g.node.selected') : []) e.classList.remove('selected');
      this.panes[s].note.textContent = '';
      this.panes[s].note.classList.remove('alone');
    }
    delete this.root.dataset.selected;
    if (!p || !g) return { entry: null, pair: null, message: '' };
    const q = this.panes[OTHER[p.side]];
    g.classList.add('selected');
    p.keys.follow(g);
    const entry = this.entryOf(p, g);
    const label = (g.querySelector('title') || {}).textContent || g.id;
    const pair = this.pairOf(p, g);
    p.note.textContent = `selected: ${label}${entry && entry.status !== 'unchanged' ? ` (${entry.status})` : ''}`;
    this.root.dataset.selected = `${p.side}:${g.id} ${pair.el ? `${q.side}:${pair.el.id}` : '-'}`;
    let message;
    if (pair.el) {
      pair.el.classList.add('selected');
      if (pair.el.matches('g.node')) q.keys.follow(pair.el);
      const its = pair.exact ? (pair.el.querySelector('title') || {}).textContent || pair.el.id : pair.why;
      q.note.textContent = pair.exact ? `its pair: ${its}` : `its pair is ${its}`;
      message = `${label} selected in ${NAME[p.side]}; ${pair.exact ? `its pair selected in ${NAME[q.side]}` : `its pair is ${pair.why}`}.`;
    } else {
      q.note.textContent = `nothing selected here: ${label} is ${pair.why}`;
      q.note.classList.toggle('alone', !!pair.alone);
      message = `${label} selected in ${NAME[p.side]}; it is ${pair.why}: nothing selected in ${NAME[q.side]}.`;
    }
    if (move && pair.el) {
      // the pair centred in its pane; the selecting pane follows, aligned on this pair
      const [ga, gb] = p.side === 'a' ? [g, pair.el] : [pair.el, g];
      const ca = centreOf(ga), cb = centreOf(gb);
      if (ca && cb) this.setAnchor({ a: ca, b: cb, ga, gb }, true);
      this.lead = q;
      q.pz.reveal(pair.el, { minK: Math.max(q.pz.k, READABLE) });
    } else if (move && !p.inView(g)) {
      this.lead = p;
      p.pz.reveal(g, { minK: Math.max(p.pz.k, READABLE) });
    }
    return { entry, pair, message };
  }

  // The pane the toolbar's zoom buttons act on: the one that leads.
  leadPz() { return this.lead.pz; }
}
