// diff.test.mjs — the diff view (web/diff.js) in headless Chromium against the real server:
// pick two stored models on the home page, or drop two files; the changes list; a click on
// a change centres its box and opens its details; a click on a box selects its change;
// A and B side by side (web/sidebyside.js): selection, pan and zoom in step, the URL.
// Run by tests/e2e/run.sh after e2e.test.mjs (models from make_diff_models.py).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { launchBrowser, lowContrastTexts, settled as settledOn, startServer, stopChecked, uploadRaw } from './harness.mjs';

const BUILD = process.env.BUILD || 'build';
const CORPUS = process.env.ONNXVIZ_CORPUS || '../shared/corpus';
const OUT = process.env.ONNXVIZ_E2E_OUT || `${BUILD}/e2e`;
const WORK = process.env.ONNXVIZ_E2E_WORK || fs.mkdtempSync('/tmp/onnxviz-e2e-');

let server, base, ctx, page, facts, ids;
const errors = [];

async function shot(name) {
  await page.screenshot({ path: path.resolve(OUT, `${name}.png`) });
}

// The diff drawing of a/b is shown and no layout is pending.
async function diffShown(a, b) {
  await page.waitForFunction(([x, y]) => {
    const c = document.getElementById('canvas');
    return c.dataset.diff === `${x}/${y}` && c.querySelector('svg g.node') &&
      document.getElementById('graph-state').hidden && document.querySelector('#model-body .change-list');
  }, [a, b], { timeout: 60000 });
}

// Wait until the view stops moving (harness.mjs).
const settled = () => settledOn(page);

// The diff document of the pair the tests compare (onnxviz.diff/1), from the server.
const diffDoc = async () => (await fetch(`${base}/models/${ids.a}/diff/${ids.b}.json`)).json();

// Is the element inside the viewport (and big enough to see)?
async function inViewport(sel) {
  return page.$eval(sel, (e) => {
    const r = e.getBoundingClientRect();
    const v = document.getElementById('viewport').getBoundingClientRect();
    return r.left >= v.left - 1 && r.right <= v.right + 1 && r.top >= v.top - 1 && r.bottom <= v.bottom + 1 && r.width > 20;
  });
}

// The list item (button.change) whose text names node `name`.
async function changeButton(name) {
  const i = await page.$$eval('#model-body button.change', (bs, n) => {
    const b = bs.find((x) => x.textContent.includes(n));
    return b ? b.dataset.index : null;
  }, name);
  assert.ok(i !== null, `no change listed for ${name}`);
  return `#model-body button.change[data-index="${i}"]`;
}


// ---------------------------------------------------------------- side by side (sidebyside.js)
const PANE = (side) => `#sbs .sbs-pane[data-side="${side}"]`;

// Both panes drawn for a/b (model ids on their canvases), no layout pending.
async function sbsShown(a, b) {
  await page.waitForFunction(([x, y]) => {
    const c = (s) => document.querySelector(`#sbs .sbs-pane[data-side="${s}"] .canvas`);
    return !document.getElementById('sbs').hidden && c('a').dataset.model === x && c('b').dataset.model === y &&
      c('a').querySelector('svg g.node') && c('b').querySelector('svg g.node') && document.getElementById('graph-state').hidden;
  }, [a, b], { timeout: 60000 });
}

// Wait until neither pane moves (as harness.mjs's settled for the single view).
async function sbsSettled() {
  await page.evaluate(() => { window.__sbsT = null; window.__sbsSince = 0; });
  await page.waitForFunction(() => {
    const cs = [...document.querySelectorAll('#sbs .canvas')];
    const t = cs.map((c) => getComputedStyle(c).transform).join(' ');
    const now = performance.now();
    if (window.__sbsT !== t || cs.some((c) => c.classList.contains('moving') || c.dataset.animating)) {
      window.__sbsT = t;
      window.__sbsSince = now;
      return false;
    }
    return now - window.__sbsSince > 250;
  }, null, { timeout: 15000, polling: 50 });
}

