// search.js — the search box: the model's nodes by name, op type, attribute or value
// (GET /models/{id}/search), a list to choose from with the arrow keys, the hits marked in
// the drawing.

import { getJSON, modelUrl } from './api.js';
import { h, clear, fmtInt, debounce } from './util.js';

const $ = (id) => document.getElementById(id);

function markText(text, q) {
  const i = text.toLowerCase().indexOf(q.toLowerCase());
  if (i < 0 || !q) return [text];
  return [text.slice(0, i), h('mark', { text: text.slice(i, i + q.length) }), text.slice(i + q.length)];
}

// modelId(): the model shown (null: none); goToNode(hit) opens a hit; nodeEl(id) is a
// node's box in the drawing; clearHighlights(cls) unmarks boxes; announce(text) for
// screen readers.  Answers {reset, close, isOpen, focus}.
export function initSearch({ modelId, goToNode, nodeEl, clearHighlights, announce }) {
  const searchInput = $('search');
  const searchPopup = $('search-popup');
  const searchList = $('search-results');
  let searchHits = [];
  let searchActive = -1;
  let searchCtl = null;

  function closeSearch() {
    searchPopup.hidden = true;
    searchInput.setAttribute('aria-expanded', 'false');
    searchInput.removeAttribute('aria-activedescendant');
    clearHighlights('hit');
  }

  function resetSearch() {
    if (searchCtl) searchCtl.abort();
    runSearch.cancel();
    searchInput.value = '';
    searchHits = [];
    searchActive = -1;
    clear(searchList);
    delete searchList.dataset.query;
    closeSearch();
  }

  const runSearch = debounce(async () => {
    const q = searchInput.value.trim();
    if (searchCtl) searchCtl.abort();
    const id = modelId();
    if (!q || !id) { closeSearch(); return; }
    searchCtl = new AbortController();
    try {
      const res = await getJSON(`${modelUrl(id)}/search?q=${encodeURIComponent(q)}&limit=50`, { signal: searchCtl.signal });
      if (searchInput.value.trim() !== q) return;
      searchHits = res.hits || [];
      searchActive = searchHits.length ? 0 : -1;
      $('search-summary').textContent = res.total === 0 ? `No match for “${q}”`
        : `${fmtInt(res.total)} match${res.total === 1 ? '' : 'es'}${res.total > searchHits.length ? ` (first ${searchHits.length})` : ''} — ↑↓ to choose, Enter to go`;
      clear(searchList);
      searchHits.forEach((hit, i) => {
        searchList.append(h('li', {
          id: `hit-${i}`, role: 'option', 'aria-selected': String(i === searchActive),
          onmousedown: (ev) => { ev.preventDefault(); chooseHit(i); },
        },
        h('span', { class: 'hit-op', text: hit.op_type }),
        h('span', { class: 'hit-name' }, markText(hit.name || hit.node, hit.match === 'name' ? q : '')),
        hit.match !== 'name' ? h('span', { class: 'hit-text' }, `${hit.match}: `, markText(hit.text || '', q)) : null));
      });
      searchList.dataset.query = q;
      searchPopup.hidden = false;
      searchInput.setAttribute('aria-expanded', 'true');
      updateActive();
      // mark the hits drawn in this view
      clearHighlights('hit');
      for (const hit of searchHits) { const el = nodeEl(hit.node); if (el) el.classList.add('hit'); }
      announce(`${fmtInt(res.total)} search results.`);
    } catch (e) {
      if (e.name === 'AbortError') return;
      $('search-summary').textContent = e.message;
      clear(searchList);
      searchPopup.hidden = false;
    }
  }, 160);

  function updateActive() {
    [...searchList.children].forEach((li, i) => li.setAttribute('aria-selected', String(i === searchActive)));
    if (searchActive >= 0) {
      searchInput.setAttribute('aria-activedescendant', `hit-${searchActive}`);
      const li = searchList.children[searchActive];
      if (li) li.scrollIntoView({ block: 'nearest' });
    }
  }

  async function chooseHit(i) {
    const hit = searchHits[i];
    if (!hit) return;
    closeSearch();
    await goToNode(hit);
  }

  searchInput.addEventListener('input', runSearch);
  searchInput.addEventListener('focus', () => { if (searchHits.length && searchInput.value.trim()) { searchPopup.hidden = false; searchInput.setAttribute('aria-expanded', 'true'); } });
  searchInput.addEventListener('keydown', (e) => {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      if (!searchHits.length) return;
      e.preventDefault();
      searchActive = (searchActive + (e.key === 'ArrowDown' ? 1 : -1) + searchHits.length) % searchHits.length;
      searchPopup.hidden = false;
      updateActive();
    } else if (e.key === 'Enter') {
      e.preventDefault();
      runSearch.cancel();
      if (searchActive >= 0 && !searchPopup.hidden) chooseHit(searchActive);
      else runSearch();
    } else if (e.key === 'Escape') {
      e.stopPropagation();
      if (!searchPopup.hidden) closeSearch(); else searchInput.blur();
    }
  });

  return {
    reset: resetSearch,
    close: closeSearch,
    isOpen: () => !searchPopup.hidden,
    focus: () => { searchInput.focus(); searchInput.select(); },
  };
}
