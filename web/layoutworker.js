// layoutworker.js — a big drawing's layout JSON (onnxviz.layout/1, render/svg.c) fetched and
// parsed off the page's thread (canvas.js): a 20,000-node full detail is ~10 MB of JSON,
// whose parse would hold the page for a few hundred ms.  Answers the parsed layout plus
// what drawing it needs, built here too: box and edge geometry in typed arrays
// (transferred, not copied) and a uniform grid over boxes and edge bounding boxes (the
// spatial index of culling and hit tests).  Posts {error: {status, body, retryAfter}} when
// the server refuses.

const CELL = 256; // content px; grown so that a drawing never has more than MAX_CELLS
const MAX_CELLS = 1 << 20;

// Compressed sparse rows of the cells each item's rectangle (x0, y0, x1, y1) covers.
function grid(rects, n, cell, cols, rows) {
  const count = new Uint32Array(cols * rows + 1);
  const span = (i) => {
    const c0 = Math.max(0, Math.min(cols - 1, Math.floor(rects[4 * i] / cell)));
    const c1 = Math.max(0, Math.min(cols - 1, Math.floor(rects[4 * i + 2] / cell)));
    const r0 = Math.max(0, Math.min(rows - 1, Math.floor(rects[4 * i + 1] / cell)));
    const r1 = Math.max(0, Math.min(rows - 1, Math.floor(rects[4 * i + 3] / cell)));
    return [c0, c1, r0, r1];
  };
  for (let i = 0; i < n; i++) {
    const [c0, c1, r0, r1] = span(i);
    for (let r = r0; r <= r1; r++) for (let c = c0; c <= c1; c++) count[r * cols + c + 1]++;
  }
  for (let k = 1; k <= cols * rows; k++) count[k] += count[k - 1];
  const items = new Uint32Array(count[cols * rows]);
  const fill = count.slice(0, cols * rows);
  for (let i = 0; i < n; i++) {
    const [c0, c1, r0, r1] = span(i);
    for (let r = r0; r <= r1; r++) for (let c = c0; c <= c1; c++) items[fill[r * cols + c]++] = i;
  }
  return { start: count, items };
}

function build(d) {
  const nodes = Array.isArray(d.nodes) ? d.nodes : [];
  const edges = Array.isArray(d.edges) ? d.edges : [];
  const W = Math.max(1, +d.width || 1), H = Math.max(1, +d.height || 1);
  let cell = CELL;
  while (Math.ceil(W / cell) * Math.ceil(H / cell) > MAX_CELLS) cell *= 2;
  const cols = Math.ceil(W / cell), rows = Math.ceil(H / cell);
  // boxes: x0, y0, x1, y1 of the front box (a run's stack adds 6 down and right)
  const box = new Float32Array(4 * nodes.length);
  nodes.forEach((b, i) => {
    const pad = b.open_all ? 6 : 0;
    box[4 * i] = (+b.x || 0) - (+b.w || 0) / 2;
    box[4 * i + 1] = (+b.y || 0) - (+b.h || 0) / 2;
    box[4 * i + 2] = box[4 * i] + (+b.w || 0) + pad;
    box[4 * i + 3] = box[4 * i + 1] + (+b.h || 0) + pad;
  });
  // edges: their points flat, from ptStart[i] to ptStart[i + 1]; bounds with the arrow tip
  let npts = 0;
  for (const e of edges) npts += Array.isArray(e.points) ? e.points.length : 0;
  const pts = new Float32Array(2 * npts);
  const ptStart = new Uint32Array(edges.length + 1);
  const ebox = new Float32Array(4 * edges.length);
  let at = 0;
  edges.forEach((e, i) => {
    ptStart[i] = at;
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    const add = (p) => {
      const x = +p[0] || 0, y = +p[1] || 0;
      x0 = Math.min(x0, x); y0 = Math.min(y0, y); x1 = Math.max(x1, x); y1 = Math.max(y1, y);
      return [x, y];
    };
    for (const p of Array.isArray(e.points) ? e.points : []) {
      const [x, y] = add(p);
      pts[2 * at] = x; pts[2 * at + 1] = y; at++;
    }
    if (Array.isArray(e.arrow)) add(e.arrow);
    if (Array.isArray(e.label_at)) { add(e.label_at); add([+e.label_at[0] + 8 * String(e.label || '').length, e.label_at[1]]); }
    if (x0 === Infinity) { x0 = y0 = x1 = y1 = -1; }
    ebox[4 * i] = x0 - 4; ebox[4 * i + 1] = y0 - 4; ebox[4 * i + 2] = x1 + 4; ebox[4 * i + 3] = y1 + 4;
    delete e.points; // kept once, in pts
  });
  ptStart[edges.length] = at;
  const bg = grid(box, nodes.length, cell, cols, rows);
  const eg = grid(ebox, edges.length, cell, cols, rows);
  return {
    layout: d,
    geo: { W, H, cell, cols, rows, box, pts, ptStart, ebox, boxStart: bg.start, boxItems: bg.items, edgeStart: eg.start, edgeItems: eg.items },
  };
}

self.onmessage = async (m) => {
  const url = m.data && m.data.url;
  try {
    const t0 = performance.now();
    // the page's read headers (api.js readHeaders: its token, an embed's capability)
    const res = await fetch(url, { credentials: 'same-origin', headers: (m.data && m.data.headers) || {} });
    if (!res.ok) {
      let body = null;
      try { body = await res.json(); } catch { /* not JSON */ }
      self.postMessage({ error: { status: res.status, body, retryAfter: +res.headers.get('Retry-After') || 0 } });
      return;
    }
    const text = await res.text();
    const t1 = performance.now();
    const d = JSON.parse(text);
    if (!d || d.format !== 'onnxviz.layout/1') throw new Error('the server sent a layout that is not onnxviz.layout/1');
    const out = build(d);
    out.ms = { fetch: t1 - t0, parse: performance.now() - t1 };
    const g = out.geo;
    self.postMessage(out, [g.box.buffer, g.pts.buffer, g.ptStart.buffer, g.ebox.buffer, g.boxStart.buffer, g.boxItems.buffer, g.edgeStart.buffer, g.edgeItems.buffer]);
  } catch (e) {
    self.postMessage({ error: { status: 0, body: { error: { message: String(e && e.message || e) } } } });
  }
};