// A pane's view: translate and scale of its drawing ({x, y, k}).
function paneView(side) {
  return page.$eval(`${PANE(side)} .canvas`, (c) => {
    const m = new DOMMatrix(getComputedStyle(c).transform);
    return { x: m.e, y: m.f, k: m.a };
  });
}

// Where box `sel` of a pane is on screen, from its pane's top left corner: its centre
// and whether it is inside the pane's view.
function boxSpot(side, sel) {
  return page.$eval(`${PANE(side)} .viewport`, (vp, s) => {
    const el = vp.querySelector(s);
    if (!el) return null;
    const r = el.getBoundingClientRect(), v = vp.getBoundingClientRect();
    return { x: r.left + r.width / 2 - v.left, y: r.top + r.height / 2 - v.top, inView: r.left >= v.left - 1 && r.right <= v.right + 1 && r.top >= v.top - 1 && r.bottom <= v.bottom + 1 };
  }, sel);
}

// The ids of the boxes selected in a pane.
const selectedIn = (side) => page.$$eval(`${PANE(side)} svg g.node.selected`, (gs) => gs.map((g) => g.id));

// The pair the follower is aligned on (#sbs[data-anchor]: A's box id, B's) is at the same
// spot of both panes (within a pixel and a half).
async function anchorAligned() {
  const [ia, ib] = (await page.getAttribute('#sbs', 'data-anchor')).split(' ');
  const pa = await boxSpot('a', `g.node[id="${ia}"]`), pb = await boxSpot('b', `g.node[id="${ib}"]`);
  assert.ok(Math.abs(pa.x - pb.x) < 1.5 && Math.abs(pa.y - pb.y) < 1.5, `anchor ${ia}/${ib} at ${JSON.stringify(pa)} in A, ${JSON.stringify(pb)} in B`);
  return { ia, ib, pa, pb };
}

// anchorAligned for canvas drawings: the boxes are the detached proxy's (canvas.js), placed
// by their layout box and the pane's transform.
async function anchorAlignedCanvas() {
  const spots = await page.evaluate(() => {
    const [ia, ib] = document.getElementById('sbs').dataset.anchor.split(' ');
    return [['a', ia], ['b', ib]].map(([s, id]) => {
      const pane = document.querySelector(`#sbs .sbs-pane[data-side="${s}"]`);
      const o = pane.querySelector('canvas.graph-canvas').__graph.proxy.querySelector(`#nodes > [id="${id}"]`).__ox;
      const m = new DOMMatrix(getComputedStyle(pane.querySelector('.canvas')).transform);
      return { x: m.e + (o.x + o.w / 2) * m.a, y: m.f + (o.y + o.h / 2) * m.a };
    });
  });
  assert.ok(Math.abs(spots[0].x - spots[1].x) < 1.5 && Math.abs(spots[0].y - spots[1].y) < 1.5, `anchor at ${JSON.stringify(spots)}`);
}

