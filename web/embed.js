// embed.js — the page as another site's embedded view (GET /embed/{id}, issue 36 item 3;
// the API is docs/embed.md) and as a share URL (GET /m/{id}).
//
// The server marks the page: <html class="embed" data-embed="{id}"
// data-embed-origins="https://a https://b"> (the origins of --frame-ancestors, the only
// ones that may frame it) or <html data-share="{id}">.  pathRoute() turns those paths into
// the page's #route before app.js reads it.  initEmbed() then speaks postMessage with the
// host: messages whose origin is not listed, or that do not come from the parent window,
// are ignored; what the view says goes to the listed origins only (postMessage's
// targetOrigin, so a page of another origin in the frame's parent never receives it).
import { NODE_ID, parseHash } from './route.js';
import { setTheme } from './theme.js';

const root = document.documentElement;
const ID = /^[0-9a-f]{64}$/;
export const embedId = ID.test(root.dataset.embed || '') ? root.dataset.embed : null;
const origins = (root.dataset.embedOrigins || '').split(' ').filter(Boolean);

// /m/{id} and /embed/{id}?{view query}: the page's route for them, in the URL's hash (the
// path stays, so that a reload is the same embed).
export function pathRoute() {
  const share = ID.test(root.dataset.share || '') ? root.dataset.share : null;
  if (share && !location.hash) {
    history.replaceState(null, '', `/#/models/${share}`);
  } else if (embedId && !location.hash.startsWith(`#/models/${embedId}`)) {
    const q = location.search.replace(/^\?/, '');
    const theme = new URLSearchParams(q).get('theme');
    if (theme) setTheme(theme, { persist: false });
    history.replaceState(null, '', `${location.pathname}${location.search}#/models/${embedId}${q ? `?${q}` : ''}`);
  }
}

function post(msg) {
  if (window.parent === window) return;
  for (const o of origins) {
    try { window.parent.postMessage({ source: 'onnxviz', ...msg }, o); } catch { /* a malformed origin: none */ }
  }
}

// The view's side: hooks app.js calls, and the host's messages.
//   navigate(patch, opts): app.js's.
export function initEmbed({ navigate }) {
  if (!embedId) return { shown() {} };
  // no uploads in an embed: a file dropped on it goes nowhere (and never opens)
  for (const ev of ['dragenter', 'dragover', 'drop']) {
    window.addEventListener(ev, (e) => { e.preventDefault(); e.stopImmediatePropagation(); }, true);
  }
  const err = (why) => post({ type: 'error', message: why });
  window.addEventListener('message', (e) => {
    if (!origins.includes(e.origin) || e.source !== window.parent) return; // not our host
    const m = e.data;
    if (!m || typeof m !== 'object' || typeof m.type !== 'string') return;
    if (m.type === 'select') {
      if (m.node !== null && !(typeof m.node === 'string' && NODE_ID.test(m.node))) { err('select: node is a node id or null'); return; }
      navigate({ node: m.node, value: null, tensor: null });
    } else if (m.type === 'query') {
      if (typeof m.query !== 'string' || m.query.length > 4000) { err('query: a view query string'); return; }
      const r = parseHash(`#/models/${embedId}?${m.query.replace(/^\?/, '')}`);
      const theme = new URLSearchParams(m.query).get('theme');
      if (theme) setTheme(theme, { persist: false });
      navigate({ opts: r.opts, expand: r.expand, unfold: r.unfold, dims: r.dims, node: r.node }, { replace: true });
    } else if (m.type === 'theme') {
      if (!setTheme(m.theme, { persist: false })) err('theme: auto, light or dark');
    } else {
      err(`unknown message type: ${String(m.type).slice(0, 40)}`);
    }
  });
  let ready = false, svg = null, node = null;
  return {
    // after each route is shown (app.js's apply): ready once, the size when the drawing
    // changed, the selection when it changed
    shown(r, drawing) {
      if (drawing && drawing !== svg) {
        svg = drawing;
        const vb = svg.viewBox && svg.viewBox.baseVal;
        post({ type: 'size', width: parseFloat(svg.getAttribute('width')) || (vb && vb.width) || 0, height: parseFloat(svg.getAttribute('height')) || (vb && vb.height) || 0 });
      }
      if (!ready && drawing) { ready = true; post({ type: 'ready', id: embedId }); }
      const now = r.node || null;
      if (ready && now !== node) { node = now; post({ type: 'selected', node: now }); }
    },
  };
}
