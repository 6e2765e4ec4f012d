// canvas.test.mjs — the canvas renderer (web/canvas.js, issue 37) in Chromium: the same
// views drawn on the canvas and as SVG compared pixel by pixel, and what the page does on a
// drawing (selection, search hits, heat fills, expand and collapse, unfolding a chain, the
// keyboard and the list for screen readers) done on the canvas.  Small models are forced
// onto the canvas with the page's ?draw=canvas (big ones go there by themselves, checked
// on the 10,000-node model).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { graphShown as shown, launchBrowser, settled as settledOn, startServer, stopChecked, uploadRaw } from './harness.mjs';

const BUILD = process.env.BUILD || 'build';
const CORPUS = process.env.ONNXVIZ_CORPUS || '../shared/corpus';
const WORK = process.env.ONNXVIZ_E2E_WORK || fs.mkdtempSync('/tmp/onnxviz-e2e-');
const OUT = process.env.ONNXVIZ_E2E_OUT || path.join(BUILD, 'e2e');
const MODELS = JSON.parse(fs.readFileSync(path.join(WORK, 'models.json'), 'utf8'));
const SQUEEZENET = path.join(CORPUS, 'models/real/squeezenet1_1.onnx');
const TRANSFORMER = path.join(CORPUS, 'models/real/transformer_12x12.onnx');

let server, ctx, page, blank, base;
const ids = new Map();
const idOf = async (f) => { if (!ids.has(f)) ids.set(f, await uploadRaw(base, f)); return ids.get(f); };
const settled = () => settledOn(page);

// Open model `id` with render query `key` drawn by `draw` (canvas or svg), settled.
async function open(id, key, draw) {
  await page.goto(`${base}/?draw=${draw}#/`);
  await page.goto(`${base}/?draw=${draw}#/models/${id}${key ? `?${key}` : ''}`);
  await shown(page, key, id);
  assert.equal(await page.getAttribute('#canvas', 'data-renderer'), draw);
  await settled();
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}

// Where box `pick` (a function of the layout's node, run in the page) is on screen: its
// centre and its left edge's middle in client px, and its index.
const boxAt = (pick) => page.evaluate((src) => {
  const cv = document.querySelector('.graph-canvas').__graph;
  const f = new Function('b', `return (${src})(b)`); // eslint-disable-line no-new-func
  const i = cv.data.layout.nodes.findIndex((b) => f(b));
  if (i < 0) return null;
  const b = cv.data.layout.nodes[i], pz = cv.pz, v = cv.vp.getBoundingClientRect();
  const x0 = v.left + pz.x + (b.x - b.w / 2) * pz.k, y0 = v.top + pz.y + (b.y - b.h / 2) * pz.k;
  return { i, id: b.id, node: b.node, x: x0 + (b.w * pz.k) / 2, y: y0 + (b.h * pz.k) / 2, left: x0, top: y0, k: pz.k, w: b.w * pz.k, h: b.h * pz.k };
}, pick.toString());

// The canvas's pixel at client point (x, y): [r, g, b].
const pixel = (x, y) => page.evaluate(([cx, cy]) => {
  const cv = document.querySelector('.graph-canvas').__graph;
  const r = cv.el.getBoundingClientRect(), dpr = window.devicePixelRatio || 1;
  return [...cv.g.getImageData(Math.round((cx - r.left) * dpr), Math.round((cy - r.top) * dpr), 1, 1).data].slice(0, 3);
}, [x, y]);
const near = (a, b, tol = 40) => a.every((v, i) => Math.abs(v - b[i]) <= tol);
const rgb = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));

