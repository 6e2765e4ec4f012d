// keys.js — the page's keyboard shortcuts: "?" lists them (the #shortcuts dialog), "/"
// searches, Escape closes what is open (the menus, the search list, a finished upload's
// card, then the side panel), + = - 0 zoom the drawing when nothing else has the focus.
// The boxes of the drawing have their own keys (nodekeys.js).

const $ = (id) => document.getElementById(id);

// search: {isOpen, close, focus} (search.js); menusOpen() / closeMenus(); uploadCardOpen()
// (a finished upload's card) / closeUploadCard(); sideOpen() / closeSide() (leaves the
// selection); zoomable(): a drawing is shown; view(): the element that zooms (the view, or
// side by side the pane that leads).
export function initKeys({ search, menusOpen, closeMenus, uploadCardOpen, closeUploadCard, sideOpen, closeSide, zoomable, view }) {
  document.addEventListener('keydown', (e) => {
    const typing = e.target.closest && e.target.closest('input, textarea, select, [contenteditable]');
    const sheet = $('shortcuts');
    if (sheet.open) return; // a modal dialog: Escape closes it (the browser's own)
    if (e.key === '?' && !typing && !e.ctrlKey && !e.metaKey && !e.altKey) {
      e.preventDefault();
      sheet.showModal();
    } else if (e.key === '/' && !typing && !$('search-box').hidden) {
      e.preventDefault();
      search.focus();
    } else if (e.key === 'Escape') {
      if (menusOpen()) { closeMenus(); return; }
      if (search.isOpen()) { search.close(); return; }
      if (uploadCardOpen()) { closeUploadCard(); return; }
      if (sideOpen()) {
        closeSide();
        view().focus();
      }
    } else if (!typing && e.target === document.body && zoomable() && ['+', '=', '-', '0'].includes(e.key)) {
      const vp = view();
      vp.focus();
      vp.dispatchEvent(new KeyboardEvent('keydown', { key: e.key, bubbles: true }));
    }
  });
}
