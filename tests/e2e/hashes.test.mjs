// hashes.test.mjs — the page remembers the SHA-256 of files it hashed (web/upload.js,
// localStorage 'onnxviz.hashes'): reopening a model asks the server at once without
// hashing it again, and a remembered hash that is wrong (the file changed without its name,
// size or time changing) costs one refused upload (422 checksum_mismatch at the last
// part), after which the page forgets it, hashes the file and lands on the right model.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { launchBrowser, startServer, stopChecked } from './harness.mjs';

const BUILD = process.env.BUILD || 'build';
const WORK = process.env.ONNXVIZ_E2E_WORK || fs.mkdtempSync('/tmp/onnxviz-e2e-');
const MAKE = path.join(path.dirname(new URL(import.meta.url).pathname), 'make_structure_models.py');
const dir = path.join(WORK, 'hashes');
fs.mkdirSync(dir, { recursive: true });

describe('remembered hashes of chosen files', () => {
  let server, ctx, page, model, sha, parts;
  const patches = [];
  const errors = [];

  before(async () => {
    server = await startServer(BUILD, dir, ['--upload-part-size', '1M']);
    model = JSON.parse(execFileSync('/usr/bin/python3', [MAKE, dir, '6'], { encoding: 'utf8', maxBuffer: 1 << 20 })).big;
    sha = crypto.createHash('sha256').update(fs.readFileSync(model.file)).digest('hex');
    parts = Math.ceil(fs.statSync(model.file).size / (1 << 20));
    ctx = await launchBrowser(dir, server.base);
    page = ctx.pages()[0] || await ctx.newPage();
    page.setDefaultTimeout(60000);
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    page.on('request', (r) => { if (r.method() === 'PATCH') patches.push(r.url()); });
    await page.goto(`${server.base}/`);
  });

  after(async () => {
    if (ctx) await ctx.close();
    if (server) await stopChecked(server, assert);
  });

  const remembered = () => page.evaluate(() => Object.values(JSON.parse(localStorage.getItem('onnxviz.hashes') || '{}')).map((v) => v[0]));
  // choose the file; wait until the page shows the whole model and the card says how
  async function choose() {
    await page.evaluate(() => { delete document.getElementById('canvas').dataset.model; });
    const before = patches.length;
    await page.setInputFiles('#file-input', model.file);
    await page.waitForFunction((id) => document.getElementById('canvas').dataset.model === id, sha, { timeout: 60000 });
    await page.waitForFunction(() => ['held', 'sent', 'failed'].includes(document.getElementById('upload-card').dataset.weights), null, { timeout: 60000 });
    return {
      patches: patches.length - before,
      step: await page.$eval('#upload-card', (c) => c.dataset.weights),
      hashRemembered: await page.$eval('#upload-card', (c) => c.dataset.hashRemembered || null),
    };
  }

  test('the first choice hashes and sends; the second uses the remembered hash and sends nothing', async () => {
    const first = await choose();
    assert.equal(first.step, 'sent');
    assert.ok(first.patches >= parts, `the weights went up in ${parts} parts: ${first.patches} PATCHes`);
    assert.equal(first.hashRemembered, null, 'nothing was remembered before');
    assert.deepEqual(await remembered(), [sha], 'the file\'s SHA-256 is remembered');
    const again = await choose();
    assert.equal(again.step, 'held');
    assert.equal(again.patches, 0, 'no weights the second time');
    assert.equal(again.hashRemembered, '1', 'the file was not hashed again');
    assert.deepEqual(errors, []);
  });

  test('a wrong remembered hash: one refused upload, then the file is hashed and the right model shown', async () => {
    const wrong = crypto.createHash('sha256').update('not this file').digest('hex');
    await page.evaluate((w) => {
      const o = JSON.parse(localStorage.getItem('onnxviz.hashes'));
      for (const k of Object.keys(o)) o[k][0] = w;
      localStorage.setItem('onnxviz.hashes', JSON.stringify(o));
    }, wrong);
    const r = await choose();
    assert.equal(r.step, 'held', 'after hashing, the server holds the file');
    assert.ok(r.patches >= parts, `the upload under the wrong hash went to its last part (${r.patches} PATCHes of ${parts})`);
    assert.deepEqual(await remembered(), [sha], 'the wrong hash is replaced by the file\'s');
    const res = await fetch(`${server.base}/models/${wrong}`, { method: 'HEAD' });
    assert.equal(res.status, 404, 'nothing is stored under the wrong hash');
    assert.deepEqual(errors, []);
  });
});

