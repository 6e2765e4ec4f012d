// diff.js — the diff view (#/diff/{a}/{b}?options&change=N): B's graph with the changes
// marked (GET /models/{a}/diff/{b}.svg; a big full detail on the canvas from
// .../diff/{b}.layout.json, canvas.js), the list of changes from the JSON document
// (.../diff/{b}.json, onnxviz.diff/1, docs/diff.md) in the left panel; a click on a change
// centres its box and opens its details, a click on a box selects its change.  The home
// page's "Compare" (home.js) opens it.  With view=sbs A and B are drawn side by side
// instead (sidebyside.js): the list and the details stay, a change selects its box and
// the pair in the other pane.

import { ApiError, getJSON, modelUrl } from './api.js';
import { fetchSvg, READABLE } from './graph.js';
import { buildProxy, loadLayout, wantCanvas } from './canvas.js';
import { h, clear, fmtInt, fmtNum, fmtShape, dtypeShort, kv, shortId, typeText } from './util.js';

const LIST_MAX = 400; // items listed per group; the rest are counted

export const diffUrl = (a, b, ext, query = '') => `${modelUrl(a)}/diff/${b}.${ext}${query ? `?${query}` : ''}`;

const SIGN = { added: '+', removed: '−', changed: '~', unchanged: '=' };

// An attribute's value on one side of a change: the server's text, as the drawing prints
// it (a_text / b_text, diff/json.c), else from the raw value.
function attrValueText(text, v) {
  if (text !== undefined) return text;
  return rawValueText(v);
}

function rawValueText(v) {
  if (v === null || v === undefined) return '(none)';
  if (Array.isArray(v)) return v.length > 12 ? `[${v.slice(0, 12).map(rawValueText).join(', ')}, … (${v.length})]` : `[${v.map(rawValueText).join(', ')}]`;
  if (typeof v === 'object') {
    if ('dtype' in v) return `⟨${fmtShape(v.dims)}⟩ ${dtypeShort(v.dtype)}`;
    if ('graph' in v) return `graph of ${v.graph} nodes`;
    if ('graphs' in v) return `${v.graphs} graphs`;
    return JSON.stringify(v);
  }
  if (typeof v === 'number') return fmtNum(v);
  return String(v);
}

// "1 of 9,408 elements changed · max |Δ| 0.5 · max rel 0.3" and dtype/shape changes.
export function tensorLine(t) {
  const parts = [];
  if (t.status === 'added' || t.status === 'removed') {
    const x = t.a || t.b;
    return `${t.status} · ⟨${fmtShape(x.dims)}⟩ ${dtypeShort(x.dtype)}`;
  }
  if (t.dtype_changed) parts.push(`${dtypeShort(t.a.dtype)} → ${dtypeShort(t.b.dtype)}`);
  if (t.shape_changed) parts.push(`⟨${fmtShape(t.a.dims)}⟩ → ⟨${fmtShape(t.b.dims)}⟩`);
  if (t.compared) {
    parts.push(`${fmtInt(t.elements_changed)} of ${fmtInt(t.elements)} elements changed`);
    if (t.elements_changed > t.nonfinite_changed) parts.push(`max |Δ| ${fmtNum(t.max_abs_diff, 4)}`, `max rel ${fmtNum(t.max_rel_diff, 3)}`);
  } else if (t.not_compared) parts.push(t.not_compared);
  return parts.join(' · ');
}

