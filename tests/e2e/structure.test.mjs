// structure.test.mjs — structure first (issue 23): the page uploads a model's structure
// alone, draws it, then moves to the whole model.  The walk itself in node (web/structure.js
// is a module), then the page in Chromium with CDP network emulation at 100 Mbit/s each
// way and 20 ms latency, on corpus models and a 320 MB file of random weights made here.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { graphShown, launchBrowser, startServer, stopChecked, uploadRaw } from './harness.mjs';
import { Sha256, locationOf, sha256Of, structureOf } from '../../web/structure.js';

const BUILD = process.env.BUILD || 'build';
const CORPUS = process.env.ONNXVIZ_CORPUS || '../shared/corpus';
const WORK = process.env.ONNXVIZ_E2E_WORK || fs.mkdtempSync('/tmp/onnxviz-e2e-');
const BIG_MB = +(process.env.ONNXVIZ_STRUCTURE_MB || 320);
const MAKE = path.join(path.dirname(new URL(import.meta.url).pathname), 'make_structure_models.py');
const SQUEEZENET = path.join(CORPUS, 'models/real/squeezenet1_1.onnx');
const TRANSFORMER = path.join(CORPUS, 'models/real/transformer_12x12.onnx');
const SILERO = path.join(CORPUS, 'models/real/silero_vad_v5.onnx');
const LINK = { offline: false, latency: 20, downloadThroughput: 100e6 / 8, uploadThroughput: 100e6 / 8 };
const dir = path.join(WORK, 'structure');
fs.mkdirSync(dir, { recursive: true });

const fileOf = async (p) => new File([await fs.openAsBlob(p)], path.basename(p));
const sha256File = (p) => new Promise((res, rej) => {
  const h = crypto.createHash('sha256');
  fs.createReadStream(p).on('data', (d) => h.update(d)).on('end', () => res(h.digest('hex'))).on('error', rej);
});
const checkStructure = (orig, structure) => JSON.parse(execFileSync('/usr/bin/python3', [MAKE, 'check', orig, structure], { encoding: 'utf8' }));

