// png.test.mjs — graph.png against a browser (issue 36): the same SVG shown by headless
// Chromium at the PNG's exact size is screenshotted, and the two pictures compared pixel
// by pixel: the mean absolute difference at most 2% and no 32 x 32 tile above 10%, on the
// overview and the full detail of the corpus models.  Text anti-aliasing differs between
// Pango and Skia; shapes, colours and placement must not.  Tall drawings are compared in
// windows at their top, middle and foot (the browser shows the whole image, scrolled).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { launchBrowser, startServer, stopChecked, uploadRaw } from './harness.mjs';

const BUILD = process.env.BUILD || 'build';
const WORK = process.env.ONNXVIZ_E2E_WORK || fs.mkdtempSync('/tmp/onnxviz-e2e-');
const OUT = process.env.ONNXVIZ_E2E_OUT || path.join(BUILD, 'e2e');
const CORPUS = process.env.ONNXVIZ_CORPUS;
const MODELS = ['squeezenet1_1', 'silero_vad_v5', 'transformer_12x12'];
const dir = path.join(WORK, 'png');
fs.mkdirSync(dir, { recursive: true });

// A PNG decoded: {width, height, rgb: Uint8Array (3 bytes a pixel)}.  8-bit RGB or RGBA,
// not interlaced: what cairo and Chromium write (anything else throws).
export function decodePng(buf) {
  assert.equal(buf.subarray(0, 8).toString('hex'), '89504e470d0a1a0a', 'a PNG signature');
  let off = 8, width = 0, height = 0, type = 0;
  const idat = [];
  while (off < buf.length) {
    const len = buf.readUInt32BE(off), kind = buf.toString('latin1', off + 4, off + 8);
    const data = buf.subarray(off + 8, off + 8 + len);
    if (kind === 'IHDR') {
      width = data.readUInt32BE(0); height = data.readUInt32BE(4); type = data[9];
      if (data[8] !== 8 || (type !== 2 && type !== 6) || data[12] !== 0) throw new Error(`PNG kind ${data[8]}/${type}/${data[12]}`);
    } else if (kind === 'IDAT') idat.push(data);
    off += 12 + len;
  }
  const bpp = type === 6 ? 4 : 3, stride = width * bpp;
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const px = new Uint8Array(stride * height), rgb = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    const f = raw[y * (stride + 1)], src = y * (stride + 1) + 1, row = y * stride;
    for (let x = 0; x < stride; x++) {
      const a = x >= bpp ? px[row + x - bpp] : 0, b = y > 0 ? px[row - stride + x] : 0;
      const c = x >= bpp && y > 0 ? px[row - stride + x - bpp] : 0;
      let v = raw[src + x];
      if (f === 1) v += a;
      else if (f === 2) v += b;
      else if (f === 3) v += (a + b) >> 1;
      else if (f === 4) { const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c); v += pa <= pb && pa <= pc ? a : pb <= pc ? b : c; }
      px[row + x] = v & 255;
    }
  }
  for (let i = 0, j = 0; i < px.length; i += bpp, j += 3) {
    const al = bpp === 4 ? px[i + 3] / 255 : 1; // over white, as the page shows it
    for (let k = 0; k < 3; k++) rgb[j + k] = Math.round(px[i + k] * al + 255 * (1 - al));
  }
  return { width, height, rgb };
}

// Rows [y0, y0 + h) of image a against all of b (b is h rows): the mean absolute difference
// and the worst 32 x 32 tile's, as fractions of 255.
function compare(a, y0, b) {
  const w = Math.min(a.width, b.width), h = b.height;
  let sum = 0, worst = 0, worstAt = null;
  for (let ty = 0; ty < h; ty += 32) {
    for (let tx = 0; tx < w; tx += 32) {
      let ts = 0, tn = 0;
      for (let y = ty; y < Math.min(ty + 32, h); y++) {
        for (let x = tx; x < Math.min(tx + 32, w); x++) {
          const ia = ((y0 + y) * a.width + x) * 3, ib = (y * b.width + x) * 3;
          const d = Math.abs(a.rgb[ia] - b.rgb[ib]) + Math.abs(a.rgb[ia + 1] - b.rgb[ib + 1]) + Math.abs(a.rgb[ia + 2] - b.rgb[ib + 2]);
          ts += d; tn += 3;
        }
      }
      sum += ts;
      if (ts / tn / 255 > worst) { worst = ts / tn / 255; worstAt = [tx, y0 + ty]; }
    }
  }
  return { mean: sum / (w * h * 3) / 255, worst, worstAt };
}