function changeText(c, tensors) {
  switch (c.kind) {
    case 'op_type': case 'domain': case 'overload': case 'name':
      return `${c.kind.replace('_', ' ')}: ${c.a || '""'} → ${c.b || '""'}`;
    case 'attribute':
      return `attribute ${c.name}: ${attrValueText(c.a_text, c.a)} → ${attrValueText(c.b_text, c.b)}${c.tensor && tensors.get(c.tensor) ? ` (${tensorLine(tensors.get(c.tensor))})` : ''}`;
    case 'input':
      return `input ${c.index} rewired: ${c.a ?? '(none)'} → ${c.b ?? '(none)'}`;
    case 'output':
      return `output ${c.index}: ${c.a ?? '(none)'} → ${c.b ?? '(none)'}`;
    case 'type':
      return `output ${c.index} (${c.value}): ${typeText(c.a)} → ${typeText(c.b)}`;
    case 'tensor':
      return `tensor ${c.tensor} (input ${c.index})${tensors.get(c.tensor) ? `: ${tensorLine(tensors.get(c.tensor))}` : ''}`;
    case 'subgraph':
      return 'a node of its subgraphs changed';
    default:
      return c.kind;
  }
}

// The changes a view lists, in order: model fields, inputs/outputs, nodes, tensors.
function listOf(doc) {
  const items = [];
  for (const f of doc.model) items.push({ kind: 'field', status: 'changed', f });
  for (const v of doc.values) items.push({ kind: 'value', status: v.status, v });
  for (const fn of doc.functions) items.push({ kind: 'function', status: fn.status, fn });
  for (const n of doc.nodes) if (n.status !== 'unchanged') items.push({ kind: 'node', status: n.status, n });
  for (const t of doc.tensors) items.push({ kind: 'tensor', status: t.status, t });
  return items;
}

export class DiffView {
  // deps: {pz, canvas, cv (canvas.js's CanvasGraph), viewport, announce, showGraphState,
  //        hideGraphState, navigate, flash, openSide, closeSide, setTitle(a, b), names,
  //        sbs (sidebyside.js)}
  constructor(deps) {
    this.d = deps;
    this.key = null;   // "a|b|query" shown
    this.doc = null;
    this.items = [];
    this.seq = 0;
  }

  // Show route r ({diff: {a, b, params, change}, view, pick}): the drawing (or A and B side
  // by side, view=sbs) and the list, then the selected change (or, side by side, the
  // picked box).
  async show(r) {
    const { a, b } = r.diff;
    const sbs = r.view === 'sbs';
    const query = this.d.renderQuery(r);
    const key = `${a}|${b}|${query}|${sbs ? 'sbs' : 'one'}`;
    const seq = ++this.seq;
    let change = r.change;
    if (key !== this.key) {
      this.key = null;
      if (!(await this.load(a, b, query, seq, r))) return;
      this.key = key;
      // a comparison opens with a change selected (issue 39): the one whose box the view
      // opens at, its details in the panel; the URL stays as it was (Escape closes it).
      // Side by side it is centred in both panes.
      if ((change === null || change === undefined) && !(sbs && r.pick)) {
        const i = sbs ? this.step(1, null) : this.openedAt();
        if (i !== null) { this.select(i, { move: sbs }); return; }
      }
    }
    if (sbs && r.pick) { this.pick(r.pick); return; }
    this.select(change, { move: true });
  }

  // The change whose box the new view opens at (the first marked box), or null.
  openedAt() {
    const first = this.svg && this.svg.querySelector('g.node[data-mark]');
    const i = first ? this.items.findIndex((it) => this.boxOf(it) === first) : -1;
    return i >= 0 ? i : null;
  }

