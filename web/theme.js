// theme.js — the page's light and dark themes (issue 36 item 6; docs/embed.md).  The
// choice is auto (follow prefers-color-scheme), light or dark: kept in this browser
// (localStorage) when made with the switch, not kept when a host page sets it (embed.js).
// The page's colours follow <html data-theme> (style.css); the drawing is asked for with
// theme=dark when dark (themeQuery), the server's palette keeping every text at 4.5:1.
const KEY = 'onnxviz.theme';
const CHOICES = ['auto', 'light', 'dark'];
const media = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : null;
const listeners = [];

function stored() {
  try {
    const v = localStorage.getItem(KEY);
    return CHOICES.includes(v) ? v : 'auto';
  } catch { return 'auto'; }
}

let choice = stored();

// The theme shown: 'light' or 'dark'.
export function theme() {
  return choice === 'auto' ? (media && media.matches ? 'dark' : 'light') : choice;
}

function show() {
  document.documentElement.dataset.theme = theme();
  const sel = document.getElementById('theme-select');
  if (sel) sel.value = choice;
}

function changed(before) {
  show();
  if (theme() !== before) for (const f of listeners) f(theme());
}

// Set the choice ('auto', 'light' or 'dark'); false for anything else.  persist: keep it
// in this browser (the switch does; a host page's message does not).
export function setTheme(c, { persist = true } = {}) {
  if (!CHOICES.includes(c)) return false;
  const before = theme();
  choice = c;
  if (persist) {
    try {
      if (c === 'auto') localStorage.removeItem(KEY); else localStorage.setItem(KEY, c);
    } catch { /* storage refused: the choice lasts this page */ }
  }
  changed(before);
  return true;
}

// f(theme) when the theme shown changes.
export function onTheme(f) { listeners.push(f); }

// A drawing's query with the theme: theme=dark when dark (light is the server's default,
// so light drawings keep their URLs and cache keys).
export function themeQuery(q) {
  if (theme() !== 'dark') return q;
  return q ? `${q}&theme=dark` : 'theme=dark';
}

if (media && media.addEventListener) {
  media.addEventListener('change', () => { if (choice === 'auto') changed(media.matches ? 'light' : 'dark'); });
}
const sel = document.getElementById('theme-select');
if (sel) sel.addEventListener('change', () => setTheme(sel.value));
show();