// A value of the server's /metrics (0 when absent).
async function metricOf(server, name) {
  const m = new RegExp(`^${name.replace(/[{}"]/g, '\\$&')} (\\d+)`, 'm').exec(await (await fetch(`${server.base}/metrics`)).text());
  return m ? +m[1] : 0;
}

// A browser on server's page at 50 Mbit/s (CDP emulation) that records into the arrays
// given: posts, the Upload-Metadata of each POST /uploads; deletes, [url, status] of each
// DELETE; errors, the page's.  In the page: window.__patches, when each PATCH was sent,
// and window.__hashed, when the hash was done (the card's data-hash-ms), on one clock.
async function watchedPage(dir, server, { posts, deletes, errors }) {
  const ctx = await launchBrowser(dir, server.base, { intercept: false }); // an intercepted body crawls
  const page = ctx.pages()[0] || await ctx.newPage();
  page.setDefaultTimeout(60000);
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('request', (r) => { if (r.method() === 'POST' && r.url().endsWith('/uploads')) posts.push(r.headers()['upload-metadata'] || ''); });
  page.on('response', (r) => { if (r.request().method() === 'DELETE') deletes.push([r.url(), r.status()]); });
  await page.addInitScript(() => {
    window.__patches = [];
    const open = XMLHttpRequest.prototype.open;
    XMLHttpRequest.prototype.open = function (method, ...rest) { this.__method = method; return open.call(this, method, ...rest); };
    const send = XMLHttpRequest.prototype.send;
    XMLHttpRequest.prototype.send = function (body) {
      if (this.__method === 'PATCH') window.__patches.push(performance.now());
      return send.call(this, body);
    };
    addEventListener('DOMContentLoaded', () => {
      const card = document.getElementById('upload-card');
      new MutationObserver(() => { if (card.dataset.hashMs && !window.__hashed) window.__hashed = performance.now(); })
        .observe(card, { attributes: true, attributeFilter: ['data-hash-ms'] });
    });
  });
  const cdp = await ctx.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 20, downloadThroughput: 50e6 / 8, uploadThroughput: 50e6 / 8 });
  await page.goto(`${server.base}/`);
  return { ctx, page };
}

// Choose `files` in watchedPage's page, fresh: reloaded (then the hash forgotten: the page
// before may remember it until it goes), no hash remembered, the records emptied.
async function chooseFresh(page, files, { posts, deletes }) {
  await page.reload();
  await page.evaluate(() => localStorage.removeItem('onnxviz.hashes'));
  posts.length = 0;
  deletes.length = 0;
  await page.setInputFiles('#file-input', files);
}

// Wait until the card says how the weights ended; answers the page's record: the PATCHes'
// and the hash's times, the card's step and the model shown.
async function weightsEnded(page) {
  await page.waitForFunction(() => ['held', 'sent', 'failed'].includes(document.getElementById('upload-card').dataset.weights), null, { timeout: 120000 });
  return page.evaluate(() => ({ patches: [...window.__patches], hashed: window.__hashed, step: document.getElementById('upload-card').dataset.weights, model: document.getElementById('canvas').dataset.model }));
}

// A held stop (the server had the model `id` already): parts went before the hash (what:
// "hash was", "hashes were") was done, the page shows the model, no PATCH goes in the
// second after, and the upload's DELETE has answered 204 (or 20 s passed).
async function stoppedHeld(page, r, id, deletes, what) {
  assert.equal(r.step, 'held');
  assert.ok(r.patches.length > 0 && r.patches[0] < r.hashed, `parts went before the ${what} done (${r.patches.length} PATCHes)`);
  await page.waitForFunction((x) => document.getElementById('canvas').dataset.model === x, id);
  const n = r.patches.length;
  await new Promise((res) => setTimeout(res, 1000));
  assert.equal(await page.evaluate(() => window.__patches.length), n, 'no PATCH after the page stopped');
  for (const end = Date.now() + 20000; !deletes.some(([, st]) => st === 204) && Date.now() < end;) await new Promise((res) => setTimeout(res, 50));
}