  async load(a, b, query, seq, r) {
    const d = this.d;
    const sbs = r.view === 'sbs';
    d.setTitle(a, b);
    const body = clear(d.listBody);
    body.append(h('p', { class: 'empty', text: 'Comparing…' }));
    d.announce('Comparing the models…');
    d.showGraphState({ title: 'Comparing the models…', detail: sbs ? 'The server matches the nodes of both models; A and B are drawn side by side.'
      : 'The server matches the nodes of both models and draws B with the changes marked.' });
    let doc;
    let svg;
    let layout = null;
    if (this.ctl) this.ctl.abort();
    const ctl = new AbortController();
    this.ctl = ctl;
    try {
      // the document once per pair of models (the switch between the views keeps it)
      const docP = Promise.resolve(this.doc && this.a === a && this.b === b ? this.doc : getJSON(diffUrl(a, b, 'json')));
      docP.catch(() => {}); // awaited below
      const group = r.opts.group;
      if (sbs) {
        doc = await docP;
        if (seq === this.seq) {
          const title = (id) => d.names.get()[id] || shortId(id);
          await d.sbs.load({ a, b, doc, route: r, query: (expand, unfold) => d.renderQuery({ ...r, expand, unfold }), names: title });
        }
      } else if (wantCanvas(Infinity, group) && wantCanvas((await docP).b.nodes, group)) {
        // a big full detail goes to the canvas as a model's does (canvas.js: wantCanvas, by
        // B's node count, which the document says): drawn from the drawing's layout JSON
        layout = await loadLayout(diffUrl(a, b, 'layout.json', query), ctl.signal);
        doc = await docP;
      } else {
        svg = await fetchSvg(diffUrl(a, b, 'svg', query), ctl.signal);
        doc = await docP;
      }
    } catch (e) {
      if (seq !== this.seq || e.name === 'AbortError') return false;
      const where = e instanceof ApiError ? [e.code, e.where()].filter(Boolean).join(' · ') : '';
      d.showGraphState({ error: true, title: 'The models could not be compared', detail: [e.message, where].filter(Boolean).join(' — '),
        actions: [['Try again', () => { this.key = null; this.d.retry(); }]] });
      clear(body).append(h('div', { class: 'notice error', text: e.message }));
      d.announce(`The models could not be compared: ${e.message}`);
      return false;
    }
    if (seq !== this.seq) return false;
    this.doc = doc;
    this.a = a;
    this.b = b;
    this.query = query;
    this.tensors = new Map(doc.tensors.map((t) => [t.name, t]));
    this.items = listOf(doc);
    d.hideGraphState();
    this.sbsOn = sbs;
    if (sbs) {
      this.svg = null;
      d.cv.clear();
      clear(d.canvas);
      delete d.canvas.dataset.diff;
      if (d.minimap) d.minimap.set(null);
      d.info.textContent = `A ${fmtInt(d.sbs.a.boxes())} boxes · B ${fmtInt(d.sbs.b.boxes())} boxes · side by side, the views in step`;
      this.renderList();
      this.announceSummary();
      return true;
    }
    d.sbs.clear();
    d.sbs.root.hidden = true;
    if (layout) {
      svg = buildProxy(layout.layout);
      clear(d.canvas);
      d.cv.show(layout, svg);
    } else {
      d.cv.clear();
      clear(d.canvas).append(svg);
    }
    d.canvas.dataset.renderer = layout ? 'canvas' : 'svg';
    d.canvas.dataset.diff = `${a}/${b}`;
    delete d.canvas.dataset.model;
    svg.setAttribute('focusable', 'false');
    svg.setAttribute('aria-hidden', 'true');
    this.svg = svg;
    const vb = svg.viewBox && svg.viewBox.baseVal;
    const w = parseFloat(svg.getAttribute('width')) || (vb && vb.width) || 100;
    const ht = parseFloat(svg.getAttribute('height')) || (vb && vb.height) || 100;
    d.pz.setContent(w, ht);
    // all of it when it is readable so; else the first marked box at a readable scale, as
    // a model view opens at its inputs (the minimap shows where the rest is); Home goes
    // back there
    const vr = d.viewport.getBoundingClientRect();
    const fitK = Math.min((vr.width - 48) / w, (vr.height - 48) / ht);
    const first = svg.querySelector('g.node[data-mark]');
    d.pz.onHome = fitK >= READABLE || !first ? () => d.pz.fit(true)
      : () => d.pz.reveal(first, { minK: READABLE });
    if (fitK >= READABLE || !first) d.pz.fit(false);
    else d.pz.reveal(first, { minK: READABLE, animate: false });
    if (d.minimap) {
      d.minimap.set(null);
      requestAnimationFrame(() => setTimeout(() => { if (this.svg === svg) d.minimap.set(svg, w, ht); }, 0));
    }
    d.info.textContent = `${fmtInt(+svg.getAttribute('data-boxes') || 0)} boxes · B's graph, changes marked`;
    this.renderList();
    this.announceSummary();
    return true;
  }

