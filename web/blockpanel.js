// blockpanel.js — the side panel of a collapsed block (a group box: a scope drawn as one
// box, a run of alike blocks, a range of them).  A single click on a block selects it and
// shows this summary; opening it is a separate act (a double click, Enter on the selected
// block, or the panel's buttons): a click that redrew the graph and moved the view was a
// surprise, and a block had no summary at all (issue 39).  Built from the box itself (its
// rows: members, parameters, op types, cost) and, once loaded, the model's document (every
// op type of the scope and its first nodes).

import { h, fmtInt } from './util.js';

const FIRST_NODES = 8;

// Text that may break after a "/" or a "·" (a <wbr>), not inside a name (issue 39's
// `total_sequ / ence_length`).
function breakable(text) {
  return text.split(/(?<=[/·])/).flatMap((t, i) => (i ? [h('wbr'), t] : [t]));
}

// g: the group box (g.node.group); path: its scope; doc: the model's document.json (or
// null while loading); onExpand(), onOpenAll() (a run only), onNode(id).
export function blockPanel(g, path, doc, { onExpand, onOpenAll, onNode }) {
  const texts = [...g.querySelectorAll('text')].map((t) => t.textContent.trim()).filter(Boolean);
  const members = g.getAttribute('data-members');
  const run = g.hasAttribute('data-open-all');
  // the header (the block's short name) and the path row are the panel's title and path;
  // the rest are the box's figures
  const shownPath = texts[1] && /^[/…]/.test(texts[1]) ? texts[1] : path;
  const rows = texts.slice(shownPath === texts[1] ? 2 : 1);
  const body = h('div', { class: 'block-panel' },
    h('p', null, h('span', { class: 'op-badge', text: run ? `block ×${members}` : members ? `range of ${members}` : 'block' })),
    h('p', { class: 'node-name' }, ...breakable(shownPath)),
    h('p', { class: 'block-hint', text: run
      ? `${members} blocks alike, drawn as one box. Double-click it (or press Enter on it again) to open the first; "Open all" opens every one.`
      : 'Drawn as one box. Double-click it (or press Enter on it again) to draw its nodes.' }));
  if (rows.length) body.append(h('h3', { text: 'On the box' }), h('ul', { class: 'block-rows' }, ...rows.map((t) => h('li', null, ...breakable(t)))));
  const actions = h('p', { class: 'block-actions' },
    h('button', { type: 'button', class: 'btn btn-accent btn-small', id: 'btn-block-expand', text: run ? 'Open the first' : 'Expand', onclick: onExpand }));
  if (run && onOpenAll) actions.append(' ', h('button', { type: 'button', class: 'btn btn-plain btn-small', id: 'btn-block-open-all', text: `Open all ${members}`, onclick: onOpenAll }));
  body.append(actions);
  // a scope's own nodes (a range or a run spans several scopes: the box says enough)
  const prefix = `${path}/`;
  const nodes = doc && !path.includes('..') ? (doc.nodes || []).filter((n) => (n.name || '').startsWith(prefix)) : [];
  if (nodes.length) {
    const ops = new Map();
    for (const n of nodes) ops.set(n.op_type, (ops.get(n.op_type) || 0) + 1);
    const sorted = [...ops].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    body.append(h('h3', { text: `Op types (${fmtInt(nodes.length)} nodes${run ? ' each' : ''})` }),
      h('p', { class: 'block-ops', text: sorted.map(([op, c]) => `${op} ×${fmtInt(c)}`).join(', ') }),
      h('h3', { text: nodes.length > FIRST_NODES ? `First ${FIRST_NODES} nodes` : 'Nodes' }),
      h('ul', { class: 'block-nodes' }, ...nodes.slice(0, FIRST_NODES).map((n) => h('li', null,
        h('button', { type: 'button', class: 'link-btn', title: n.name, onclick: () => onNode(n.id) }, ...breakable(`${n.op_type} ${n.name.slice(prefix.length)}`))))));
  }
  return body;
}
