// harness.mjs — the one helper module of the browser tests (every tests/e2e/*.test.mjs
// imports it) and the page benchmark: the real server on a free port, the system's
// Chromium in a fresh profile (playwright-core, no download), and waits on the page
// (graphShown, settled).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';

// Start `BUILD/onnxviz serve --port 0` on a new store under `work`.  Answers {base, log(),
// stop()}: stop() sends SIGTERM and answers the exit code (or 'timeout' after 40 s, then
// the process is killed).
export async function startServer(build, work, extra = []) {
  const store = path.join(work, 'store');
  fs.mkdirSync(store, { recursive: true });
  const proc = spawn(path.join(build, 'onnxviz'),
    ['serve', '--port', '0', '--store', store, '--log-requests=off', '--grace', '3', ...extra],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((res) => proc.on('exit', (code, sig) => res(code ?? sig)));
  // the server never outlives the suite, however the suite ends (a failed hook, a signal)
  process.on('exit', () => { if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL'); });
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.once(sig, () => process.exit(1));
  let log = '';
  const base = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${log}`)), 15000);
    const onData = (d) => {
      log += d;
      if (log.length > 4e6) log = log.slice(-2e6);
      const m = /listening on (http:\/\/[^\s]+)/.exec(log);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    exited.then((code) => { clearTimeout(timer); reject(new Error(`server exited (${code}): ${log}`)); });
  });
  return {
    base,
    log: () => log,
    async stop() {
      proc.kill('SIGTERM');
      // the timer is cleared: left pending, it kept node (and so each test file) alive
      // for 40 s after its last test
      let timer;
      const code = await Promise.race([exited, new Promise((res) => { timer = setTimeout(() => res('timeout'), 40000); })]);
      clearTimeout(timer);
      if (code === 'timeout') proc.kill('SIGKILL');
      return code;
    },
    // kill -9, as a crash would (answers once it has exited)
    async kill() {
      proc.kill('SIGKILL');
      return exited;
    },
  };
}

// Stop the server at the end of a suite: it must exit 0 on SIGTERM and have printed no
// sanitizer report (the build-san/ runs).  `assert` is node:assert/strict.
export async function stopChecked(server, assert) {
  const code = await server.stop();
  const bad = /(AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|runtime error:)[^\n]*/.exec(server.log());
  assert.ok(!bad, `the server reported: ${bad && bad[0]}`);
  assert.equal(code, 0, `the server's exit after SIGTERM: ${code}`);
}

// Chromium headless in a new empty profile under `work`; every request that does not go to
// `base` is refused (the page must work with no other network).  `intercept: false` leaves
// requests alone (the bench's weights: an intercepted request body crawls through
// Playwright, docs/bench.md); the page's CSP keeps it on its own origin anyway.
export async function launchBrowser(work, base, { intercept = true } = {}) {
  const profile = fs.mkdtempSync(path.join(work, 'profile-'));
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.ONNXVIZ_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1440, height: 900 },
    acceptDownloads: true,
  });
  if (intercept) await ctx.route('**/*', (route) => (route.request().url().startsWith(base) ? route.continue() : route.abort()));
  return ctx;
}

// POST /models of a file; answers the model id.
export async function uploadRaw(base, file) {
  const res = await fetch(`${base}/models`, { method: 'POST', body: fs.readFileSync(file), headers: { 'Content-Type': 'application/octet-stream' } });
  if (res.status !== 200 && res.status !== 201) throw new Error(`upload of ${file}: HTTP ${res.status}`);
  return (await res.json()).id;
}

// In the page: dispatch `n` wheel events one frame apart (zooming in and out around a point
// of the graph) and answer the frame times in ms, sorted.
export async function wheelFrames(page, n = 40, delta = 50) {
  return page.evaluate(async ([count, d]) => {
    const vp = document.getElementById('viewport');
    const r = vp.getBoundingClientRect();
    const times = [];
    let last = performance.now();
    for (let i = 0; i < count; i++) {
      vp.dispatchEvent(new WheelEvent('wheel', { deltaY: i % 2 ? d : -d, clientX: r.left + 300, clientY: r.top + 300, bubbles: true, cancelable: true }));
      await new Promise((res) => requestAnimationFrame(res));
      const now = performance.now();
      times.push(now - last);
      last = now;
    }
    return times.sort((a, b) => a - b);
  }, [n, delta]);
}

// The drawing for the given render-option key (and model id) is shown, no layout pending.
export async function graphShown(page, key, id, timeout = 60000) {
  await page.waitForFunction(([k, m]) => {
    const st = document.getElementById('graph-state');
    const c = document.getElementById('canvas');
    return (c.querySelector('svg g.node') || c.dataset.renderer === 'canvas') && st.hidden && (k === null || c.dataset.key === k) &&
      (m === null || c.dataset.model === m);
  }, [key ?? null, id ?? null], { timeout });
}

// Wait until the view stops moving: no animation running (#canvas[data-animating]), no
// frame pending ("moving" lasts 180 ms past the last change), and the transform still for
// 250 ms.
export async function settled(page) {
  await page.evaluate(() => { window.__lastT = null; window.__since = 0; });
  await page.waitForFunction(() => {
    const c = document.getElementById('canvas');
    const t = getComputedStyle(c).transform;
    const now = performance.now();
    if (window.__lastT !== t || c.classList.contains('moving') || c.dataset.animating) {
      window.__lastT = t;
      window.__since = now;
      return false;
    }
    return now - window.__since > 250;
  }, null, { timeout: 15000, polling: 50 });
}

// The page's texts (outside the drawing) whose contrast on their background is under WCAG
// AA's 4.5:1, as "text: ratio" (e2e.test.mjs for the light page, embed.test.mjs for the
// dark one).
export async function lowContrastTexts(page) {
  return page.evaluate(() => {
    const parse = (c) => (c.match(/[\d.]+/g) || []).map(Number);
    const lum = ([r, g, b]) => {
      const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
      return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const bgOf = (e) => {
      for (; e; e = e.parentElement) {
        const c = parse(getComputedStyle(e).backgroundColor);
        if (c.length === 3 || (c.length === 4 && c[3] > 0.9)) return c.slice(0, 3);
      }
      return [255, 255, 255];
    };
    const out = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let t = walker.nextNode(); t; t = walker.nextNode()) {
      const e = t.parentElement;
      if (!t.textContent.trim() || e.closest('#canvas, [hidden], svg')) continue;
      const r = e.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      const fg = parse(getComputedStyle(e).color).slice(0, 3);
      const L1 = lum(fg), L2 = lum(bgOf(e));
      const ratio = (Math.max(L1, L2) + 0.05) / (Math.min(L1, L2) + 0.05);
      if (ratio < 4.5) out.push(`${t.textContent.trim().slice(0, 30)}: ${ratio.toFixed(2)}`);
    }
    return out;
  });
}