describe('diff view in Chromium', () => {
  before(async () => {
    fs.mkdirSync(OUT, { recursive: true });
    const dir = path.join(WORK, 'diff');
    const p = spawnSync('/usr/bin/python3', ['tests/e2e/make_diff_models.py', CORPUS, dir], { encoding: 'utf8' });
    assert.equal(p.status, 0, p.stderr);
    facts = JSON.parse(p.stdout);
    server = await startServer(BUILD, path.join(WORK, 'diff-server'));
    base = server.base;
    ids = { a: await uploadRaw(base, facts.a), b: await uploadRaw(base, facts.b) };
    ctx = await launchBrowser(WORK, base);
    page = ctx.pages()[0] || await ctx.newPage();
    page.setDefaultTimeout(20000);
    await ctx.exposeFunction('__cspViolation', (v) => errors.push(`csp: ${v}`));
    await ctx.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => window.__cspViolation(`${e.violatedDirective} ${e.blockedURI}`));
    });
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  });

  after(async () => {
    if (ctx) await ctx.close();
    if (!server) return;
    await stopChecked(server, assert);
  });

  test('home: pick two stored models (A, then B) and compare them', async () => {
    await page.goto(`${base}/`);
    await page.waitForSelector('#model-list[aria-busy="false"]', { state: 'attached' });
    await page.waitForSelector(`input.compare-pick[value="${ids.a}"]`);
    assert.equal(await page.isDisabled('#btn-compare'), true);
    await page.check(`input.compare-pick[value="${ids.a}"]`);
    await page.check(`input.compare-pick[value="${ids.b}"]`);
    assert.match(await page.textContent('.compare-status'), /A: .* → B: /);
    await shot('diff-01-home-picked');
    await page.click('#btn-compare');
    await page.waitForURL(new RegExp(`#/diff/${ids.a}/${ids.b}`));
    await diffShown(ids.a, ids.b);
    // the summary and the list agree with the server's JSON
    const doc = await diffDoc();
    assert.equal(doc.summary.added, 1);
    assert.equal(doc.summary.removed, 1);
    const chips = await page.textContent('#model-body .dchips');
    assert.match(chips, new RegExp(`\\+${doc.summary.added}\\s*added`));
    assert.match(chips, new RegExp(`~${doc.summary.changed}\\s*changed`));
    const listed = await page.$$eval('#model-body button.change', (bs) => bs.length);
    const expected = doc.model.length + doc.values.length + doc.functions.length +
      doc.nodes.filter((n) => n.status !== 'unchanged').length + doc.tensors.length;
    assert.equal(listed, expected);
    // marks in the drawing: the added box green, the removed one a ghost, unchanged dimmed
    const sig = doc.nodes.find((n) => n.status === 'added');
    assert.equal(await page.getAttribute(`#canvas g.node[data-node="${sig.b}"]`, 'data-mark'), 'added');
    const relu = doc.nodes.find((n) => n.status === 'removed');
    assert.equal(await page.getAttribute(`#canvas g.node[data-other="${relu.a}"]`, 'data-mark'), 'removed');
    // unchanged name scopes collapsed: far fewer boxes than the model's 4,868 nodes
    const boxes = await page.$$eval('#canvas g.node', (g) => g.length);
    assert.ok(boxes < 1200, `${boxes} boxes drawn`);
    await settled();
    // too tall to read whole: it opens at its first change, readable, with a minimap
    const view = await page.evaluate(() => {
      const v = document.getElementById('viewport').getBoundingClientRect();
      const first = document.querySelector('#canvas g.node[data-mark]');
      const r = first.getBoundingClientRect();
      const t = first.querySelector('text');
      return { inView: r.left >= v.left && r.right <= v.right && r.top >= v.top && r.bottom <= v.bottom,
        px: parseFloat(t.getAttribute('font-size')) * t.getScreenCTM().a, mark: first.getAttribute('data-mark') };
    });
    assert.ok(view.inView && view.px >= 9 - 0.01, `the first change in view, readable: ${JSON.stringify(view)}`);
    await page.waitForSelector('#minimap:not([hidden])', { timeout: 10000 });
    await shot('diff-02-view');
  });

  test('a click on a change centres its box, selects it and shows what changed', async () => {
    const sel = await changeButton(facts.attribute.node);
    await page.click(sel);
    await page.waitForURL(/change=\d+/);
    await settled();
    const doc = await diffDoc();
    const node = doc.nodes.find((n) => n.name === facts.attribute.node);
    const box = `#canvas g.node[data-node="${node.b}"]`;
    assert.equal(await page.getAttribute(box, 'class').then((c) => c.includes('selected')), true);
    assert.equal(await inViewport(box), true, 'the changed box is in view');
    assert.equal(await page.getAttribute(sel, 'aria-current'), 'true');
    assert.match(await page.textContent('#side-body'), /attribute axis: -1 → -2/);
    // its changed row is highlighted in the drawing
    assert.ok(await page.$(`${box} rect.row-mark`), 'the axis row is highlighted');
    await shot('diff-03-change-selected');
    // the weight: the MatMul's folded row and the figures
    await page.click(await changeButton(facts.weight.tensor));
    await settled();
    assert.match(await page.textContent('#side-body'), /1 of 12,288|changed\s*1/);
    const mm = doc.nodes.find((n) => n.name === facts.weight.node);
    assert.equal(await inViewport(`#canvas g.node[data-node="${mm.b}"]`), true, 'the MatMul that uses the weight is in view');
    await shot('diff-04-weight');
  });

  test('next / previous change, and a click on a box selects its change', async () => {
    const before = await page.evaluate(() => location.hash);
    await page.click('#change-next');
    await page.waitForFunction((h) => location.hash !== h, before);
    await settled();
    const cur = await page.$eval('#model-body button.change[aria-current="true"]', (b) => b.textContent);
    assert.ok(cur.length > 0);
    // the ghost of the removed Relu: clicking it selects the "removed" change
    const doc = await diffDoc();
    const relu = doc.nodes.find((n) => n.status === 'removed');
    const ghost = `#canvas g.node[data-other="${relu.a}"]`;
    const sel = await changeButton(facts.removed.node);
    await page.click(sel); // centres the ghost
    await settled();
    assert.equal(await inViewport(ghost), true, 'the ghost is in view');
    await shot('diff-05-ghost');
    await page.click('#change-next');
    await page.waitForFunction((s) => document.querySelector(s).getAttribute('aria-current') === 'false', sel);
    await page.click('#change-prev');
    await page.waitForFunction((s) => document.querySelector(s).getAttribute('aria-current') === 'true', sel);
    // a click on a box (bubbling to the viewport as a real one does) selects its change
    await page.click('#change-next');
    await page.waitForFunction((s) => document.querySelector(s).getAttribute('aria-current') === 'false', sel);
    await page.$eval(ghost, (g) => g.querySelector('rect').dispatchEvent(new MouseEvent('click', { bubbles: true })));
    await page.waitForFunction((s) => document.querySelector(s).getAttribute('aria-current') === 'true', sel);
    assert.match(await page.textContent('#side-body'), /removed/);
  });

  test('drop two files on the compare zone: both uploaded, their diff opens', async () => {
    await page.goto(`${base}/#/`);
    await page.waitForSelector('#compare-drop');
    await page.setInputFiles('#compare-input', facts.small);
    await page.waitForURL(/#\/diff\/[0-9a-f]{64}\/[0-9a-f]{64}/, { timeout: 30000 });
    const [, a, b] = /#\/diff\/([0-9a-f]{64})\/([0-9a-f]{64})/.exec(page.url());
    await diffShown(a, b);
    assert.match(await page.textContent('#crumb-name'), /small_a\.onnx → small_b\.onnx/);
    const marks = await page.$$eval('#canvas g.node[data-mark]', (g) => g.map((x) => x.getAttribute('data-mark')));
    assert.equal(marks.filter((m) => m === 'changed').length, 2, `marks ${marks}`);
    await page.click(await changeButton('/block/act'));
    assert.match(await page.textContent('#side-body'), /op type: Relu → Sigmoid/);
    await settled();
    await shot('diff-06-dropped');
    // back to a model from the diff: its own view opens
    await page.click('#side-body a[href^="#/models/"]');
    await page.waitForFunction(() => document.getElementById('canvas').dataset.model && !document.getElementById('canvas').dataset.diff);
  });

  test('side by side: the switch shows A and B in two panes, each box marked from the pairing', async () => {
    await page.setViewportSize({ width: 1400, height: 900 });
    await page.goto(`${base}/#/diff/${ids.a}/${ids.b}`);
    await diffShown(ids.a, ids.b);
    assert.equal(await page.getAttribute('#btn-sbs', 'aria-pressed'), 'false');
    await page.click('#btn-sbs');
    await page.waitForURL(/view=sbs/);
    await sbsShown(ids.a, ids.b);
    assert.equal(await page.getAttribute('#btn-sbs', 'aria-pressed'), 'true');
    assert.equal(await page.isVisible('#viewport'), false, 'the single view gives way');
    assert.equal(await page.isVisible(`${PANE('a')} .viewport`), true);
    assert.equal(await page.isVisible(`${PANE('b')} .viewport`), true);
    const doc = await diffDoc();
    const relu = doc.nodes.find((n) => n.status === 'removed');
    const sig = doc.nodes.find((n) => n.status === 'added');
    const sm = doc.nodes.find((n) => n.name === facts.attribute.node);
    // each pane is its model's own drawing: the removed Relu only in A, the Sigmoid only in B
    assert.equal(await page.getAttribute(`${PANE('a')} g.node[data-node="${relu.a}"]`, 'data-sbs'), 'removed');
    assert.equal(await page.$(`${PANE('b')} g.node[data-other]`), null, 'no ghost in B: A is drawn beside it');
    assert.equal(await page.getAttribute(`${PANE('b')} g.node[data-node="${sig.b}"]`, 'data-sbs'), 'added');
    assert.equal(await page.$(`${PANE('a')} g.node[data-node="${sig.b}"].sbs-added`), null);
    assert.equal(await page.getAttribute(`${PANE('a')} g.node[data-node="${sm.a}"]`, 'data-sbs'), 'changed');
    assert.equal(await page.getAttribute(`${PANE('b')} g.node[data-node="${sm.b}"]`, 'data-sbs'), 'changed');
    // an unchanged box is not marked; a scope box holding no change neither
    const unchanged = doc.nodes.find((n) => n.status === 'unchanged' && n.a && n.b);
    const plain = await page.$$eval(`${PANE('b')} g.node[data-node]:not([data-sbs])`, (g) => g.length);
    assert.ok(plain > 10, `${plain} unmarked boxes in B (e.g. ${unchanged.name})`);
    // it opens at the first change, selected and centred in both panes at the same spot
    await sbsSettled();
    const [sa, sb] = (await page.getAttribute('#sbs', 'data-selected')).split(' ');
    assert.match(sa, /^b:/);
    assert.match(sb, /^a:/);
    await anchorAligned();
    // the panes' headers and notes are readable (WCAG AA, as the rest of the page)
    assert.deepEqual(await lowContrastTexts(page), []);
    await shot('diff-07-side-by-side');
  });

  test('side by side: selecting a box in A selects its pair in B, and back', async () => {
    const doc = await diffDoc();
    const byA = new Map(doc.nodes.filter((n) => n.a).map((n) => [n.a, n]));
    const byB = new Map(doc.nodes.filter((n) => n.b).map((n) => [n.b, n]));
    // a box of A in view whose node is paired and drawn in B (a real click)
    const pick = await page.$$eval(`${PANE('a')} svg g.node[data-node]`, (gs, vpSel) => {
      const v = document.querySelector(vpSel).getBoundingClientRect();
      const g = gs.find((x) => {
        const r = x.getBoundingClientRect();
        return !x.classList.contains('selected') && r.left > v.left + 10 && r.right < v.right - 10 && r.top > v.top + 40 && r.bottom < v.bottom - 10;
      });
      return g ? g.getAttribute('data-node') : null;
    }, `${PANE('a')} .viewport`);
    assert.ok(pick, 'a box of A in view');
    assert.ok(byA.get(pick).b, `${pick} is paired`);
    const at = await page.$eval(`${PANE('a')} g.node[data-node="${pick}"]`, (g) => { const r = g.getBoundingClientRect(); return { x: r.left + r.width / 2, y: r.top + r.height / 2 }; });
    await page.mouse.click(at.x, at.y);
    await page.waitForURL(new RegExp(`pick=a:${pick}`));
    await sbsSettled();
    assert.deepEqual(await selectedIn('a'), [pick]);
    const inB = await page.$$eval(`${PANE('b')} svg g.node.selected`, (gs) => gs.map((g) => g.getAttribute('data-node')));
    assert.deepEqual(inB, [byA.get(pick).b], 'its pair selected in B');
    // the pair centred in B, A's box beside it at the same spot
    const pb = await boxSpot('b', `g.node[data-node="${byA.get(pick).b}"]`);
    const pa = await boxSpot('a', `g.node[data-node="${pick}"]`);
    const vb = await page.$eval(`${PANE('b')} .viewport`, (v) => ({ w: v.clientWidth, h: v.clientHeight }));
    assert.ok(pb.inView && Math.abs(pb.x - vb.w / 2) < 3 && Math.abs(pb.y - vb.h / 2) < 3, `the pair centred in B: ${JSON.stringify(pb)} of ${JSON.stringify(vb)}`);
    assert.ok(Math.abs(pa.x - pb.x) < 1.5 && Math.abs(pa.y - pb.y) < 1.5, `A's box at the pair's spot: ${JSON.stringify(pa)} ${JSON.stringify(pb)}`);
    assert.match(await page.textContent(`${PANE('b')} .sbs-note`), /its pair/);
    // and back: a box of B selects its pair in A (the changed Softmax, through its change)
    const sm = doc.nodes.find((n) => n.name === facts.attribute.node);
    await page.$eval(`${PANE('b')} g.node[data-node="${sm.b}"] > rect`, (r) => r.dispatchEvent(new MouseEvent('click', { bubbles: true })));
    await page.waitForURL(new RegExp(`pick=b:${sm.b}`));
    await sbsSettled();
    const inA = await page.$$eval(`${PANE('a')} svg g.node.selected`, (gs) => gs.map((g) => g.getAttribute('data-node')));
    assert.deepEqual(inA, [sm.a]);
    assert.equal(byB.get(sm.b).a, sm.a);
    assert.equal((await boxSpot('a', `g.node[data-node="${sm.a}"]`)).inView, true, 'its pair brought into view in A');
    // the node's change is the current one in the list, its details in the panel
    assert.match(await page.textContent('#model-body button.change[aria-current="true"]'), /Softmax/);
    assert.match(await page.textContent('#side-body'), /attribute axis: -1 → -2/);
    await shot('diff-08-side-by-side-pair');
  });

  test('side by side: a node only in A selects nothing in B, and says so', async () => {
    const doc = await diffDoc();
    const relu = doc.nodes.find((n) => n.status === 'removed');
    await page.$eval(`${PANE('a')} g.node[data-node="${relu.a}"] > rect`, (r) => r.dispatchEvent(new MouseEvent('click', { bubbles: true })));
    await page.waitForURL(new RegExp(`pick=a:${relu.a}`));
    await sbsSettled();
    assert.deepEqual(await selectedIn('a'), [relu.a]);
    assert.deepEqual(await selectedIn('b'), [], 'nothing selected in B');
    assert.match(await page.textContent(`${PANE('b')} .sbs-note`), /nothing selected here: .*Relu is only in A \(removed\)/);
    assert.match(await page.textContent('#status'), /only in A .*nothing selected in B/);
    assert.equal((await boxSpot('a', `g.node[data-node="${relu.a}"]`)).inView, true);
    assert.match(await page.textContent('#model-body button.change[aria-current="true"]'), /Relu/);
    await shot('diff-09-side-by-side-only-in-a');
  });

  test('side by side: panning one pans the other; zooming one zooms the other', async () => {
    await sbsSettled();
    const a0 = await paneView('a'), b0 = await paneView('b');
    const box = await page.$eval(`${PANE('a')} .viewport`, (v) => { const r = v.getBoundingClientRect(); return { x: r.left + r.width / 2, y: r.top + r.height / 2 }; });
    // a drag in A (on empty paper or a box: a drag is not a click)
    await page.mouse.move(box.x, box.y);
    await page.mouse.down();
    for (let i = 1; i <= 10; i++) await page.mouse.move(box.x - 8 * i, box.y - 20 * i);
    await page.mouse.up();
    await sbsSettled();
    const a1 = await paneView('a'), b1 = await paneView('b');
    assert.ok(Math.abs(a1.x - a0.x + 80) < 1 && Math.abs(a1.y - a0.y + 200) < 1, `A panned by the drag: ${JSON.stringify([a0, a1])}`);
    assert.ok(b1.y - b0.y < -100, `B panned up with it: ${JSON.stringify([b0, b1])}`);
    assert.equal(b1.k, a1.k);
    await anchorAligned();
    // back: a drag in B pans A
    const bbox = await page.$eval(`${PANE('b')} .viewport`, (v) => { const r = v.getBoundingClientRect(); return { x: r.left + r.width / 2, y: r.top + r.height / 2 }; });
    await page.mouse.move(bbox.x, bbox.y);
    await page.mouse.down();
    for (let i = 1; i <= 10; i++) await page.mouse.move(bbox.x, bbox.y + 15 * i);
    await page.mouse.up();
    await sbsSettled();
    const a2 = await paneView('a');
    assert.ok(a2.y - a1.y > 100, `A panned down with B: ${JSON.stringify([a1, a2])}`);
    await anchorAligned();
    // the wheel over B zooms B around the pointer, and A to the same scale, in step
    await page.mouse.move(bbox.x + 30, bbox.y + 40);
    await page.mouse.wheel(0, -400);
    await sbsSettled();
    const a3 = await paneView('a'), b3 = await paneView('b');
    assert.ok(b3.k > a2.k * 1.5, `B zoomed in: ${a2.k} → ${b3.k}`);
    assert.equal(a3.k, b3.k, 'A at the same scale');
    await anchorAligned();
    // the toolbar's zoom acts on the pane that leads, the other follows
    await page.click('#zoom-out');
    await sbsSettled();
    const a4 = await paneView('a'), b4 = await paneView('b');
    assert.ok(b4.k < b3.k && a4.k === b4.k, `zoomed out together: ${b3.k} → ${b4.k}, A ${a4.k}`);
    await anchorAligned();
    await shot('diff-10-side-by-side-moved');
  });

  test('side by side: the URL reopens it with its selection; the switch goes back to one view', async () => {
    const doc = await diffDoc();
    const add = doc.nodes.find((n) => n.status === 'added');
    const url = `${base}/#/diff/${ids.a}/${ids.b}?view=sbs&pick=b:${add.b}`;
    const other = await ctx.newPage();
    try {
      await other.setViewportSize({ width: 1400, height: 900 });
      await other.goto(url);
      await other.waitForFunction((id) => {
        const g = document.querySelector(`#sbs .sbs-pane[data-side="b"] g.node[data-node="${id}"]`);
        return g && g.classList.contains('selected') && document.getElementById('graph-state').hidden;
      }, add.b, { timeout: 60000 });
      assert.equal(await other.getAttribute('#btn-sbs', 'aria-pressed'), 'true');
      assert.equal(await other.$$eval('#sbs .sbs-pane[data-side="a"] svg g.node.selected', (g) => g.length), 0);
      assert.match(await other.textContent('#sbs .sbs-pane[data-side="a"] .sbs-note'), /only in B \(added\)/);
      assert.match(await other.textContent('#model-body button.change[aria-current="true"]'), /Sigmoid/);
    } finally {
      await other.close();
    }
    // the keyboard in a pane: Tab from A's view reaches a box, Enter selects it and its pair
    await page.focus(`${PANE('a')} .viewport`);
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => { const g = document.activeElement.closest && document.activeElement.closest('g.node'); return g && g.closest('.sbs-pane').dataset.side; });
    assert.equal(focused, 'a', 'a box of A has the focus');
    await page.keyboard.press('ArrowDown');
    const id = await page.evaluate(() => document.activeElement.id);
    await page.keyboard.press('Enter');
    await page.waitForURL(new RegExp(`pick=a:${id}`));
    // back to one view: the merged drawing, the URL without view=sbs
    await page.click('#btn-sbs');
    await page.waitForFunction(() => !/view=sbs/.test(location.hash));
    await diffShown(ids.a, ids.b);
    assert.equal(await page.isVisible('#sbs'), false);
    assert.equal(await page.getAttribute('#btn-sbs', 'aria-pressed'), 'false');
    await page.setViewportSize({ width: 1440, height: 900 });
  });

  test('side by side on the canvas renderer (draw=canvas): marks drawn, a click on a box selects its pair', async () => {
    await page.setViewportSize({ width: 1400, height: 900 });
    const doc = await diffDoc();
    const byA = new Map(doc.nodes.filter((n) => n.a).map((n) => [n.a, n]));
    const relu = doc.nodes.find((n) => n.status === 'removed');
    await page.goto(`${base}/?draw=canvas#/diff/${ids.a}/${ids.b}?view=sbs`);
    await page.waitForFunction(([x, y]) => {
      const c = (s) => document.querySelector(`#sbs .sbs-pane[data-side="${s}"] .canvas`);
      return c('a').dataset.model === x && c('b').dataset.model === y && c('a').dataset.renderer === 'canvas' &&
        c('b').dataset.renderer === 'canvas' && document.getElementById('sbs').dataset.pairs && document.getElementById('graph-state').hidden;
    }, [ids.a, ids.b], { timeout: 60000 });
    await sbsSettled();
    // the removed Relu's mark is in A's layout, which the canvas draws (canvas.js boxStyle)
    const mark = await page.evaluate((id) => {
      const gr = document.querySelector('#sbs .sbs-pane[data-side="a"] canvas.graph-canvas').__graph;
      const g = gr.proxy.querySelector(`g.node[data-node="${id}"]`);
      return g && [g.getAttribute('data-sbs'), gr.data.layout.nodes[g.__ox.box].mark];
    }, relu.a);
    assert.deepEqual(mark, ['removed', 'removed']);
    // a box of A in view, paired, clicked where the canvas draws it
    const at = await page.evaluate(() => {
      const pane = document.querySelector('#sbs .sbs-pane[data-side="a"]');
      const gr = pane.querySelector('canvas.graph-canvas').__graph;
      const v = pane.querySelector('.viewport').getBoundingClientRect();
      const m = new DOMMatrix(getComputedStyle(pane.querySelector('.canvas')).transform);
      for (const g of gr.proxy.querySelectorAll('g.node[data-node]')) {
        const o = g.__ox;
        const x = v.left + m.e + (o.x + o.w / 2) * m.a, y = v.top + m.f + (o.y + o.h / 2) * m.a;
        if (!g.classList.contains('selected') && x > v.left + 40 && x < v.right - 40 && y > v.top + 40 && y < v.bottom - 40) return { id: g.getAttribute('data-node'), box: g.id, x, y };
      }
      return null;
    });
    assert.ok(at, 'a box of A in view');
    await page.mouse.click(at.x, at.y);
    await page.waitForURL(new RegExp(`pick=a:${at.box}`));
    await sbsSettled();
    const sel = await page.evaluate(() => ['a', 'b'].map((s) => [...document.querySelector(`#sbs .sbs-pane[data-side="${s}"] canvas.graph-canvas`).__graph.proxy.querySelectorAll('g.node.selected')].map((g) => g.getAttribute('data-node'))));
    assert.deepEqual(sel, [[at.id], byA.get(at.id).b ? [byA.get(at.id).b] : []]);
    await anchorAlignedCanvas();
    await shot('diff-11-side-by-side-canvas');
  });

  test('no script error and no CSP violation', () => {
    assert.deepEqual(errors, []);
  });
});