// The weights start while the file is hashed (issue 37, decision 97): a file whose hash
// is not remembered goes up at once as an upload without its id (POST /uploads with no
// sha256), the last part naming it; when the hash names a model the server has, the page
// stops: its upload is deleted and nothing more is sent.  At 50 Mbit/s (CDP emulation)
// the 64 MB model's weights take ~11 s, its hash about a second after the drawing.
describe('the weights go while the file is hashed; a stored file stops early', () => {
  const sdir = path.join(WORK, 'hashes-stream');
  fs.mkdirSync(sdir, { recursive: true });
  let server, ctx, page, model, sha;
  const errors = [];
  const posts = []; // Upload-Metadata of each POST /uploads
  const deletes = []; // [url, status] of each DELETE /uploads/{uid}

  before(async () => {
    server = await startServer(BUILD, sdir, ['--upload-part-size', '1M']);
    model = JSON.parse(execFileSync('nice', ['-n', '10', '/usr/bin/python3', MAKE, sdir, '64'], { encoding: 'utf8', maxBuffer: 1 << 20 })).big;
    sha = crypto.createHash('sha256').update(fs.readFileSync(model.file)).digest('hex');
    ({ ctx, page } = await watchedPage(sdir, server, { posts, deletes, errors }));
  });

  after(async () => {
    if (ctx) await ctx.close();
    if (server) await stopChecked(server, assert);
  });

  const metric = (name) => metricOf(server, name);
  // choose the file in a fresh page; choose() also waits until the card says how the
  // weights ended, and answers the page's record
  const start = () => chooseFresh(page, model.file, { posts, deletes });
  async function choose() {
    await start();
    return weightsEnded(page);
  }

  test('parts are PATCHed before the hash is done; a reload goes on from where the upload stood; the last part names the file', async () => {
    // the first choice: cut by a reload once two parts are acknowledged
    await start();
    const until = Date.now() + 60000;
    while (await metric('onnxviz_resumable_bytes_total') < 2 * (1 << 20) && Date.now() < until) await new Promise((res) => setTimeout(res, 50));
    assert.equal(posts.length, 1);
    assert.doesNotMatch(posts[0], /sha256/, 'the upload began without its id');
    const r = await choose(); // the page reloaded: nothing remembered but the upload's URL
    const total = await metric('onnxviz_resumable_bytes_total');
    assert.equal(r.step, 'sent');
    assert.deepEqual(posts, [], 'the same upload went on (no new POST /uploads)');
    assert.ok(total <= model.size + (1 << 20), `${total} bytes acknowledged for ${model.size}: at most one part again`);
    assert.ok(Number.isFinite(r.hashed), 'the page hashed the file');
    const before = r.patches.filter((t) => t < r.hashed).length;
    assert.ok(before >= 4, `${before} PATCHes went before the hash was done (${r.patches.length} in all)`);
    await page.waitForFunction((id) => document.getElementById('canvas').dataset.model === id, sha);
    const stored = Buffer.from(await (await fetch(`${server.base}/models/${sha}/model.onnx`)).arrayBuffer());
    assert.equal(crypto.createHash('sha256').update(stored).digest('hex'), sha, 'the model is the file');
    assert.equal(await metric('onnxviz_resumable_known'), 0, 'no upload left in progress');
    assert.deepEqual(errors, []);
  });

  test('a file the server holds: parts start, the hash stops them, the upload is deleted and nothing more is sent', async () => {
    const bytes0 = await metric('onnxviz_resumable_bytes_total');
    const aborted0 = await metric('onnxviz_resumable_uploads_total{event="aborted"}');
    const r = await choose();
    // nothing more: no PATCH after the hash answered, none in the second after
    await stoppedHeld(page, r, sha, deletes, 'hash was');
    assert.ok(r.patches.every((t) => t < r.hashed + 1000), 'no PATCH long after the hash');
    // once: the pieces on the wire were left to end, so the server holds the upload no
    // longer (cut, they held it busy until it saw them go: a 409 upload_busy first)
    assert.deepEqual(deletes.map(([, st]) => st), [204], `the upload was deleted at the first ask: ${JSON.stringify(deletes)}`);
    assert.match(deletes[0][0], /\/uploads\/[0-9a-f]{32}$/);
    assert.equal(await metric('onnxviz_resumable_uploads_total{event="aborted"}'), aborted0 + 1);
    assert.equal(await metric('onnxviz_resumable_known'), 0, 'nothing left in progress (the client\'s quota is whole)');
    const sent = await metric('onnxviz_resumable_bytes_total') - bytes0;
    assert.ok(sent < model.size / 2, `${sent} of ${model.size} bytes acknowledged before the stop`);
    assert.deepEqual(await page.evaluate(() => JSON.parse(localStorage.getItem('onnxviz.uploads') || '{}')), {}, 'no upload kept to resume');
    assert.deepEqual(errors, []);
  });
});