  announceSummary() {
    const { doc } = this;
    const s = doc.summary;
    this.d.announce(doc.same ? 'The models are the same.'
      : `Compared: ${s.added} added, ${s.removed} removed, ${s.changed} changed nodes; ${s.tensors.changed} tensors changed.`);
  }

  renderList() {
    const { doc, d } = this;
    const s = doc.summary;
    const body = clear(d.listBody);
    const chip = (cls, n, label) => h('span', { class: `dchip ${cls}`, title: label }, `${SIGN[cls] || ''}${fmtInt(n)} `, label);
    body.append(h('div', { class: 'diff-summary' },
      doc.same ? h('div', { class: 'notice info', text: 'The models are the same: nothing was added, removed or changed.' }) : null,
      h('div', { class: 'dchips' }, chip('added', s.added, 'added'), chip('removed', s.removed, 'removed'),
        chip('changed', s.changed, 'changed'), chip('unchanged', s.unchanged, 'unchanged')),
      h('div', { class: 'diff-sub', text: `tensors: ${s.tensors.changed} changed, ${s.tensors.added} added, ${s.tensors.removed} removed · ${fmtInt(doc.a.nodes)} → ${fmtInt(doc.b.nodes)} nodes` }),
      h('div', { class: 'panel-actions' },
        ...['svg', 'dot', 'json'].map((x) => h('a', { class: 'btn btn-plain btn-small', href: diffUrl(this.a, this.b, x, x === 'json' ? '' : this.query), download: `diff-${shortId(this.a)}-${shortId(this.b)}.${x}`, text: x.toUpperCase() })))));
    if (this.items.length) {
      body.append(h('div', { class: 'panel-actions step' },
        h('button', { type: 'button', class: 'btn btn-plain btn-small', id: 'change-prev', text: '← Previous change', onclick: () => this.go(-1) }),
        h('button', { type: 'button', class: 'btn btn-plain btn-small', id: 'change-next', text: 'Next change →', onclick: () => this.go(1) })));
    }
    const groups = [['field', 'Model'], ['value', 'Inputs and outputs'], ['function', 'Functions'], ['node', 'Nodes'], ['tensor', 'Tensors']];
    this.buttons = [];
    for (const [kind, title] of groups) {
      const its = this.items.map((it, i) => [it, i]).filter(([it]) => it.kind === kind);
      if (!its.length) continue;
      const ul = h('ul', { class: 'change-list', 'aria-label': title });
      for (const [it, i] of its.slice(0, LIST_MAX)) {
        const btn = h('button', { type: 'button', class: `change ${it.status}`, dataset: { index: String(i) }, onclick: () => this.d.navigateChange(i) },
          h('span', { class: 'sign', 'aria-hidden': 'true', text: SIGN[it.status] }), ...this.label(it));
        this.buttons[i] = btn;
        ul.append(h('li', null, btn));
      }
      if (its.length > LIST_MAX) ul.append(h('li', { class: 'empty', text: `… and ${fmtInt(its.length - LIST_MAX)} more (the JSON has them all)` }));
      body.append(h('h3', { text: `${title} (${fmtInt(its.length)})` }), ul);
    }
    if (!this.items.length) body.append(h('p', { class: 'empty', text: 'No changes.' }));
  }

