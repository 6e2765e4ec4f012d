// nodekeys.js — the drawing's boxes by keyboard (issue 39).  Before, Tab never reached a
// box: a keyboard user got to nodes only through search.  Now one box of the drawing is
// in the Tab order right after the view (a roving tab stop: the selected box, else the
// first graph input, else the first box), and with a box focused:
//   ↓ / ↑      the next box along the edges (a consumer) / the previous (a producer),
//   ← / →      the other boxes of that step (the other consumers, or producers),
//   Enter, Space  what a click does (select the node, open a group, jump from a stub),
//   Escape     back to the view (its arrows pan again).
// The edges are the SVG's own (g.edge data-from / data-to, render/svg.c); a step's boxes
// are ordered by where they are drawn, left to right (top to bottom when it runs LR).  Only the
// box with the tab stop carries a tabindex: nothing is done per box of a 10,000-box
// drawing.

const NODE = 'g.node';

// The text a screen reader says for a box: its kind (the op's header) and its title.
function labelOf(g) {
  const title = (g.querySelector('title') || {}).textContent || g.id;
  const head = (g.querySelector('text') || {}).textContent || '';
  return head && head !== title ? `${head}: ${title}` : title;
}

// canvas: the element holding the drawing; viewport: the focusable view; reveal(g): bring
// a box into view; activate(g): do what a click on it does; lr(): the drawing runs left
// to right.  Answers {attach(svg,
// selectedId): the drawing shown (the tab stop goes on the selected box or the first
// input), focusNode(g)}.
export function initNodeKeys({ canvas, viewport, reveal, activate, lr }) {
  let svg = null;
  let stop = null; // the box holding the tab stop
  let step = null; // {list, at}: the boxes of the last move, for ← and →
  let edges = null; // {out: id → [id], in: id → [id]}, built on the first move

  const graph = () => {
    if (edges) return edges;
    edges = { out: new Map(), in: new Map() };
    for (const e of svg.querySelectorAll('g.edge[data-from][data-to]')) {
      const a = e.getAttribute('data-from'), b = e.getAttribute('data-to');
      if (a === b) continue;
      if (!edges.out.has(a)) edges.out.set(a, []);
      if (!edges.in.has(b)) edges.in.set(b, []);
      if (!edges.out.get(a).includes(b)) edges.out.get(a).push(b);
      if (!edges.in.get(b).includes(a)) edges.in.get(b).push(a);
    }
    return edges;
  };

  // boxes by id, in drawing order across the step (x, or y when the drawing runs LR)
  const boxes = (ids) => {
    const across = lr();
    const gs = ids.map((id) => svg.getElementById(id)).filter((g) => g && g.matches(NODE));
    const pos = new Map(gs.map((g) => { const b = g.getBBox(); return [g, across ? b.y : b.x]; }));
    return gs.sort((p, q) => pos.get(p) - pos.get(q));
  };

  function setStop(g) {
    if (stop && stop !== g) { stop.removeAttribute('tabindex'); stop.removeAttribute('role'); stop.removeAttribute('aria-label'); }
    stop = g;
    if (!g) return;
    g.setAttribute('tabindex', '0');
    g.setAttribute('role', 'button');
    g.setAttribute('aria-label', labelOf(g));
  }

  function focusNode(g) {
    if (!g) return false;
    setStop(g);
    g.focus({ preventScroll: true });
    reveal(g);
    return true;
  }

  function move(dir) {
    if (!stop) return false;
    const ed = graph();
    if (dir === 'down' || dir === 'up') {
      const list = boxes((dir === 'down' ? ed.out : ed.in).get(stop.id) || []);
      if (!list.length) return false;
      step = { list, at: 0 };
      return focusNode(list[0]);
    }
    if (!step || step.list[step.at] !== stop) {
      // no step yet: this box's siblings (the consumers of its first producer)
      const from = boxes(ed.in.get(stop.id) || [])[0];
      const list = from ? boxes(ed.out.get(from.id) || []) : [];
      if (list.length < 2) return false;
      step = { list, at: Math.max(0, list.indexOf(stop)) };
    }
    const at = step.at + (dir === 'right' ? 1 : -1);
    if (at < 0 || at >= step.list.length) return false;
    step.at = at;
    return focusNode(step.list[at]);
  }

  canvas.addEventListener('keydown', (e) => {
    const g = e.target.closest && e.target.closest(NODE);
    if (!g || !svg || g.ownerSVGElement !== svg || e.altKey || e.ctrlKey || e.metaKey) return;
    const dirs = { ArrowDown: 'down', ArrowUp: 'up', ArrowLeft: 'left', ArrowRight: 'right' };
    if (dirs[e.key]) {
      e.preventDefault();
      e.stopPropagation();
      move(dirs[e.key]);
    } else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      e.stopPropagation();
      activate(g);
    } else if (e.key === 'Escape') {
      e.stopPropagation();
      viewport.focus({ preventScroll: true });
    }
  });
  canvas.addEventListener('focusin', (e) => {
    const g = e.target.closest && e.target.closest(NODE);
    if (g && g !== stop) setStop(g);
  });

  return {
    attach(s, selectedId) {
      svg = s;
      stop = null;
      step = null;
      edges = null;
      if (!s) return;
      const sel = selectedId && s.querySelector(`${NODE}[data-node="${CSS.escape(selectedId)}"]`);
      setStop(sel || s.querySelector(`${NODE}[data-kind="input"]`) || s.querySelector(NODE));
    },
    // the selection moved (a click, search): the tab stop follows it
    follow(g) { if (g && svg && g.ownerSVGElement === svg) setStop(g); },
    focusNode,
  };
}