describe('graph.png against Chromium', () => {
  let server, ctx, page;
  const ids = {};

  before(async () => {
    server = await startServer(BUILD, dir);
    for (const m of MODELS) ids[m] = await uploadRaw(server.base, path.join(CORPUS, 'models', 'real', `${m}.onnx`));
    ctx = await launchBrowser(dir, server.base);
    page = ctx.pages()[0] || await ctx.newPage();
    page.setDefaultTimeout(120000);
  });

  after(async () => {
    if (ctx) await ctx.close();
    if (server) await stopChecked(server, assert);
  });

  for (const m of MODELS) {
    for (const [view, q] of [['overview', ''], ['full detail', 'group=none']]) {
      test(`${m}, ${view}: the PNG is what Chromium draws of the same SVG`, async () => {
        const base = `${server.base}/models/${ids[m]}/graph`;
        // the overview at a page's width; the full detail at its own size (the budget may
        // scale it down)
        const pq = view === 'overview' ? `${q}${q ? '&' : ''}w=1200` : q;
        const res = await fetch(`${base}.png?${pq}`);
        assert.equal(res.status, 200);
        assert.equal(res.headers.get('content-type'), 'image/png');
        const pngBuf = Buffer.from(await res.arrayBuffer());
        const ours = decodePng(pngBuf);
        const win = Math.min(ours.height, 1600);
        // a page of the server's own (its CORP header keeps the SVG from other origins), the
        // web page's, whose CSP lets images of the server in but no inline style: the
        // image's size by attributes, at the body's 8 px margin
        await page.setViewportSize({ width: ours.width + 16, height: win + 16 });
        await page.goto(`${server.base}/`);
        await page.setContent(`<!doctype html><body><img id="g" src="${base}.svg?${q}" width="${ours.width}" height="${ours.height}"></body>`);
        await page.waitForFunction(() => { const i = document.getElementById('g'); return i.complete && i.naturalWidth > 0; });
        const box = await page.evaluate(() => { const r = document.getElementById('g').getBoundingClientRect(); return [r.x, r.y]; });
        const tops = [...new Set([0, Math.round((ours.height - win) / 2), ours.height - win])];
        for (const y of tops) {
          const shot = await page.screenshot({ type: 'png', fullPage: true, clip: { x: box[0], y: box[1] + y, width: ours.width, height: win } });
          const theirs = decodePng(shot);
          const c = compare(ours, y, theirs);
          const name = `${m}-${view.replace(' ', '-')}-${y}`;
          if (c.mean > 0.02 || c.worst > 0.10) {
            fs.mkdirSync(OUT, { recursive: true });
            fs.writeFileSync(path.join(OUT, `png-${name}-chromium.png`), shot);
            fs.writeFileSync(path.join(OUT, `png-${name}-ours.png`), pngBuf);
          }
          console.log(`  ${name}: ${ours.width} x ${ours.height}, mean ${(c.mean * 100).toFixed(2)}%, worst tile ${(c.worst * 100).toFixed(1)}% at ${c.worstAt}`);
          assert.ok(c.mean <= 0.02, `${name}: mean difference ${(c.mean * 100).toFixed(2)}% > 2%`);
          assert.ok(c.worst <= 0.10, `${name}: the tile at ${c.worstAt} differs by ${(c.worst * 100).toFixed(1)}% > 10%`);
        }
      });
    }
  }
});
