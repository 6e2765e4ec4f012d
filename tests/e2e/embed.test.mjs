// embed.test.mjs — the framable view and the dark theme in Chromium (issue 36 items 3 and
// 6; docs/embed.md): host pages on other origins (127.0.0.2, two ports: one listed in
// --frame-ancestors, one not) frame GET /embed/{id}:
//   - the listed host's frame loads and says ready and its size; the unlisted host's is
//     blocked by the browser (frame-ancestors), and so is the page itself (/) in the
//     listed host: only /embed/{id} is framable;
//   - a postMessage round trip: select a node, `selected` comes back and the node's panel
//     opens; set the query (LR) and the theme (dark: the drawing comes in theme=dark);
//   - a message from a frame of the unlisted origin inside the listed host changes nothing
//     and gets no answer;
//   - the page's theme switch: dark page, dark drawing, kept after a reload, every text of
//     the page (node panel open) at 4.5:1 on its background.
//   - reads locked (--auth-reads): an embed signed by POST /sign, framed by a host on another
//     origin, draws whole (its capability: decision 92); a signed /oembed answers rich.
// Screenshots: the embed in its host (light and dark), the dark page, the signed locked embed.
// Run by tests/e2e/run.sh.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { graphShown, launchBrowser, lowContrastTexts, startServer, stopChecked } from './harness.mjs';

const BUILD = process.env.BUILD || 'build';
const CORPUS = process.env.ONNXVIZ_CORPUS || '../shared/corpus';
const OUT = process.env.ONNXVIZ_E2E_OUT || `${BUILD}/e2e`;
const WORK = process.env.ONNXVIZ_E2E_WORK || fs.mkdtempSync('/tmp/onnxviz-e2e-');
const SQUEEZENET = path.join(CORPUS, 'models/real/squeezenet1_1.onnx');
const HOST_IP = '127.0.0.2';

let server, base, id;
const hosts = []; // node http servers of the host pages
const shots = [];

// Closes the host page servers started so far (each describe's after: its own).
async function closeHosts() {
  for (const h of hosts.splice(0)) {
    h.closeAllConnections();
    await new Promise((res) => h.close(res));
  }
}

// A host page server on HOST_IP: `pages` maps a path to its HTML (a function of nothing,
// read at request time).  Answers its origin.
async function hostServer(pages) {
  const srv = http.createServer((req, res) => {
    const page = pages[req.url.split('?')[0]];
    if (!page) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(page());
  });
  await new Promise((res) => srv.listen(0, HOST_IP, res));
  hosts.push(srv);
  return `http://${HOST_IP}:${srv.address().port}`;
}

// The host's page: the view in a frame named "view" (src), and what it hears from the view
// in window.msgs (only messages from the view's origin).
const hostPage = (src, extra = '') => () => `<!doctype html><html><head><title>host</title></head>
<body style="margin:0;font:14px sans-serif">
<h1 style="font-size:16px;margin:8px">A registry's model page</h1>
<iframe name="view" id="view" src="${src}" width="1000" height="640" style="border:1px solid #888"></iframe>
${extra}
<script>
window.msgs = [];
window.addEventListener('message', (e) => { if (e.origin === ${JSON.stringify(base)}) window.msgs.push(e.data); });
</script></body></html>`;

let listed, unlisted;

async function browser() {
  const c = await launchBrowser(WORK, base, { intercept: false });
  // only this server and the two hosts: the rest of the network is refused
  await c.route('**/*', (r) => {
    const u = r.request().url();
    return u.startsWith(base) || u.startsWith(listed) || u.startsWith(unlisted) ? r.continue() : r.abort();
  });
  const p = c.pages()[0] || await c.newPage();
  p.setDefaultTimeout(30000);
  return { c, p };
}

async function shot(page, name) {
  const file = path.resolve(OUT, `embed-${name}.png`);
  await page.screenshot({ path: file });
  shots.push(file);
}

// The view's frame (the one at /embed/...), or null.
const viewFrame = (p) => p.frames().find((f) => f.url().startsWith(`${base}/embed/`)) || null;

