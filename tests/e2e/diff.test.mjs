// diff.test.mjs — the diff view (web/diff.js) in headless Chromium against the real server:
// pick two stored models on the home page, or drop two files; the changes list; a click on
// a change centres its box and opens its details; a click on a box selects its change.
// Run by tests/e2e/run.sh after e2e.test.mjs (models from make_diff_models.py).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { launchBrowser, settled as settledOn, startServer, stopChecked, uploadRaw } from './harness.mjs';

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
    const doc = await (await fetch(`${base}/models/${ids.a}/diff/${ids.b}.json`)).json();
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
    const doc = await (await fetch(`${base}/models/${ids.a}/diff/${ids.b}.json`)).json();
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
    const doc = await (await fetch(`${base}/models/${ids.a}/diff/${ids.b}.json`)).json();
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

  test('no script error and no CSP violation', () => {
    assert.deepEqual(errors, []);
  });
});
