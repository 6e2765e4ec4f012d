// cut.test.mjs — the server's cut (parser/cut.c, through build/tools/cutdump) makes the
// same structure as the page's (web/structure.js structureOf, here in node) from the same
// file, byte for byte: a structure's link to its whole model is proven with the server's
// cut (service/links.c, docs/decisions.md 82), so the two must never drift apart.  Every
// corpus model, the structure suite's file with a payload in every place the walk looks,
// and truncated and renamed files; no browser.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { MIN_SAVING, THRESHOLD, structureOf } from '../../web/structure.js';

const BUILD = process.env.BUILD || 'build';
const CORPUS = process.env.ONNXVIZ_CORPUS || '../shared/corpus';
const WORK = process.env.ONNXVIZ_E2E_WORK || fs.mkdtempSync('/tmp/onnxviz-e2e-');
const TOOL = path.join(BUILD, 'tools/cutdump');
const MAKE = path.join(path.dirname(new URL(import.meta.url).pathname), 'make_structure_models.py');
const dir = path.join(WORK, 'cut');
fs.mkdirSync(dir, { recursive: true });

const onnxFiles = (root) => fs.readdirSync(root, { recursive: true })
  .filter((f) => f.endsWith('.onnx')).map((f) => path.join(root, f)).sort();
const sha = (b) => crypto.createHash('sha256').update(b).digest('hex');

// Both cuts of file under name: {js: {bytes|null}, c: {ok, cuts, bytes (Buffer)|null}};
// minSaving: the page's, or another (0: every file with a payload to cut is cut).
async function both(file, name, minSaving = MIN_SAVING) {
  const blob = new File([await fs.openAsBlob(file)], name);
  const js = await structureOf(blob, { name, minSaving });
  const out = path.join(dir, 'out.bin');
  fs.rmSync(out, { force: true });
  let res;
  try {
    res = JSON.parse(execFileSync(TOOL, [file, name, out, String(minSaving)], { encoding: 'utf8' }));
  } catch (e) {
    if (e.status !== 1) throw e;
    res = JSON.parse(e.stdout);
  }
  res.bytes = res.ok && res.cuts ? fs.readFileSync(out) : null;
  return { js, c: res };
}

function same(file, name, { js, c }) {
  const what = `${path.basename(file)} as '${name}'`;
  if (!js.bytes) {
    assert.ok(!c.ok || !c.cuts, `${what}: the page sends it as it is (${js.reason}); the server cut it`);
    return false;
  }
  assert.ok(c.ok && c.cuts, `${what}: the page cut it, the server did not (${JSON.stringify(c)})`);
  assert.equal(c.cut, js.cut, `${what}: payload bytes cut`);
  assert.equal(c.tensors, js.ranges.length, `${what}: tensors cut`);
  assert.equal(sha(c.bytes), sha(js.bytes), `${what}: the structures differ`);
  assert.ok(Buffer.from(js.bytes).equals(c.bytes));
  return true;
}

describe('the server cuts a model as the page does (parser/cut.c = web/structure.js)', () => {
  test('the constants are the page\'s', () => {
    const h = fs.readFileSync('parser/oxp.h', 'utf8');
    assert.match(h, new RegExp(`#define OXP_CUT_THRESHOLD ${THRESHOLD}\\b`));
    assert.equal(MIN_SAVING, 64 << 10);
    assert.match(h, /#define OXP_CUT_MIN_SAVING \(64u << 10\)/);
  });

  test('every corpus model: the same structure, byte for byte, or none from both', async () => {
    const files = onnxFiles(CORPUS);
    assert.ok(files.length >= 100, `the corpus (${CORPUS}) has ${files.length} models`);
    let cut = 0, any = 0;
    for (const f of files) {
      if (same(f, path.basename(f), await both(f, path.basename(f)))) cut++;
      // and with no least saving, so that every payload the walk can cut is compared
      if (same(f, path.basename(f), await both(f, path.basename(f), 0))) any++;
    }
    assert.ok(cut >= 3, `only ${cut} corpus models have a structure`);
    assert.ok(any >= 5, `only ${any} corpus models have a payload to cut`);
    console.log(`# ${files.length} corpus models: ${cut} cut the same as the page sends them, ${any} with no least saving`);
  });

  test('every payload kind and place, and names the server does not take as they are', async () => {
    const models = JSON.parse(execFileSync('/usr/bin/python3', [MAKE, dir, '0'], { encoding: 'utf8' }));
    const kinds = models.kinds.file;
    // the kinds file saves less than MIN_SAVING: cut with none
    assert.ok(same(kinds, 'kinds.onnx', await both(kinds, 'kinds.onnx', 0)), 'kinds.onnx is cut');
    const real = onnxFiles(CORPUS).filter((f) => fs.statSync(f).size > 1 << 20).slice(0, 3);
    for (const f of real) {
      for (const name of ['C:model.onnx', '..', 'a\u0001b.onnx', 'x'.repeat(256), 'ünïcode ✓.onnx', 'model.onnx']) {
        same(f, name, await both(f, name));
        same(f, name, await both(f, name, 0));
      }
    }
  });

  test('truncated and corrupted files: both refuse or both cut the same', async () => {
    const f = onnxFiles(CORPUS).filter((x) => fs.statSync(x).size > 1 << 20)[0];
    const whole = fs.readFileSync(f);
    const t = path.join(dir, 'bad.onnx');
    for (const n of [1, 7, 100, 4096, whole.length >> 1, whole.length - 1]) {
      fs.writeFileSync(t, whole.subarray(0, n));
      same(t, 'bad.onnx', await both(t, 'bad.onnx', 0));
    }
    for (const at of [0, 1, 2, 9, 33, 200]) {
      const b = Buffer.from(whole);
      b[at] ^= 0xff;
      fs.writeFileSync(t, b);
      same(t, 'bad.onnx', await both(t, 'bad.onnx', 0));
    }
  });
});