// A bundle (a model file and its data file) whose hashes are not remembered: the data
// file goes up unnamed while the files are hashed (its last part naming it), the manifest
// once every hash is known; when the bundle's id names a model the server has, the page
// stops and deletes the data file's upload (decision 97).
describe('a bundle\'s data file goes while the files are hashed; a stored bundle stops early', () => {
  const bdir = path.join(WORK, 'hashes-bundle');
  fs.mkdirSync(bdir, { recursive: true });
  let server, ctx, page, mfile, dfile, id;
  const errors = [];
  const posts = []; // Upload-Metadata of each POST /uploads
  const deletes = []; // [url, status] of each DELETE /uploads/{uid}

  before(async () => {
    server = await startServer(BUILD, bdir, ['--upload-part-size', '1M']);
    const big = JSON.parse(execFileSync('nice', ['-n', '10', '/usr/bin/python3', MAKE, bdir, '48'], { encoding: 'utf8', maxBuffer: 1 << 20 })).big;
    const files = path.join(bdir, 'files');
    fs.mkdirSync(files, { recursive: true });
    mfile = path.join(files, 'model.onnx');
    dfile = path.join(files, 'weights.bin');
    execFileSync('/usr/bin/python3', ['-c', `import onnx, sys
m = onnx.load(sys.argv[1])
onnx.save_model(m, sys.argv[2], save_as_external_data=True, all_tensors_to_one_file=True, location='weights.bin', size_threshold=1024)`, big.file, mfile]);
    const sha = (p) => crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex');
    const manifest = `onnxviz-bundle/1\nmodel ${sha(mfile)} ${fs.statSync(mfile).size}\nfile ${sha(dfile)} ${fs.statSync(dfile).size} weights.bin\n`;
    id = crypto.createHash('sha256').update(manifest).digest('hex');
    ({ ctx, page } = await watchedPage(bdir, server, { posts, deletes, errors }));
  });

  after(async () => {
    if (ctx) await ctx.close();
    if (server) await stopChecked(server, assert);
  });

  const metric = (name) => metricOf(server, name);
  async function choose() {
    await chooseFresh(page, [mfile, dfile], { posts, deletes });
    return weightsEnded(page);
  }
  const dataPosts = () => posts.map((m) => Object.fromEntries(m.split(',').map((kv) => kv.trim().split(' ')).map(([k, v]) => [k, Buffer.from(v || '', 'base64').toString()]))).filter((m) => m.kind === 'data');

  test('the data file is PATCHed before the hashes are done, unnamed; the bundle ends as the manifest\'s id', async () => {
    const r = await choose();
    assert.equal(r.step, 'sent');
    const dp = dataPosts();
    assert.equal(dp.length, 1, `one upload of the data file: ${JSON.stringify(posts)}`);
    assert.equal(dp[0].sha256, undefined, 'the data file\'s upload began without its hash');
    assert.ok(Number.isFinite(r.hashed), 'the page hashed the files');
    const before = r.patches.filter((t) => t < r.hashed).length;
    assert.ok(before >= 2, `${before} PATCHes went before the hashes were done (${r.patches.length} in all)`);
    await page.waitForFunction((x) => document.getElementById('canvas').dataset.model === x, id);
    assert.equal((await fetch(`${server.base}/models/${id}`)).status, 200, 'the server holds the bundle');
    assert.equal(await metric('onnxviz_resumable_known'), 0, 'no upload left in progress');
    assert.deepEqual(errors, []);
  });

  test('a bundle the server holds: the data file starts, the hashes stop it, its upload is deleted', async () => {
    const bytes0 = await metric('onnxviz_resumable_bytes_total');
    const r = await choose();
    await stoppedHeld(page, r, id, deletes, 'hashes were');
    assert.ok(deletes.length === 1 && deletes[0][1] === 204, `the upload was deleted: ${JSON.stringify(deletes)}`);
    assert.equal(await metric('onnxviz_resumable_known'), 0, 'nothing left in progress');
    assert.ok(await metric('onnxviz_resumable_bytes_total') - bytes0 < fs.statSync(dfile).size, 'not the whole data file again');
    assert.deepEqual(await page.evaluate(() => JSON.parse(localStorage.getItem('onnxviz.uploads') || '{}')), {}, 'no upload kept to resume');
    assert.deepEqual(errors, []);
  });
});