// Two PNG screenshots compared in the browser: the mean difference over all pixels and
// channels (0..1) and the worst 32×32 tile's.  A tile cut by the picture's right or bottom
// edge counts as 32×32 with the part outside alike in both (a 32×10 strip of text rows
// would otherwise weigh a one-pixel shift of its text three times).
const compare = (a, b) => blank.evaluate(async ([pa, pb]) => {
  const load = async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.width; c.height = img.height;
    const g = c.getContext('2d');
    g.drawImage(img, 0, 0);
    return g.getImageData(0, 0, c.width, c.height);
  };
  const [x, y] = [await load(pa), await load(pb)];
  if (x.width !== y.width || x.height !== y.height) return { error: `sizes ${x.width}x${x.height} and ${y.width}x${y.height}` };
  const W = x.width, H = y.height;
  const tw = Math.ceil(W / 32), th = Math.ceil(H / 32);
  const tiles = new Float64Array(tw * th);
  let sum = 0;
  for (let py = 0; py < H; py++) {
    for (let px = 0; px < W; px++) {
      const o = 4 * (py * W + px);
      const d = (Math.abs(x.data[o] - y.data[o]) + Math.abs(x.data[o + 1] - y.data[o + 1]) + Math.abs(x.data[o + 2] - y.data[o + 2])) / (3 * 255);
      sum += d;
      const t = Math.floor(py / 32) * tw + Math.floor(px / 32);
      tiles[t] += d;
    }
  }
  let worst = 0, at = 0;
  for (let t = 0; t < tiles.length; t++) if (tiles[t] / (32 * 32) > worst) { worst = tiles[t] / (32 * 32); at = t; }
  return { mean: sum / (W * H), worst, tile: [(at % tw) * 32, Math.floor(at / tw) * 32] };
}, [a.toString('base64'), b.toString('base64')]);

// The same view both ways: show(draw) opens it drawn by `draw` (svg, canvas); screenshots
// of the viewport (saved under OUT), compared.
async function alike(name, show, { fit = false } = {}) {
  const shots = {};
  for (const draw of ['svg', 'canvas']) {
    await show(draw);
    if (fit) { await page.focus('#viewport'); await page.keyboard.press('0'); await settled(); }
    await page.mouse.move(0, 0);
    await page.evaluate(() => document.activeElement && document.activeElement.blur());
    shots[draw] = await page.locator('#viewport').screenshot({ path: path.resolve(OUT, `canvas-${name}-${draw}.png`) });
  }
  const d = await compare(shots.svg, shots.canvas);
  assert.ok(!d.error, d.error);
  console.log(`# ${name}: mean difference ${(d.mean * 100).toFixed(2)}%, worst 32×32 tile ${(d.worst * 100).toFixed(2)}% at ${d.tile}`);
  assert.ok(d.mean <= 0.02, `${name}: mean difference ${(d.mean * 100).toFixed(2)}% > 2%`);
  assert.ok(d.worst <= 0.10, `${name}: the 32×32 tile at ${d.tile} differs by ${(d.worst * 100).toFixed(2)}% > 10%`);
}
// model `id`'s view with render query `key` both ways
const bothWays = (name, id, key, opts) => alike(name, (draw) => open(id, key, draw), opts);