describe('the structure walk (web/structure.js in node)', () => {
  let models;
  before(() => { models = JSON.parse(execFileSync('/usr/bin/python3', [MAKE, dir, '0'], { encoding: 'utf8' })); });

  test('every payload kind and place: cut where the bytes are raw external data, kept inline elsewhere', async () => {
    const k = models.kinds;
    const s = await structureOf(await fileOf(k.file), { minSaving: 0 });
    assert.equal(s.reason, '');
    assert.deepEqual(s.ranges.map((r) => r.tensor).sort(), k.cut);
    const out = path.join(dir, 'kinds.structure.onnx');
    fs.writeFileSync(out, s.bytes);
    // python3-onnx reads it, the payloads at (offset, length) of the file are the values
    assert.deepEqual(checkStructure(k.file, out), k.cut);
    assert.equal(s.cut, s.ranges.reduce((n, r) => n + r.length, 0));
  });

  test('corpus models: the structure is the same model with its weights external', async () => {
    for (const m of [SQUEEZENET, TRANSFORMER, SILERO]) {
      const s = await structureOf(await fileOf(m));
      assert.ok(s.bytes, `${m}: ${s.reason}`);
      const out = path.join(dir, `${path.basename(m)}.structure`);
      fs.writeFileSync(out, s.bytes);
      assert.equal(checkStructure(m, out).length, s.ranges.length);
      assert.ok(s.bytes.length < s.fileSize / 4, `${m}: ${s.bytes.length} of ${s.fileSize}`);
    }
  });

  test('reading ahead: the same structure in fewer waits, on a chain of equal blocks and a transformer', async () => {
    // a 100 MB chain made here: 23 blocks of a 4 MiB weight and its bias (the period is
    // found after four jumps)
    const chain = JSON.parse(execFileSync('/usr/bin/python3', [MAKE, path.join(dir, 'chain'), '100'], { encoding: 'utf8' })).big;
    for (const [m, most] of [[chain.file, 0.5], [TRANSFORMER, 0.6]]) {
      const f = await fileOf(m);
      const plain = await structureOf(f, { ahead: 0 });
      const fast = await structureOf(f);
      assert.ok(plain.bytes && fast.bytes, m);
      assert.equal(Buffer.compare(Buffer.from(plain.bytes), Buffer.from(fast.bytes)), 0, `${m}: the same bytes`);
      assert.deepEqual(fast.ranges, plain.ranges);
      assert.equal(plain.hits, 0);
      assert.ok(fast.reads + fast.hits >= plain.reads, `${m}: every jump is a read or a hit`);
      assert.ok(fast.reads <= most * plain.reads, `${m}: ${fast.reads} reads waited for with reading ahead, ${plain.reads} without`);
      assert.ok(fast.read <= plain.read + 6 * 16384 * fast.hits, `${m}: ${fast.read} bytes read, ${plain.read} without`);
      console.log(`  ${path.basename(m)}: ${plain.reads} reads waited for -> ${fast.reads} (${fast.hits} read ahead)`);
    }
    fs.rmSync(path.join(dir, 'chain'), { recursive: true, force: true });
  });

  test('a file the walk cannot read is left to the server', async () => {
    const good = fs.readFileSync(SQUEEZENET);
    const cases = {
      truncated: good.subarray(0, good.length - 1000),
      garbage: crypto.randomBytes(200000),
      group: Buffer.from([0x0b, 0x0c]), // wire types 3 and 4
      'no graph': Buffer.from([0x08, 0x07]), // ir_version alone
      empty: Buffer.alloc(0),
    };
    for (const [name, bytes] of Object.entries(cases)) {
      const s = await structureOf(new File([bytes], 'x.onnx'));
      assert.equal(s.bytes, null, name);
      assert.ok(s.reason, name);
    }
    // nested deeper than the walk goes: graph -> node -> attribute g -> ... 40 times
    let g = Buffer.alloc(0);
    const field = (n, b) => Buffer.concat([Buffer.from([(n << 3) | 2]), Buffer.from(varint(b.length)), b]);
    for (let i = 0; i < 40; i++) g = field(1, field(5, field(6, g))); // node{attribute{g{...}}}
    const s = await structureOf(new File([field(7, g)], 'deep.onnx'));
    assert.equal(s.bytes, null);
    assert.match(s.reason, /deeper/);
  });

  // Hostile files in the page: mutants of corpus models (bytes changed at tensor headers,
  // the length varints before payloads and anywhere; truncations), made by a fixed-seed
  // generator.  Whatever the bytes, the walk ends, answers a structure or a reason (never
  // throws), and a structure it answers is sound: its ranges lie in the file, apart, and
  // sum to what it says it cut; walked again, it is valid protobuf with nothing left to cut.
  test('mutated models: the walk answers a sound structure or a reason, never throws', async () => {
    let seed = 0x2545f491;
    const rnd = (n) => { seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5; return (seed >>> 0) % n; };
    const seen = { structure: 0, reason: 0 };
    const t0 = performance.now();
    for (const m of [SQUEEZENET, SILERO, models.kinds.file]) {
      const orig = fs.readFileSync(m);
      const base = await structureOf(new File([orig], 'm.onnx'), { minSaving: 0 });
      // where a mutation matters most: the bytes before each payload (its tag and length)
      const hot = base.ranges.flatMap((r) => [1, 2, 3, 4, 5, 8, 12, 20].map((d) => r.offset - d)).filter((x) => x >= 0);
      for (let i = 0; i < 120; i++) {
        const b = Buffer.from(orig);
        const edits = 1 + rnd(3);
        for (let e = 0; e < edits; e++) {
          const at = rnd(3) === 0 ? rnd(b.length) : rnd(2) ? hot[rnd(hot.length)] : rnd(Math.min(b.length, 4096));
          b[at] = rnd(4) === 0 ? b[at] ^ (1 << rnd(8)) : rnd(256);
        }
        const bytes = rnd(8) === 0 ? b.subarray(0, rnd(b.length)) : b;
        const what = `${path.basename(m)} mutant ${i}`;
        const s = await structureOf(new File([bytes], 'm.onnx'), { minSaving: 0 });
        if (!s.bytes) { assert.ok(s.reason, `${what}: no structure and no reason`); seen.reason++; continue; }
        seen.structure++;
        const rs = [...s.ranges].sort((x, y) => x.offset - y.offset);
        let end = 0;
        for (const r of rs) {
          assert.ok(r.length > 0 && r.offset >= end && r.offset + r.length <= bytes.length, `${what}: range ${JSON.stringify(r)} after ${end} in ${bytes.length} bytes`);
          end = r.offset + r.length;
        }
        assert.equal(s.cut, rs.reduce((n, r) => n + r.length, 0), `${what}: cut`);
        const again = await structureOf(new File([s.bytes], 'm.onnx'), { minSaving: 0 });
        assert.equal(again.ranges.length, 0, `${what}: the structure walked again cuts ${again.ranges.length} more`);
        assert.equal(again.reason, 'no tensor payload to cut', `${what}: the structure walked again: ${again.reason}`);
      }
    }
    console.log(`  mutants: ${seen.structure} structures, ${seen.reason} left to the server, in ${(performance.now() - t0).toFixed(0)} ms`);
    assert.ok(seen.structure > 50 && seen.reason > 20, `both outcomes are exercised: ${JSON.stringify(seen)}`);
  });

  test('the location is the file name when the server takes it as it is', () => {
    assert.equal(locationOf('model.onnx'), 'model.onnx');
    for (const bad of ['a/b.onnx', 'a\\b.onnx', '..', '.', 'C:x.onnx', 'x\n.onnx', 'é'.repeat(200), '']) assert.equal(locationOf(bad), 'model.onnx', bad);
  });

  test('SHA-256 in slices equals node:crypto; its speed', async () => {
    for (const n of [0, 1, 55, 56, 63, 64, 65, 1000, 100003]) {
      const b = crypto.randomBytes(n);
      const s = new Sha256();
      for (let a = 0; a < n; a += 37) s.update(b.subarray(a, a + 37));
      assert.equal(s.hex(), crypto.createHash('sha256').update(b).digest('hex'), `${n} bytes`);
    }
    const big = crypto.randomBytes(32 << 20);
    const t0 = performance.now();
    const hex = await sha256Of(new File([big], 'b'), null, 4 << 20);
    const ms = performance.now() - t0;
    assert.equal(hex, crypto.createHash('sha256').update(big).digest('hex'));
    console.log(`  sha256 in JS: ${(big.length / ms / 1e3).toFixed(0)} MB/s (node, load ${fs.readFileSync('/proc/loadavg', 'utf8').split(' ')[0]})`);
  });
});