  label(it) {
    switch (it.kind) {
      case 'field': return [h('span', { class: 'ch-main', text: it.f.key ? `${it.f.field} ${it.f.key}` : it.f.field }), h('span', { class: 'ch-sub', text: `${it.f.a ?? '(none)'} → ${it.f.b ?? '(none)'}` })];
      case 'value': return [h('span', { class: 'ch-main', text: `${it.v.role} ${it.v.name}` }), h('span', { class: 'ch-sub', text: `${typeText(it.v.a)} → ${typeText(it.v.b)}` })];
      case 'function': return [h('span', { class: 'ch-main', text: `function ${it.fn.name}` }), h('span', { class: 'ch-sub', text: it.fn.domain })];
      case 'tensor': return [h('span', { class: 'ch-main', text: it.t.name }), h('span', { class: 'ch-sub', text: tensorLine(it.t) })];
      default: {
        const n = it.n;
        const kinds = [...new Set(n.changes.map((c) => c.kind))].join(', ');
        return [h('span', { class: 'ch-main' }, h('b', { text: n.op_type }), ' ', n.name || n.b || n.a), h('span', { class: 'ch-sub', text: n.status === 'changed' ? kinds : n.status })];
      }
    }
  }

  // The box of a list item in the drawing: B's node, A's ghost, or for a tensor the node
  // that consumes it.
  boxOf(it) {
    if (this.sbsOn) { const t = this.sbsBox(it); return t && t.g; }
    if (!it || !this.svg) return null;
    const q = (sel) => this.svg.querySelector(sel);
    if (it.kind === 'node') {
      return it.n.b ? q(`g.node[data-node="${CSS.escape(it.n.b)}"]`) : q(`g.node[data-other="${CSS.escape(it.n.a)}"]`);
    }
    if (it.kind === 'tensor') {
      const user = this.doc.nodes.find((n) => n.changes.some((c) => c.tensor === it.t.name)) ||
        (it.t.node ? this.doc.nodes.find((n) => n.b === it.t.node) : null);
      return user && user.b ? q(`g.node[data-node="${CSS.escape(user.b)}"]`) : null;
    }
    return null;
  }

  // Side by side: the box of a list item, B's (A's for a removed node), and its pane.
  sbsBox(it) {
    const sbs = this.d.sbs;
    const at = (side, id) => {
      const g = id ? sbs.panes[side].box(`g.node[data-node="${CSS.escape(id)}"]`) : null;
      return g ? { p: sbs.panes[side], g } : null;
    };
    if (!it) return null;
    if (it.kind === 'node') return it.n.b ? at('b', it.n.b) : at('a', it.n.a);
    if (it.kind === 'tensor') {
      const user = this.doc.nodes.find((n) => n.changes.some((c) => c.tensor === it.t.name)) ||
        (it.t.node ? this.doc.nodes.find((n) => n.b === it.t.node) : null);
      return user ? at('b', user.b) || at('a', user.a) : null;
    }
    return null;
  }

  // Side by side: the route's picked box ("a:n12") and its pair; its node's change, when
  // it has one, current in the list with its details; else the node's details.
  pick(pick) {
    const d = this.d;
    const t = d.sbs.boxOfPick(pick);
    if (!t || !t.g) { this.select(null); d.announce('The box of that link is not in these drawings.'); return; }
    const { entry, message } = d.sbs.select(t.p, t.g, { move: true });
    const i = entry ? this.items.findIndex((it) => it.kind === 'node' && it.n === entry) : -1;
    this.current = i >= 0 ? i : null;
    this.highlight(this.current);
    if (i >= 0) this.details(this.items[i], t.g);
    else if (entry) this.details({ kind: 'node', status: entry.status, n: entry }, t.g);
    else d.closeSide();
    d.announce(message);
  }

  highlight(i) {
    for (const b of this.buttons || []) if (b) b.setAttribute('aria-current', 'false');
    const btn = i === null || i === undefined ? null : this.buttons[i];
    if (btn) { btn.setAttribute('aria-current', 'true'); btn.scrollIntoView({ block: 'nearest' }); }
  }

  go(dir) {
    const i = this.step(dir, this.current);
    if (i !== null) this.d.navigateChange(i);
  }