describe('the canvas renderer', () => {
  before(async () => {
    fs.mkdirSync(OUT, { recursive: true });
    server = await startServer(BUILD, fs.mkdtempSync(path.join(WORK, 'canvas-'))); // a store of its own: e2e.test.mjs's starts empty
    base = server.base;
    ctx = await launchBrowser(WORK, base);
    page = ctx.pages()[0] || await ctx.newPage();
    blank = await ctx.newPage();
  });
  after(async () => {
    if (ctx) await ctx.close();
    if (server) await stopChecked(server, assert);
  });

  test('against the SVG: the same views differ by ≤ 2% on average and ≤ 10% in any 32×32 tile', async () => {
    await bothWays('squeezenet-start', await idOf(SQUEEZENET), '');
    await bothWays('transformer-overview', await idOf(TRANSFORMER), '', { fit: true });
    await bothWays('squeezenet-heat', await idOf(SQUEEZENET), 'overlay=cost&metric=macs');
  });

  // hide= from the View menu (web/hide.js): the model's op types with their counts; a
  // checked one is not drawn, on the SVG and on the canvas alike; the URL keeps it and
  // "Reset to defaults" clears it
  test('hide op types: the View menu lists them with counts and hides the checked ones, both ways', async () => {
    const id = await idOf(SQUEEZENET);
    // op boxes per header text in the drawing shown (the SVG, or the canvas's structure)
    const ops = () => page.evaluate(() => {
      const cv = document.querySelector('.graph-canvas');
      const root = cv && cv.__graph.active ? cv.__graph.proxy : document.querySelector('#canvas svg');
      const n = {};
      for (const g of root.querySelectorAll('g.node.op')) { const t = g.querySelector('text').textContent; n[t] = (n[t] || 0) + 1; }
      return { n, hidden: root.getAttribute('data-hidden') };
    });
    for (const draw of ['svg', 'canvas']) {
      await open(id, '', draw);
      const before = await ops();
      assert.ok(before.n.Relu > 0 && before.n.MaxPool > 0, `Relu and MaxPool boxes drawn: ${JSON.stringify(before.n)}`);
      assert.equal(before.hidden, null);
      if (await page.isHidden('#options')) await page.click('#btn-options');
      const listed = await page.$$eval('#hide-list label', (ls) => ls.map((l) => [l.querySelector('input').value, l.querySelector('.hide-count').textContent]));
      const summary = await page.evaluate(async (m) => (await (await fetch(`/models/${m}`)).json()).summary.summary.op_types, id);
      assert.deepEqual(Object.fromEntries(listed), Object.fromEntries(summary.map((o) => [o.op_type, String(o.count)])), 'every op type with its count');
      await page.check('#hide-list input[value="Relu"]');
      await page.waitForURL(/hide=Relu(&|$)/);
      await page.check('#hide-list input[value="MaxPool"]');
      await page.waitForURL(/hide=MaxPool,Relu(&|$)/); // sorted: one URL per set
      await shown(page, 'hide=MaxPool,Relu', id);
      await settled();
      const after = await ops();
      assert.equal(after.n.Relu, undefined, `no Relu box left (${draw})`);
      assert.equal(after.n.MaxPool, undefined, `no MaxPool box left (${draw})`);
      assert.equal(after.n.Conv, before.n.Conv, 'the other boxes stay');
      assert.equal(+after.hidden, before.n.Relu + before.n.MaxPool, 'the drawing says how many were hidden');
      assert.match(await page.textContent('#graph-info'), /hidden \(MaxPool, Relu\)/);
      assert.equal(await page.getAttribute('#canvas', 'data-renderer'), draw);
      await page.locator('#viewport').screenshot({ path: path.resolve(OUT, `canvas-hide-${draw}.png`) });
      // the URL alone gives the same view (a shared link): its boxes are checked
      await page.goto(`${base}/?draw=${draw}#/`);
      await page.goto(`${base}/?draw=${draw}#/models/${id}?hide=Relu,MaxPool`);
      await shown(page, 'hide=Relu,MaxPool', id);
      assert.equal((await ops()).n.Relu, undefined);
      if (await page.isHidden('#options')) await page.click('#btn-options'); // open still, when only the hash moved
      assert.deepEqual(await page.$$eval('#hide-list input:checked', (xs) => xs.map((x) => x.value).sort()), ['MaxPool', 'Relu']);
      await page.click('#btn-reset-options');
      await shown(page, '', id);
      assert.doesNotMatch(page.url(), /hide=/);
      assert.equal((await ops()).n.Relu, before.n.Relu, 'reset: the Relu boxes are back');
      assert.deepEqual(await page.$$eval('#hide-list input:checked', (xs) => xs.length), 0);
    }
    await bothWays('squeezenet-hide', id, 'hide=Concat,Relu');
  });

  test('a click selects a box: the URL, the panel, the outline and its edges', async () => {
    const id = await idOf(SQUEEZENET);
    await open(id, '', 'canvas');
    const b = await boxAt((n) => n.title === '/features/features.3/squeeze/Conv');
    assert.ok(b, 'the box is in the layout');
    const before = await pixel(b.left, b.y);
    // hovering names the box (the grid's hit test) and shows a hand
    await page.mouse.move(b.x, b.y);
    await page.waitForFunction(() => document.querySelector('.graph-canvas').title === '/features/features.3/squeeze/Conv');
    assert.equal(await page.$eval('.graph-canvas', (c) => c.style.cursor), 'pointer');
    await page.mouse.click(b.x, b.y);
    await page.waitForURL(new RegExp(`node=${b.node}`));
    await page.waitForFunction(() => document.querySelector('#side-body .op-badge')?.textContent === 'Conv');
    await settled();
    const a = await boxAt((n) => n.title === '/features/features.3/squeeze/Conv');
    const flags = await page.evaluate((i) => document.querySelector('.graph-canvas').__graph.boxFlags[i], a.i);
    assert.equal(flags & 1, 1, 'the box is marked selected');
    const incident = await page.evaluate(() => [...document.querySelector('.graph-canvas').__graph.edgeFlags].filter(Boolean).length);
    assert.ok(incident >= 2, `its edges are marked: ${incident}`);
    // the outline (3.5 units wide, on the box's edge): its most amber pixel across the edge
    const across = [];
    for (let dx = -1.5; dx <= 1.5; dx += 0.5) across.push(await pixel(a.left + dx, a.y));
    const amber = rgb('#d97706');
    const best = across.reduce((p, q) => (q.reduce((s, v, i) => s + Math.abs(v - amber[i]), 0) < p.reduce((s, v, i) => s + Math.abs(v - amber[i]), 0) ? q : p));
    assert.ok(near(best, amber, 24), `the outline is the selection's amber: ${best} (before ${before})`);
    await page.screenshot({ path: path.resolve(OUT, 'canvas-selected.png') });
  });

  test('search: the hits are marked on the canvas and Enter goes to one', async () => {
    const id = await idOf(SQUEEZENET);
    await open(id, '', 'canvas');
    await page.fill('#search', 'Concat');
    await page.waitForSelector('#search-popup:not([hidden]) #search-results li');
    await page.waitForFunction(() => [...document.querySelector('.graph-canvas').__graph.boxFlags].filter((f) => f & 2).length >= 2);
    const hits = await page.evaluate(() => {
      const cv = document.querySelector('.graph-canvas').__graph;
      return cv.data.layout.nodes.filter((b, i) => cv.boxFlags[i] & 2).map((b) => b.rows[0].text);
    });
    // the Concats and what the search finds of their values (their consumers)
    assert.ok(hits.filter((t) => t === 'Concat').length === 8, `hits: ${hits}`);
    await page.keyboard.press('Enter');
    await page.waitForURL(/node=n\d+/);
    await page.waitForFunction(() => document.querySelector('#side-body .op-badge')?.textContent === 'Concat');
    await settled();
    const node = new URL(page.url()).hash.match(/node=(n\d+)/)[1];
    const b = await boxAt(new Function('n', `return n.node === '${node}'`)); // eslint-disable-line no-new-func
    assert.ok(await page.evaluate(({ i, k }) => document.querySelector('.graph-canvas').__graph.boxFlags[i] & 1 && k > 0, b), 'the chosen hit is selected');
    assert.ok(b.x > 0 && b.y > 0, 'and in view');
  });

  test('heat: boxes filled with their heat colours', async () => {
    const id = await idOf(SQUEEZENET);
    await open(id, 'overlay=cost&metric=macs', 'canvas');
    const b = await boxAt((n) => n.heat && n.rows.length >= 3 && n.family === 'conv');
    assert.ok(b, 'a Conv box with heat in view');
    const want = await page.evaluate((i) => document.querySelector('.graph-canvas').__graph.data.layout.nodes[i].heat.color, b.i);
    // the bottom padding of the box (below its last row, inside the outline), in the
    // drawing's units (the view's scale is the page's 100%, 1.25 px per unit)
    const got = await pixel(b.left + b.w - 4 * b.k, b.top + b.h - 2.5 * b.k);
    assert.ok(near(got, rgb(want), 12), `heat fill ${got} is ${want}`);
    // the hottest list's swatches are the boxes' heat fills (the canvas's structure has no
    // frame <rect> to read them from: its boxes' __ox)
    await page.waitForSelector('#heat-panel .heat-row');
    const swatches = await page.evaluate(() => {
      const norm = (c) => { const e = document.createElement('span'); e.style.backgroundColor = c; return e.style.backgroundColor; };
      const fill = new Map(document.querySelector('.graph-canvas').__graph.data.layout.nodes
        .filter((n) => n.heat).map((n) => [n.title || n.id, norm(n.heat.color)]));
      return [...document.querySelectorAll('#heat-panel .heat-row')]
        .map((r) => ({ title: r.title, want: fill.get(r.title), got: r.querySelector('.hl-swatch').style.backgroundColor }));
    });
    assert.ok(swatches.length > 0, 'the hottest nodes listed');
    for (const s of swatches) assert.ok(s.want && s.got === s.want, `${s.title}'s swatch ${s.got} is its heat fill ${s.want}`);
    await page.screenshot({ path: path.resolve(OUT, 'canvas-heat.png') });
  });

  test('expand and collapse: a group box opens on a double click, its cluster label closes it', async () => {
    const id = await idOf(TRANSFORMER);
    await open(id, '', 'canvas');
    const g = await boxAt((n) => n.kind === 'group' && !n.open_all);
    assert.ok(g, 'a group box');
    const group = await page.evaluate((i) => document.querySelector('.graph-canvas').__graph.data.layout.nodes[i].group, g.i);
    await page.mouse.dblclick(g.x, g.y); // a click selects a block, a double click opens it
    await page.waitForURL(/expand=/);
    await shown(page, null, id);
    await page.waitForFunction((p) => {
      const cv = document.querySelector('.graph-canvas').__graph;
      return cv.active && cv.data.layout.clusters.some((c) => c.group === p);
    }, group);
    await settled();
    // the cluster's label (top left of its frame) collapses it
    const c = await page.evaluate((p) => {
      const cv = document.querySelector('.graph-canvas').__graph;
      const cl = cv.data.layout.clusters.find((x) => x.group === p);
      const v = cv.vp.getBoundingClientRect();
      return { x: v.left + cv.pz.x + (cl.x + 12) * cv.pz.k, y: v.top + cv.pz.y + (cl.y + 8) * cv.pz.k };
    }, group);
    await page.mouse.click(c.x, c.y);
    await page.waitForFunction(() => !/expand=/.test(location.hash));
    await shown(page, '', id);
  });

  test('a folded row unfolds its chain when clicked on the canvas', async () => {
    const id = await idOf(TRANSFORMER);
    await open(id, 'group=none', 'canvas');
    await page.focus('#viewport');
    await page.keyboard.press('Home');
    await settled();
    const b = await boxAt((n) => n.title === '/encoder/layers.0/self_attn/Reshape' && n.rows.some((r) => r.unfold));
    assert.ok(b, 'the Reshape with a folded shape');
    const row = await page.evaluate((i) => {
      const cv = document.querySelector('.graph-canvas').__graph;
      const n = cv.data.layout.nodes[i];
      let y = 0; // from the top of the box
      for (let k = 0; k < n.rows.length; k++) {
        if (n.rows[k].style === 'header') { y += 17; continue; }
        if (k === 0) y += 4;
        if (n.rows[k].unfold) return { dy: y + 6, node: n.rows[k].unfold };
        y += 12;
      }
      return null;
    }, b.i);
    await page.mouse.click(b.x, b.top + row.dy * b.k);
    await page.waitForURL(new RegExp(`unfold=${row.node}`));
    await shown(page, `group=none&unfold=${row.node}`, id);
  });

  test('keyboard and screen readers: the boxes in view as a list; Tab, ↓ along an edge, Enter selects', async () => {
    const id = await idOf(SQUEEZENET);
    await open(id, '', 'canvas');
    await page.waitForFunction(() => +document.getElementById('canvas-list').dataset.count > 3);
    const labels = await page.$$eval('#canvas-list li button', (b) => b.map((x) => x.textContent));
    assert.ok(labels.includes('Conv: /features/features.0/Conv'), `labels: ${labels.slice(0, 5)}`);
    assert.ok(labels.length < 67, `only what is in view: ${labels.length} of 67`);
    await page.focus('#viewport');
    await page.keyboard.press('Tab');
    const first = await page.evaluate(() => document.activeElement.closest('#canvas-list') && document.activeElement.textContent);
    assert.ok(first, 'Tab goes from the view to the list of boxes');
    await page.keyboard.press('ArrowDown');
    const second = await page.evaluate(() => document.activeElement.textContent);
    assert.notEqual(second, first, '↓ moves along an edge');
    const focus = await page.evaluate(() => [...document.querySelector('.graph-canvas').__graph.boxFlags].findIndex((f) => f & 8));
    assert.ok(focus >= 0, 'the focused box is outlined on the canvas');
    // down the first fire module to its squeeze's two consumers, then across them
    assert.equal(first, 'input.1');
    for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowDown');
    assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Conv: /features/features.3/expand1x1/Conv');
    await page.keyboard.press('ArrowRight');
    assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Conv: /features/features.3/expand3x3/Conv');
    await page.keyboard.press('ArrowLeft');
    assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Conv: /features/features.3/expand1x1/Conv');
    await page.keyboard.press('Enter');
    await page.waitForURL(/node=n\d+/);
    await page.waitForSelector('#side-panel:not([hidden]) .op-badge');
  });

  // A diff drawn on the canvas (from .../diff/{b}.layout.json): its marks as the SVG's —
  // added, changed (and its changed rows), removed ghosts with their dashed edges, the
  // unchanged context muted, the legend under the drawing.  make_diff_models.py's pair
  // (transformer_12x12 with a Relu removed, a Sigmoid added, an attribute and a weight
  // changed), forced onto the canvas (4,869 nodes: under CANVAS_NODES).
  test('diff marks on the canvas: the same diff views both ways, ghosts, rows and the legend', async () => {
    const dir = path.join(WORK, 'canvas-diff');
    const p = spawnSync('/usr/bin/python3', ['tests/e2e/make_diff_models.py', CORPUS, dir], { encoding: 'utf8' });
    assert.equal(p.status, 0, p.stderr);
    const facts = JSON.parse(p.stdout);
    const a = await idOf(facts.a), b = await idOf(facts.b);
    const sa = await idOf(facts.small[0]), sb = await idOf(facts.small[1]);
    // the diff view of (x, y) with query `key` drawn by `draw`; then, when `pick` names a
    // change, that change clicked in the list (the view centres its box)
    const diffBothWays = (name, x, y, key, pick, opts) => alike(name, async (draw) => {
      await page.goto(`${base}/?draw=${draw}#/`);
      await page.goto(`${base}/?draw=${draw}#/diff/${x}/${y}${key ? `?${key}` : ''}`);
      await page.waitForFunction(() => document.getElementById('canvas').dataset.diff && document.getElementById('graph-state').hidden &&
        document.querySelector('#model-body button.change'), null, { timeout: 60000 });
      assert.equal(await page.getAttribute('#canvas', 'data-renderer'), draw);
      if (pick) {
        const i = await page.$$eval('#model-body button.change', (bs, n) => { const q = bs.find((z) => z.textContent.includes(n)); return q ? q.dataset.index : null; }, pick);
        assert.ok(i !== null, `a change names ${pick}`);
        await page.click(`#model-body button.change[data-index="${i}"]`);
        await page.waitForURL(new RegExp(`change=${i}`));
      }
      await settled();
      // the selection's outline is the page's (CSS on the SVG, drawn on the canvas): off
      await page.evaluate(() => {
        const cv = document.querySelector('.graph-canvas').__graph;
        const root = cv.active ? cv.proxy : document.querySelector('#canvas svg');
        for (const g of root.querySelectorAll('g.node.selected, g.node.flash')) g.classList.remove('selected', 'flash');
      });
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    }, opts);
    await diffBothWays('diff-ghost', a, b, 'group=none', facts.removed.node);
    await diffBothWays('diff-changed', a, b, 'group=none', facts.attribute.node);
    await diffBothWays('diff-added', a, b, '', facts.added.node);
    await diffBothWays('diff-small', sa, sb, '', null, { fit: true });
    // what the canvas drew from: the layout JSON has the SVG's marks, its ghost edges and
    // its legend; the ghost's outline is the removed mark's red
    await page.goto(`${base}/?draw=canvas#/`);
    await page.goto(`${base}/?draw=canvas#/diff/${a}/${b}?group=none`);
    await page.waitForFunction(() => document.querySelector('.graph-canvas')?.__graph.active && document.querySelector('#model-body button.change'), null, { timeout: 60000 });
    const marks = await page.evaluate(() => {
      const l = document.querySelector('.graph-canvas').__graph.data.layout;
      const n = {};
      for (const x of l.nodes) if (x.mark) n[x.mark] = (n[x.mark] || 0) + 1;
      return { n, ghosts: l.edges.filter((e) => e.mark === 'removed').length, rows: l.nodes.filter((x) => x.rows.some((r) => r.mark)).length, legend: l.mark_legend };
    });
    const svgText = await (await fetch(`${base}/models/${a}/diff/${b}.svg?group=none`)).text();
    const count = (re) => (svgText.match(re) || []).length;
    assert.deepEqual(marks.n, { added: count(/<g [^>]*class="node [^"]*mark-added/g), changed: count(/<g [^>]*class="node [^"]*mark-changed/g), removed: count(/<g [^>]*class="node [^"]*mark-removed/g), same: count(/<g [^>]*class="node [^"]*mark-same/g) });
    assert.ok(marks.n.removed >= 1 && marks.n.added >= 1 && marks.n.changed >= 1, JSON.stringify(marks.n));
    assert.equal(marks.ghosts, count(/class="edge[^"]* ghost"/g), 'the ghost edges');
    assert.ok(marks.ghosts >= 1 && marks.rows >= 1, JSON.stringify(marks));
    assert.match(marks.legend.caption, /nodes: 1 added, 1 removed/);
    const ghost = await boxAt((n) => n.mark === 'removed');
    await page.evaluate(([x, y]) => { // its left edge into view
      const cv = document.querySelector('.graph-canvas').__graph, r = cv.vp.getBoundingClientRect();
      cv.pz.set(cv.pz.x - (x - r.left) + 200, cv.pz.y - (y - r.top) + 200, cv.pz.k);
    }, [ghost.left, ghost.y]);
    await settled();
    const g2 = await boxAt((n) => n.mark === 'removed');
    const reds = [];
    for (let dy = -6; dy <= 6; dy++) reds.push(near(await pixel(g2.left + 0.5, g2.y + dy), rgb('#c0392b'), 60));
    assert.ok(reds.some(Boolean), 'the ghost is outlined in the removed mark\'s red');
    // a click on the ghost selects its change, as on the SVG
    await page.mouse.click(g2.x, g2.y);
    await page.waitForFunction(() => /removed/.test(document.getElementById('side-body').textContent));
  });

  test('10,000 nodes in full detail go to the canvas by themselves, culled to the view', async () => {
    const id = await idOf(MODELS.big.file);
    await page.goto(`${base}/#/models/${id}?group=none`);
    await shown(page, 'group=none', id);
    assert.equal(await page.getAttribute('#canvas', 'data-renderer'), 'canvas');
    await settled();
    const [boxes] = (await page.getAttribute('.graph-canvas', 'data-drawn')).split(' ').map(Number);
    assert.ok(boxes > 0 && boxes < 200, `boxes drawn at the start view: ${boxes} of 10,000`);
    assert.equal(await page.$$eval('#canvas svg', (s) => s.length), 0, 'no SVG in the page');
    // the minimap reads the boxes from the detached copy
    await page.waitForFunction(() => { const m = document.getElementById('minimap'); return !m.hidden && m.dataset.drawMs; });
    await page.screenshot({ path: path.resolve(OUT, 'canvas-10k-start.png') });
    await page.focus('#viewport');
    await page.keyboard.press('0');
    await settled();
    await page.screenshot({ path: path.resolve(OUT, 'canvas-10k-fit.png') });
  });
});