function varint(v) { const o = []; while (v >= 0x80) { o.push((v & 0x7f) | 0x80); v >>>= 7; } o.push(v); return o; }

describe('structure first in Chromium at 100 Mbit/s, 20 ms', () => {
  let server, base, ctx, page, cdp, big;
  const errors = [];
  const posts = []; // the headers of each POST /models?name= (a structure, or a file whole)

  before(async () => {
    server = await startServer(BUILD, dir);
    base = server.base;
    ctx = await launchBrowser(dir, base);
    page = ctx.pages()[0] || await ctx.newPage();
    page.setDefaultTimeout(60000);
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    page.on('console', (m) => { if (m.type() === 'error' && !/status of 404/.test(m.text())) errors.push(`console: ${m.text()}`); });
    page.on('request', (q) => { if (q.method() === 'POST' && /\/models\?name=/.test(q.url())) posts.push(q.headers()); });
    cdp = await page.context().newCDPSession(page);
    await cdp.send('Network.enable');
    await page.goto(`${base}/`);
  });

  after(async () => {
    if (ctx) await ctx.close();
    if (!server) return;
    await stopChecked(server, assert);
  });

  const throttle = (on) => cdp.send('Network.emulateNetworkConditions', on ? LINK : { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
  const uploadBytes = async () => +/^onnxviz_upload_bytes_total (\d+)/m.exec(await (await fetch(`${base}/metrics`)).text())[1];
  const nodeIds = async (id, q = '') => {
    const svg = await (await fetch(`${base}/models/${id}/graph.svg${q}`)).text();
    return [...svg.matchAll(/<g id="([^"]*)" class="node /g)].map((m) => m[1]);
  };
  const card = (k) => page.$eval('#upload-card', (c, key) => c.dataset[key] || null, k);
  const view = () => page.evaluate(() => {
    const m = new DOMMatrix(getComputedStyle(document.getElementById('canvas')).transform);
    return { x: m.e, y: m.f, k: m.a };
  });

  // Choose `file` in the page; answers {ms: file chosen to graph drawn, structure: the
  // structure's id, bytes: its size as the server stored it}.
  async function chooseFile(file) {
    await page.evaluate(() => { delete document.getElementById('canvas').dataset.model; });
    const t0 = Date.now();
    await page.setInputFiles('#file-input', file);
    await page.waitForFunction(() => document.getElementById('canvas').dataset.model, null, { timeout: 60000 });
    await graphShown(page, null, null); // the structure's drawing (or already the whole model's)
    const ms = Date.now() - t0;
    const structure = await card('structureId');
    const stored = await (await fetch(`${base}/models/${structure}`)).json();
    return { ms, structure, bytes: stored.size };
  }

  test('corpus models: drawn from the structure, the same drawing; previews say the weights are not there yet; then the whole model with the view kept', async () => {
    let hold = null;
    // the weights (POST /uploads, then the parts) wait until the test has looked at the
    // structure
    const uploads = (u) => u.pathname === '/uploads';
    await page.route(uploads, async (route) => {
      if (route.request().method() === 'POST') await new Promise((res) => { hold = res; });
      await route.continue();
    });
    await throttle(true);
    for (const m of [SQUEEZENET, TRANSFORMER]) {
      const sha = await sha256File(m);
      const size = fs.statSync(m).size;
      const r = await chooseFile(m);
      console.log(`  ${path.basename(m)} (${(size / 1e6).toFixed(1)} MB): graph in ${r.ms} ms from a ${(r.bytes / 1e3).toFixed(0)} KB structure at 100 Mbit/s`);
      assert.notEqual(r.structure, sha);
      assert.equal(String(r.bytes), await card('structureBytes'), 'the card says the structure\'s size');
      // it went gzip'd (Content-Encoding), and the server stored the decoded structure
      const sent = +(await card('sentBytes'));
      assert.equal(posts[posts.length - 1]['content-encoding'], 'gzip');
      assert.ok(sent > 0 && sent < r.bytes / 3, `the structure went gzip'd: ${sent} bytes for ${r.bytes}`);
      assert.ok(r.bytes < size / 4, `structure ${r.bytes} of ${size}`);
      assert.match(await page.textContent('#structure-sizes'), /^Structure [\d.]+ KB of [\d.]+ MB/);
      // a weight: "weights not uploaded", in the node panel and the preview
      // squeezenet: a drawn node with a weight says "weights not uploaded", in the node
      // panel and the preview
      const node = m === SQUEEZENET ? await page.evaluate(async () => {
        for (const g of document.querySelectorAll('#canvas svg g.node[data-node]')) {
          const n = await (await fetch(`/models/${document.getElementById('canvas').dataset.model}/nodes/${g.dataset.node}`)).json();
          if ((n.inputs || []).some((v) => v.initializer && v.initializer.storage === 'external')) return n.id;
        }
        return null;
      }) : null;
      if (m === SQUEEZENET) {
        assert.ok(node, 'a drawn node with a weight');
        await page.evaluate((n) => { location.hash = `${location.hash.split('?')[0]}?node=${n}`; }, node);
        await page.waitForSelector('#side-body .init-box');
        assert.match(await page.textContent('#side-body'), /weights not uploaded/);
        await page.click('#side-body .init-box button:text-is("Preview values")');
        await page.waitForSelector('#weights-missing');
        assert.match(await page.textContent('#weights-missing'), /^Weights not uploaded — this is the structure of squeezenet1_1\.onnx \(20\.\d KB of 4\.72 MB\); /);
        await page.click('#side-back');
      }
      // zoom in and move: this view must survive the move to the whole model
      await page.focus('#viewport');
      for (const key of ['+', '+', 'ArrowRight', 'ArrowDown']) await page.keyboard.press(key);
      await page.waitForTimeout(400);
      const before = await view();
      const hash = await page.evaluate(() => location.hash);
      // the structure's drawing, before its URLs redirect to the whole model's
      const drawn = {};
      for (const q of ['', '?group=none']) drawn[q] = await nodeIds(r.structure, q);
      while (!hold) await page.waitForTimeout(50);
      hold();
      hold = null;
      await page.waitForFunction((id) => document.getElementById('canvas').dataset.model === id, sha, { timeout: 60000 });
      await graphShown(page, null, sha);
      assert.equal(await card('weights'), 'sent');
      const after = await view();
      for (const k of ['x', 'y', 'k']) assert.ok(Math.abs(after[k] - before[k]) < 1e-6 * Math.max(1, Math.abs(before[k])), `view ${k}: ${before[k]} -> ${after[k]}`);
      assert.equal(await page.evaluate(() => location.hash), hash.replace(r.structure, sha), 'the same route, the whole model\'s id');
      if (node) {
        assert.equal(await page.$eval('#canvas svg g.node.selected', (g) => g.dataset.node), node);
        // the panel asks the whole model's node again: wait for its answer
        await page.waitForFunction(() => /· raw/.test(document.getElementById('side-body').textContent), null, { timeout: 20000 })
          .catch(() => {});
        assert.match(await page.textContent('#side-body'), /· raw/, 'the panel, now of the whole model');
      }
      // the same drawing: the structure's and the plain upload's node ids, overview and detail
      for (const q of ['', '?group=none']) assert.deepEqual(drawn[q], await nodeIds(sha, q), `${path.basename(m)} ${q}`);
      // the structure's URLs now lead to the whole model; GET /models lists it once
      const moved = await fetch(`${base}/models/${r.structure}/graph.svg`, { redirect: 'manual' });
      assert.equal(moved.status, 307);
      assert.equal(moved.headers.get('location'), `/models/${sha}/graph.svg`);
      const listed = (await (await fetch(`${base}/models`)).json()).models.map((x) => x.id);
      assert.ok(listed.includes(sha) && !listed.includes(r.structure), 'listed once');
    }
    await page.unroute(uploads);
    await throttle(false);
  });

  test(`a ${BIG_MB} MB single-file model: graph from a structure of a few KB, then the whole model`, async () => {
    const t0 = Date.now();
    big = JSON.parse(execFileSync('nice', ['-n', '10', '/usr/bin/python3', MAKE, dir, String(BIG_MB)], { encoding: 'utf8', maxBuffer: 1 << 20 })).big;
    const sha = await sha256File(big.file);
    console.log(`  made ${(big.size / 1e6).toFixed(0)} MB in ${Date.now() - t0} ms`);
    await page.goto(`${base}/`);
    await throttle(true);
    const sent0 = await uploadBytes();
    const r = await chooseFile(big.file);
    const sentAtGraph = await uploadBytes() - sent0;
    console.log(`  ${(big.size / 1e6).toFixed(0)} MB: graph in ${r.ms} ms from a ${(r.bytes / 1e3).toFixed(1)} KB structure at 100 Mbit/s (the whole file would take ${(big.size * 8 / 100e6).toFixed(1)} s)`);
    assert.ok(r.bytes < 100e3, `structure ${r.bytes} bytes`);
    assert.ok(sentAtGraph < 1e6, `${sentAtGraph} bytes received by the server when the graph is drawn`);
    assert.ok(r.ms < 20000, `graph in ${r.ms} ms`);
    // the weights follow at the link's speed (the bench measures that): cancel them; the
    // structure stays.  The drawing equals the plain upload's (by node ids).
    await page.waitForFunction(() => document.getElementById('upload-card').dataset.weights === 'sending', null, { timeout: 120000 });
    await page.click('#upload-cancel');
    await page.waitForFunction(() => document.getElementById('upload-card').dataset.weights === 'failed');
    assert.match(await page.textContent('#weights-state'), /not sent \(cancelled\)/);
    await throttle(false);
    assert.equal(await uploadRaw(base, big.file), sha);
    // its MatMul + Add pairs are Gemms: drawn as their nodes to count them
    assert.deepEqual(await nodeIds(r.structure, '?group=none&patterns=nodes'), await nodeIds(sha, '?group=none&patterns=nodes'));
    assert.ok((await nodeIds(sha, '?group=none&patterns=nodes')).length >= big.nodes);
  });

  test('cancelled before the drawing is in (the hash waits for it): not sent, and nothing left hanging', async () => {
    // a file of its own: its hash is neither remembered by the page nor held by the server
    const m = JSON.parse(execFileSync('nice', ['-n', '10', '/usr/bin/python3', MAKE, path.join(dir, 'cancel'), '24'], { encoding: 'utf8', maxBuffer: 1 << 20 })).big;
    await page.goto(`${base}/`);
    // the drawing held back 2.5 s, so that the click lands while the hash waits for it
    const svgs = '**/graph.svg*';
    await page.route(svgs, async (route) => { await new Promise((r) => setTimeout(r, 2500)); await route.continue(); });
    try {
      await page.setInputFiles('#file-input', m.file);
      // 'checking' is set once the structure's upload is answered, before its drawing is in
      await page.waitForFunction(() => document.getElementById('upload-card').dataset.weights === 'checking', null, { timeout: 60000, polling: 5 });
      await page.click('#upload-cancel');
      assert.equal(await page.evaluate(() => !!document.querySelector('#canvas svg g.node')), false, 'cancelled before the drawing was in');
      await page.waitForFunction(() => document.getElementById('upload-card').dataset.weights === 'failed', null, { timeout: 20000 });
      assert.match(await page.textContent('#weights-state'), /not sent \(cancelled\)/);
    } finally {
      await page.unroute(svgs);
    }
  });

  test('reopening a model the server holds (uploaded by curl) sends under 1 MB and lands on its id', async () => {
    const sha = await uploadRaw(base, SILERO);
    await page.goto(`${base}/`);
    await throttle(true);
    const sent0 = await uploadBytes();
    const r = await chooseFile(SILERO);
    await page.waitForFunction((id) => document.getElementById('canvas').dataset.model === id, sha, { timeout: 60000 });
    await graphShown(page, null, sha);
    const sent = await uploadBytes() - sent0;
    console.log(`  reopen of silero_vad_v5 (${(fs.statSync(SILERO).size / 1e6).toFixed(1)} MB): ${(sent / 1e3).toFixed(0)} KB sent, graph in ${r.ms} ms`);
    assert.equal(await card('weights'), 'held');
    assert.ok(sent < 1e6, `${sent} bytes sent`);
    assert.equal(sent, +(await card('sentBytes')), 'the structure (gzip\'d) and nothing else');
    assert.ok(sent < r.bytes / 3, `${sent} bytes sent for a structure of ${r.bytes}`);
    await throttle(false);
    assert.deepEqual(errors, []);
  });
});
