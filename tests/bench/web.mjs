// web.mjs — the page on big graphs in headless Chromium: time until a drawing is shown,
// and frame times while zooming (tests/bench/web.sh; figures and ratios, no pass/fail
// on speed).  Goals: a 60 Hz frame (16.7 ms) while zooming; full detail of 10,000 nodes
// shown within 5 s.
import fs from 'node:fs';
import path from 'node:path';
import { graphShown, launchBrowser, startServer, uploadRaw, wheelFrames } from '../e2e/harness.mjs';

const BUILD = process.env.BUILD || 'build';
const WORK = process.env.ONNXVIZ_E2E_WORK;
const CORPUS = process.env.ONNXVIZ_CORPUS;
const models = JSON.parse(fs.readFileSync(path.join(WORK, 'models.json'), 'utf8'));
const FRAME_GOAL = 1000 / 60;
const SHOW_GOAL = 5000;

const server = await startServer(BUILD, WORK);
const ctx = await launchBrowser(WORK, server.base);
const page = ctx.pages()[0] || await ctx.newPage();
const pct = (a, p) => a[Math.min(a.length - 1, Math.floor(p * a.length))];
const cases = [
  ['transformer_12x12 overview', path.join(CORPUS, 'models/real/transformer_12x12.onnx'), ''],
  ['transformer_12x12 full detail', path.join(CORPUS, 'models/real/transformer_12x12.onnx'), 'group=none'],
  ['10,000-node model overview', models.big.file, ''],
  ['10,000-node model full detail', models.big.file, 'group=none'],
];
let status = 0;
try {
  for (const [label, file, key] of cases) {
    const id = await uploadRaw(server.base, file);
    // the first request lays out on the server; measure the page with the layout cached
    await fetch(`${server.base}/models/${id}/graph.svg${key ? `?${key}` : ''}`).then((r) => r.arrayBuffer());
    await page.goto(`${server.base}/#/`);
    const t0 = Date.now();
    await page.goto(`${server.base}/#/models/${id}${key ? `?${key}` : ''}`);
    await graphShown(page, key, id, 120000);
    const shownMs = Date.now() - t0;
    const boxes = await page.$$eval('#canvas svg g.node', (e) => e.length);
    // the minimap (when the start view does not show all of the drawing): reading the
    // boxes, drawing them
    const mini = await page.waitForFunction(() => {
      const m = document.getElementById('minimap');
      if (!m.dataset.readMs) return false; // not read yet
      return m.hidden ? 'none' : m.dataset.drawMs && `${m.dataset.readMs} + ${m.dataset.drawMs} ms`;
    }, null, { timeout: 30000 }).then((h) => h.jsonValue());
    const near = await wheelFrames(page, 60, 40);
    await page.focus('#viewport');
    await page.keyboard.press('0');
    await page.waitForTimeout(800);
    const fit = await wheelFrames(page, 60, 40);
    console.log(`${label}: ${boxes} boxes shown in ${shownMs} ms (${(shownMs / SHOW_GOAL).toFixed(2)} of the 5 s goal); ` +
      `zoom frames at the start view median ${pct(near, 0.5).toFixed(1)} ms, p90 ${pct(near, 0.9).toFixed(1)} ms ` +
      `(${(pct(near, 0.5) / FRAME_GOAL).toFixed(2)} × 16.7 ms); fitted median ${pct(fit, 0.5).toFixed(1)} ms, p90 ${pct(fit, 0.9).toFixed(1)} ms; ` +
      `minimap ${mini}`);
  }
} catch (e) {
  console.log(`web bench failed: ${e.message}`);
  status = 1;
} finally {
  await ctx.close();
  await server.stop();
}
process.exit(status);