  // Select list item i (null: none): highlight it and its box, centre the box, details.
  select(i, { move = true } = {}) {
    const d = this.d;
    this.current = i ?? null;
    for (const e of this.svg ? this.svg.querySelectorAll('g.node.selected') : []) e.classList.remove('selected');
    this.highlight(i);
    const it = i === null || i === undefined ? null : this.items[i];
    if (this.sbsOn) {
      // side by side: its box and the pair in the other pane
      const t = it ? this.sbsBox(it) : null;
      const { message } = d.sbs.select(t && t.p, t && t.g, { move });
      if (!it) { d.closeSide(); return; }
      this.details(it, t && t.g);
      if (message) d.announce(message);
      return;
    }
    if (!it) { d.closeSide(); return; }
    const box = this.boxOf(it);
    if (box) {
      box.classList.add('selected');
      if (move) { d.pz.reveal(box, { minK: Math.max(d.pz.k, 0.8) }); d.flash(box); }
    }
    this.details(it, box);
  }

  details(it, box) {
    const d = this.d;
    const body = d.openSide(it.kind === 'node' ? `${it.n.op_type} node` : it.kind === 'tensor' ? 'Tensor' : 'Change');
    body.append(h('p', null, h('span', { class: `dchip ${it.status}`, text: it.status })));
    if (it.kind === 'node') {
      const n = it.n;
      body.append(kv([['name', n.name || '(none)'], ['op type', `${n.domain ? `${n.domain}:` : ''}${n.op_type}`],
        n.a ? ['in A', h('a', { href: `#/models/${this.a}?node=${encodeURIComponent(n.a)}`, text: n.a })] : null,
        n.b ? ['in B', h('a', { href: `#/models/${this.b}?node=${encodeURIComponent(n.b)}`, text: n.b })] : null,
        n.matched_by ? ['paired by', n.matched_by] : null]));
      if (n.changes.length) {
        body.append(h('h3', { text: 'Changes' }), h('ul', { class: 'change-details' }, ...n.changes.map((c) => h('li', { text: changeText(c, this.tensors) }))));
      }
    } else if (it.kind === 'tensor') {
      const t = it.t;
      const side = (x) => (x ? `${x.name} ⟨${fmtShape(x.dims)}⟩ ${dtypeShort(x.dtype)} · ${x.storage}` : '(none)');
      body.append(kv([['name', t.name], ['kind', t.kind], ['A', side(t.a)], ['B', side(t.b)],
        t.matched_by ? ['paired by', t.matched_by] : null]));
      if (t.compared) {
        body.append(h('h3', { text: 'Values' }), kv([['elements', fmtInt(t.elements)], ['changed', fmtInt(t.elements_changed)],
          ['max |Δ|', fmtNum(t.max_abs_diff)], ['max |Δ| / |a|', fmtNum(t.max_rel_diff)], ['with NaN/Inf', fmtInt(t.nonfinite_changed)]]));
      } else if (t.not_compared) body.append(h('p', { class: 'empty', text: t.not_compared }));
    } else {
      body.append(h('p', null, ...this.label(it).map((e) => h('span', { class: 'block' }, e))));
    }
    if (!box && (it.kind === 'node' || it.kind === 'tensor')) {
      body.append(h('p', { class: 'empty', text: 'Not drawn as a box of its own (folded into the node that uses it, or inside a subgraph).' }));
    }
    d.announce(`${it.status}: ${this.label(it).map((e) => e.textContent).join(' ')}`);
  }

  // A click on a box of the drawing: the change it belongs to.
  onBoxClick(g) {
    if (!this.doc) return false;
    const node = g.getAttribute('data-node');
    const other = g.getAttribute('data-other');
    const i = this.items.findIndex((it) => it.kind === 'node' && ((node && it.n.b === node) || (other && !it.n.b && it.n.a === other)));
    if (i >= 0) this.d.navigateChange(i);
    else this.d.navigateChange(null);
    return true;
  }

  // Step to the next (+1) / previous (-1) change that has a box.
  step(dir, current) {
    const n = this.items.length;
    for (let k = 1; k <= n; k++) {
      const i = ((current ?? (dir > 0 ? -1 : 0)) + dir * k + n * 2) % n;
      if (this.boxOf(this.items[i])) return i;
    }
    return null;
  }
}
