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