async function waitMsg(p, pred, timeout = 30000) {
  await p.waitForFunction(`window.msgs.some((m) => (${pred})(m))`, null, { timeout });
}

describe('the framable view and the dark theme', () => {
  before(async () => {
    fs.mkdirSync(OUT, { recursive: true });
    // the host servers first: the listed one's origin goes into --frame-ancestors
    const listedPages = {}, unlistedPages = {};
    listed = await hostServer(listedPages);
    unlisted = await hostServer(unlistedPages);
    server = await startServer(BUILD, fs.mkdtempSync(path.join(WORK, 'embed-')),
      ['--frame-ancestors', `${listed}, https://registry.example.com`]);
    base = server.base;
    const res = await fetch(`${base}/models?name=squeezenet1_1.onnx`, { method: 'POST', body: fs.readFileSync(SQUEEZENET) });
    assert.ok(res.ok, `upload: ${res.status}`);
    id = (await res.json()).id;
    // a frame of the unlisted origin inside the listed host: it speaks to the view
    listedPages['/host.html'] = hostPage(`${base}/embed/${id}`,
      `<iframe id="evil" src="${unlisted}/evil.html" width="300" height="80"></iframe>`);
    listedPages['/page.html'] = hostPage(`${base}/#/models/${id}`);
    unlistedPages['/host.html'] = hostPage(`${base}/embed/${id}`);
    unlistedPages['/evil.html'] = () => `<!doctype html><body><script>
window.addEventListener('message', (e) => {
  if (e.data === 'go') parent.frames.view.postMessage({ type: 'select', node: 'n20' }, '*');
  if (e.data === 'go-theme') parent.frames.view.postMessage({ type: 'theme', theme: 'dark' }, '*');
});
</script>evil</body>`;
  });

  after(async () => {
    console.log(`screenshots:\n  ${shots.join('\n  ')}`);
    await closeHosts();
    if (server) await stopChecked(server, assert);
  });

  test('the embed answers frame-ancestors with the listed origins; every other answer none', async () => {
    const e = await fetch(`${base}/embed/${id}`);
    assert.equal(e.status, 200);
    const csp = e.headers.get('content-security-policy');
    assert.match(csp, new RegExp(`frame-ancestors ${listed.replace(/\./g, '\\.')} https://registry\\.example\\.com;`));
    assert.equal(e.headers.get('x-frame-options'), null);
    const html = await e.text();
    assert.match(html, new RegExp(`data-embed-origins="${listed.replace(/\./g, '\\.')} https://registry\\.example\\.com"`));
    for (const u of ['/', `/models/${id}`, `/models/${id}/graph.svg`, `/m/${id}`, '/app.js']) {
      const r = await fetch(`${base}${u}`);
      assert.match(r.headers.get('content-security-policy') || '', /frame-ancestors 'none'/, `${u} stays unframable`);
    }
    // bad input: a clear JSON error each, the server up
    for (const [u, status, code] of [[`/embed/${id}?theme=%3Cscript%3E`, 400, 'bad_option'], [`/embed/${'0'.repeat(64)}`, 404, 'not_found'],
      [`/embed/${id}?node=a%22b`, 400, 'bad_option']]) {
      const r = await fetch(`${base}${u}`);
      assert.equal(r.status, status, u);
      assert.equal((await r.json()).error.code, code, u);
    }
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
  });

  test('a listed host frames the view; an unlisted one and the page itself are blocked', async () => {
    const { c, p } = await browser();
    try {
      await p.goto(`${listed}/host.html`);
      await waitMsg(p, "(m) => m.source === 'onnxviz' && m.type === 'ready'");
      const msgs = await p.evaluate(() => window.msgs);
      const size = msgs.find((m) => m.type === 'size');
      assert.ok(size && size.width > 100 && size.height > 100, `size: ${JSON.stringify(size)}`);
      assert.equal(msgs.find((m) => m.type === 'ready').id, id);
      const f = viewFrame(p);
      assert.ok(f, 'the view frame');
      // the drawing, no top bar, no home
      assert.ok(await f.evaluate(() => !!document.querySelector('#canvas svg g.node')));
      assert.equal(await f.evaluate(() => getComputedStyle(document.querySelector('.topbar')).display), 'none');
      assert.equal(await f.evaluate(() => document.documentElement.classList.contains('embed')), true);
      await shot(p, 'host-light');

      // the unlisted host: the browser refuses the frame (no ready, no drawing in it)
      const p2 = await c.newPage();
      await p2.goto(`${unlisted}/host.html`);
      await p2.waitForTimeout(2500);
      assert.deepEqual(await p2.evaluate(() => window.msgs), []);
      const f2 = viewFrame(p2);
      const drawn2 = f2 ? await f2.evaluate(() => !!document.querySelector('#canvas svg')).catch(() => false) : false;
      assert.equal(drawn2, false, 'the unlisted host shows no view');
      await p2.close();

      // the page (/) in the listed host: frame-ancestors 'none'
      const p3 = await c.newPage();
      await p3.goto(`${listed}/page.html`);
      await p3.waitForTimeout(2500);
      const f3 = p3.frames().find((fr) => fr.url().startsWith(base));
      const drawn3 = f3 ? await f3.evaluate(() => !!document.querySelector('#canvas svg')).catch(() => false) : false;
      assert.equal(drawn3, false, 'the page itself stays unframable');
      await p3.close();
    } finally { await c.close(); }
  });

  test('postMessage: an unlisted origin changes nothing; the host selects, sets the query and the theme', async () => {
    const { c, p } = await browser();
    try {
      await p.goto(`${listed}/host.html`);
      await waitMsg(p, "(m) => m.type === 'ready'");
      const f = viewFrame(p);
      const node = await f.evaluate(() => document.querySelectorAll('#canvas svg g.node[data-node]')[2].getAttribute('data-node'));
      const before = await f.evaluate(() => location.hash);

      // the unlisted origin's frame asks for a selection and a theme: ignored
      const evil = p.frames().find((fr) => fr.url().startsWith(unlisted));
      assert.ok(evil, 'the unlisted frame');
      await evil.evaluate(() => { window.postMessage('go', '*'); window.postMessage('go-theme', '*'); });
      await p.waitForTimeout(1500);
      assert.equal(await f.evaluate(() => location.hash), before, 'the route did not change');
      assert.equal(await f.evaluate(() => document.getElementById('side-panel').hidden), true);
      assert.equal(await f.evaluate(() => document.documentElement.dataset.theme), 'light');
      assert.equal((await p.evaluate(() => window.msgs)).filter((m) => m.type === 'selected' && m.node).length, 0);

      // the host: select → selected, and the node's panel
      await p.evaluate(([n, o]) => document.getElementById('view').contentWindow.postMessage({ type: 'select', node: n }, o), [node, base]);
      await waitMsg(p, `(m) => m.type === 'selected' && m.node === ${JSON.stringify(node)}`);
      await f.waitForFunction(() => !document.getElementById('side-panel').hidden);
      assert.match(await f.evaluate(() => location.hash), new RegExp(`node=${node}`));
      assert.ok(await f.evaluate((n) => document.querySelector(`#canvas svg g.node[data-node="${n}"]`).classList.contains('selected'), node));

      // a bad message from the host: an error back, nothing changes
      await p.evaluate((o) => document.getElementById('view').contentWindow.postMessage({ type: 'select', node: '"><script>' }, o), base);
      await waitMsg(p, "(m) => m.type === 'error'");

      // the query: left to right, redrawn with it
      await p.evaluate((o) => document.getElementById('view').contentWindow.postMessage({ type: 'query', query: 'rankdir=LR' }, o), base);
      await graphShown(f, null, id);
      await f.waitForFunction(() => (document.getElementById('canvas').dataset.key || '').includes('rankdir=LR'));

      // the theme: the page dark and the drawing in the dark palette
      await p.evaluate((o) => document.getElementById('view').contentWindow.postMessage({ type: 'theme', theme: 'dark' }, o), base);
      await f.waitForFunction(() => document.querySelector('#canvas svg[data-theme="dark"]') && document.getElementById('graph-state').hidden);
      assert.equal(await f.evaluate(() => document.documentElement.dataset.theme), 'dark');
      await p.waitForTimeout(300);
      await shot(p, 'host-dark');
    } finally { await c.close(); }
  });

  test('the page: the theme switch draws in the dark palette and is kept', async () => {
    const { c, p } = await browser();
    try {
      await p.goto(`${base}/#/models/${id}`);
      await graphShown(p, null, id);
      assert.equal(await p.evaluate(() => document.documentElement.dataset.theme), 'light');
      await p.selectOption('#theme-select', 'dark');
      await p.waitForFunction(() => document.querySelector('#canvas svg[data-theme="dark"]') && document.getElementById('graph-state').hidden);
      assert.equal(await p.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(13, 17, 23)');
      // kept after a reload; the node panel open: the page's texts at 4.5:1 in the dark
      const node = await p.evaluate(() => document.querySelectorAll('#canvas svg g.node[data-node]')[0].getAttribute('data-node'));
      await p.goto(`${base}/#/models/${id}?node=${node}`);
      await p.reload();
      await p.waitForFunction(() => document.querySelector('#canvas svg[data-theme="dark"]'));
      await p.waitForSelector('#side-body .op-badge');
      await p.waitForTimeout(300);
      assert.deepEqual(await lowContrastTexts(p), []);
      await shot(p, 'page-dark');
      // the search popup in the dark: the page's text colour, at 4.5:1 on the panel (a rule
      // for another element once slipped into the popup's selector list: orange text)
      await p.click('#viewport');
      await p.keyboard.press('/');
      await p.keyboard.type('Conv');
      await p.waitForFunction(() => !document.getElementById('search-popup').hidden &&
        document.getElementById('search-results').children.length > 0);
      assert.deepEqual(await p.evaluate(() => [getComputedStyle(document.getElementById('search-popup')).color,
        getComputedStyle(document.body).color]), ['rgb(230, 237, 243)', 'rgb(230, 237, 243)']);
      assert.deepEqual(await lowContrastTexts(p), []);
      await p.keyboard.press('Escape');
      // Auto follows the system's setting
      await p.selectOption('#theme-select', 'auto');
      await p.emulateMedia({ colorScheme: 'dark' });
      await p.waitForFunction(() => document.documentElement.dataset.theme === 'dark');
      await p.emulateMedia({ colorScheme: 'light' });
      await p.waitForFunction(() => document.querySelector('#canvas svg[data-theme="light"]'));
    } finally { await c.close(); }
  });

  test('the share URL opens the model in the page', async () => {
    const { c, p } = await browser();
    try {
      await p.goto(`${base}/m/${id}`);
      await graphShown(p, null, id);
      assert.equal(new URL(p.url()).pathname, '/');
      assert.equal(new URL(p.url()).hash, `#/models/${id}`);
      assert.equal(await p.title(), 'squeezenet1_1.onnx — onnxviz');
    } finally { await c.close(); }
  });
});

// Reads locked (--auth-reads): a signed /embed/{id} (POST /sign with a token) framed by a
// host on another origin draws the whole view (summary, drawing, a node's panel) with the
// capability its page holds (decision 92); the same embed unsigned shows nothing.
describe('a signed embed on a server whose reads are locked', () => {
  let locked, lbase, lid, host;
  const pages = {};
  before(async () => {
    host = await hostServer(pages);
    const work = fs.mkdtempSync(path.join(WORK, 'embed-locked-'));
    const key = path.join(work, 'sign.key');
    fs.writeFileSync(key, `${'k'.repeat(40)}\n`);
    locked = await startServer(BUILD, work, ['--frame-ancestors', host, '--auth-reads', '--token', 'w',
      '--sign-secret-file', key]);
    lbase = locked.base;
    const auth = { Authorization: 'Bearer w' };
    const res = await fetch(`${lbase}/models?name=squeezenet1_1.onnx`, { method: 'POST', headers: auth, body: fs.readFileSync(SQUEEZENET) });
    assert.ok(res.ok, `upload: ${res.status}`);
    lid = (await res.json()).id;
    assert.equal((await fetch(`${lbase}/models/${lid}`)).status, 401, 'reads are locked');
    const s = await fetch(`${lbase}/sign`, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ path: `/embed/${lid}`, ttl: 600 }) });
    assert.equal(s.status, 200, 'POST /sign');
    const signedPath = (await s.json()).path;
    assert.match(signedPath, /[?&]signature=[0-9a-f]{64}/);
    const page = (src) => () => `<!doctype html><html><body style="margin:0">
<iframe name="view" id="view" src="${src}" width="1000" height="640" style="border:0"></iframe>
<script>window.msgs = []; window.addEventListener('message', (e) => { if (e.origin === ${JSON.stringify(lbase)}) window.msgs.push(e.data); });</script>
</body></html>`;
    pages['/signed.html'] = page(`${lbase}${signedPath}`);
    pages['/unsigned.html'] = page(`${lbase}/embed/${lid}`);
  });
  after(async () => {
    await closeHosts(); // its host page's server too: a server left open keeps node from exiting
    if (locked) await stopChecked(locked, assert);
  });

  test('oEmbed: photo with a token alone, rich through a signed /oembed (its iframe signed)', async () => {
    const auth = { Authorization: 'Bearer w' };
    const q = `/oembed?url=${encodeURIComponent(`${lbase}/m/${lid}`)}&format=json`;
    const plain = await (await fetch(`${lbase}${q}`, { headers: auth })).json();
    assert.equal(plain.type, 'photo');
    const s = await fetch(`${lbase}/sign`, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ path: q, ttl: 600 }) });
    assert.equal(s.status, 200);
    const rich = await (await fetch(`${lbase}${(await s.json()).path}`)).json();
    assert.equal(rich.type, 'rich', JSON.stringify(rich));
    const src = /<iframe src="([^"]+)"/.exec(rich.html)[1].replace(/&amp;/g, '&');
    assert.match(src, new RegExp(`/embed/${lid}\\?expires=[0-9]+&signature=[0-9a-f]{64}$`));
    const page = await fetch(src.replace(/^https?:\/\/[^/]+/, lbase));
    assert.equal(page.status, 200);
    assert.match(await page.text(), /data-embed-cap="[0-9]+\.[0-9a-f]{64}"/);
  });

  test('the signed embed draws fully in the host; unsigned it shows nothing', async () => {
    const c = await launchBrowser(WORK, lbase, { intercept: false });
    await c.route('**/*', (r) => { const u = r.request().url(); return u.startsWith(lbase) || u.startsWith(host) ? r.continue() : r.abort(); });
    try {
      const p = c.pages()[0] || await c.newPage();
      p.setDefaultTimeout(30000);
      const refused = []; // the view's reads the server refused
      p.on('response', (r) => { if (r.url().startsWith(lbase) && r.status() >= 400) refused.push(`${r.status()} ${r.url()}`); });
      await p.goto(`${host}/signed.html`);
      await waitMsg(p, "(m) => m.source === 'onnxviz' && m.type === 'ready'");
      const f = p.frames().find((fr) => fr.url().startsWith(`${lbase}/embed/`));
      assert.ok(f, 'the view frame');
      await graphShown(f, null, lid);
      assert.ok(await f.evaluate(() => document.querySelectorAll('#canvas svg g.node').length > 50), 'the drawing');
      // the summary's figures, and a node's panel (GET /models/{id}/nodes/...)
      const node = await f.evaluate(() => document.querySelectorAll('#canvas svg g.node[data-node]')[2].getAttribute('data-node'));
      await p.evaluate(([n, o]) => document.getElementById('view').contentWindow.postMessage({ type: 'select', node: n }, o), [node, lbase]);
      await waitMsg(p, `(m) => m.type === 'selected' && m.node === ${JSON.stringify(node)}`);
      await f.waitForSelector('#side-body .op-badge');
      // the only refusal: the model list (the name lookup), outside the capability
      assert.deepEqual(refused.filter((u) => !u.includes(`${lbase}/models?`)), []);
      await shot(p, 'signed-locked');

      const p2 = await c.newPage();
      await p2.goto(`${host}/unsigned.html`);
      await p2.waitForTimeout(2500);
      assert.deepEqual(await p2.evaluate(() => window.msgs), [], 'unsigned: no view');
      await p2.close();
    } finally { await c.close(); }
  });
});
