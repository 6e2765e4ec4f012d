// panels.js — the model panel, the node panel and the tensor preview, built from the
// service's JSON (docs/api.md) with DOM calls only.

import { h, s, clear, fmtInt, fmtBytes, fmtNum, fmtShape, dtypeShort, isSpecial, kv, typeText } from './util.js';

const domainName = (d) => (d === '' || d === undefined || d === null ? 'ai.onnx' : d);

// Bar list (op histogram), the first `shown` rows and a "show all" button.
function bars(rows, shown = 12) {
  const max = Math.max(1, ...rows.map((r) => r.count));
  const list = h('ul', { class: 'bars' });
  const item = (r) => {
    const fill = h('div', { class: 'bar-fill' });
    fill.style.width = `${(100 * r.count) / max}%`; // CSSOM: allowed under the page's CSP
    return h('li', { title: `${r.label}: ${fmtInt(r.count)}` },
      h('span', { class: 'bar-label', text: r.label }),
      h('span', { class: 'bar-track', 'aria-hidden': 'true' }, fill),
      h('span', { class: 'bar-count', text: fmtInt(r.count) }));
  };
  rows.slice(0, shown).forEach((r) => list.append(item(r)));
  if (rows.length <= shown) return list;
  const more = h('button', {
    type: 'button', class: 'btn btn-plain btn-small more-btn', text: `Show all ${rows.length}`,
    onclick: () => { rows.slice(shown).forEach((r) => list.append(item(r))); more.remove(); },
  });
  return h('div', null, list, more);
}

// GET /models/{id}: {id, size, summary: {model, summary, warnings}, links}.
export function modelPanel(doc, { fileName, onNode, loadCost, dims, onBindDims } = {}) {
  const m = (doc.summary && doc.summary.model) || {};
  const sm = (doc.summary && doc.summary.summary) || {};
  const warnings = (doc.summary && doc.summary.warnings) || [];
  const frag = document.createDocumentFragment();

  frag.append(h('h3', { text: 'Model' }), kv([
    ['File', fileName],
    ['Graph', m.graph_name],
    ['Producer', [m.producer_name, m.producer_version].filter(Boolean).join(' ') || '—'],
    ['IR version', m.ir_version !== undefined ? String(m.ir_version) : undefined],
    ['Model version', m.model_version ? String(m.model_version) : undefined],
    ['Domain', m.domain],
    ['Size', fmtBytes(doc.size)],
    ['Id', h('span', { class: 'mono', title: doc.id, text: `${doc.id.slice(0, 16)}…` })],
  ]));
  if (m.doc_string) frag.append(h('p', { class: 'node-name', text: m.doc_string }));

  const opsets = m.opset_import || [];
  frag.append(h('h3', { text: 'Opsets' }),
    h('div', null, opsets.length ? opsets.map((o) => h('span', { class: 'pill', text: `${domainName(o.domain)} ${o.version}` })) : h('span', { class: 'empty', text: 'none declared' })));

  frag.append(h('h3', { text: 'Graph' }), kv([
    ['Nodes', fmtInt(sm.nodes) + (sm.main_graph_nodes !== undefined && sm.main_graph_nodes !== sm.nodes ? ` (${fmtInt(sm.main_graph_nodes)} in the main graph)` : '')],
    ['Edges', fmtInt(sm.edges)],
    ['Values', fmtInt(sm.values)],
    ['Initializers', fmtInt(sm.initializers)],
    ['Subgraphs', sm.subgraphs ? `${fmtInt(sm.subgraphs)} (depth ${sm.max_depth})` : undefined],
    ['Functions', sm.functions ? fmtInt(sm.functions) : undefined],
  ]));

  // one count everywhere (docs/cost.md "Parameters"): logical values (a 4-bit weight's
  // values, not its packed bytes), scales and zero points apart; bytes as stored
  const params = sm.parameters;
  if (params && params.count) {
    const sc = params.scales;
    frag.append(h('h3', { text: 'Parameters' }), kv([
      ['Total', `${fmtInt(params.count)} · ${fmtBytes(params.bytes)}`],
      ...(params.by_dtype || []).map((p) => [p.short || dtypeShort(p.dtype), `${fmtInt(p.count)} · ${fmtBytes(p.bytes)}`]),
      ['Scales, zero points', sc && sc.count ? `${fmtInt(sc.count)} · ${fmtBytes(sc.bytes)} (not parameters; in the bytes)` : undefined],
    ]));
  }

  if (loadCost) frag.append(costSection(loadCost, { dims, onBindDims, onNode }));

  const qz = sm.quantization;
  if (qz && qz.formats && qz.formats.length) frag.append(quantSection(qz));

  const ops = sm.op_types || [];
  if (ops.length) {
    frag.append(h('h3', { text: `Operators (${ops.length} types)` }),
      bars(ops.map((o) => ({ label: o.domain ? `${o.domain}.${o.op_type}` : o.op_type, count: o.count }))));
  }

  const meta = m.metadata_props || [];
  if (meta.length) {
    frag.append(h('h3', { text: 'Metadata' }), kv(meta.map((e) => [e.key, e.value])));
  }

  const ck = sm.check;
  if (ck) frag.append(...checkSection(ck, onNode));

  frag.append(h('h3', { text: `Warnings (${warnings.length})` }));
  if (!warnings.length) frag.append(h('p', { class: 'empty', text: 'None.' }));
  for (const w of warnings.slice(0, 100)) {
    frag.append(h('div', { class: 'notice warn' },
      h('strong', { text: w.kind ? `${w.kind}: ` : '' }), w.message || '',
      w.nodes && w.nodes.length ? h('span', { class: 'err-where', text: `nodes: ${w.nodes.slice(0, 8).join(', ')}${w.nodes.length > 8 ? ' …' : ''}` }) : null));
  }
  if (warnings.length > 100) frag.append(h('p', { class: 'empty', text: `… and ${warnings.length - 100} more (see the model JSON)` }));
  return frag;
}

// A cost figure (docs/api.md "Cost"): a number, a polynomial {expr, terms} in the named
// dims, or {marker}.
const SI = ['', ' k', ' M', ' G', ' T', ' P', ' E'];
function fmtFigure(f) {
  if (typeof f === 'number') {
    let x = f;
    let e = 0;
    while (x >= 999.5 && e < SI.length - 1) { x /= 1000; e += 1; }
    return e ? `${Number(x.toPrecision(3))}${SI[e]}` : String(f);
  }
  if (f && f.expr) return f.expr;
  return f && f.marker ? f.marker.replace('_', ' ') : '?';
}

// A figure's size for ordering: a number as it is, a polynomial at every dim = 1 (its
// coefficients' sum: the same order as any binding for figures of one shape), else 0.
const figSize = (f) => (typeof f === 'number' ? f : (f && f.terms ? f.terms.reduce((a, t) => a + t.coef, 0) : 0));

// cost.json's blocks (name scopes down to depth 3) as the "top blocks" list: numbered
// siblings with identical figures ("/encoder/layers.0" … ".11") become one family
// "/encoder/layers.0–11 ×12"; blocks of depth 1 and 2, most MACs first, the first 8.
export function topBlocks(blocks, max = 8) {
  const fams = new Map();
  const out = [];
  for (const b of blocks || []) {
    if (b.depth > 2) continue;
    const m = /^(.*\/)([^/]*?)(\d+)$/.exec(b.path);
    if (!m) { out.push({ path: b.path, n: 1, each: b.macs, size: figSize(b.macs), nodes: b.nodes }); continue; }
    const key = `${m[1]}\u0000${m[2]}`;
    let f = fams.get(key);
    if (!f) { f = { head: m[1] + m[2], members: [] }; fams.set(key, f); }
    f.members.push({ num: Number(m[3]), b });
  }
  for (const f of fams.values()) {
    const same = f.members.every((x) => JSON.stringify(x.b.macs) === JSON.stringify(f.members[0].b.macs));
    if (f.members.length > 1 && same) {
      const nums = f.members.map((x) => x.num).sort((a, b) => a - b);
      const first = f.members[0].b;
      out.push({ path: `${f.head}${nums[0]}–${nums[nums.length - 1]}`, n: nums.length, each: first.macs, size: figSize(first.macs) * nums.length, nodes: first.nodes });
    } else {
      for (const x of f.members) out.push({ path: x.b.path, n: 1, each: x.b.macs, size: figSize(x.b.macs), nodes: x.b.nodes });
    }
  }
  return out.filter((x) => x.size > 0).sort((a, b) => b.size - a.size).slice(0, max);
}

const figBytes = (f) => (typeof f === 'number' ? fmtBytes(f) : `${fmtFigure(f)} bytes`);

// GET /models/{id}/cost.json (docs/cost.md): totals, the op types with the most MACs and
// the uncounted ops, with a control binding the named dims (batch:1,sequence_length:128).
function costSection(loadCost, { dims = '', onBindDims } = {}) {
  const box = h('section', { class: 'cost-summary', 'aria-label': 'Cost' });
  const body = h('div', null, h('p', { class: 'empty', text: 'Counting…' }));
  const input = h('input', { type: 'text', class: 'cost-dims', placeholder: 'batch:1,sequence_length:128', 'aria-label': 'Bind dims' });
  input.value = dims;
  // the model's own dim names (issue 39): the placeholder suggests them, and a name the
  // model does not have is said, not silently ignored
  // (the unbound figure's symbols: asked once, with the first figure when nothing is bound)
  let unbound = null;
  const show = (dims) => {
    const cost = loadCost(dims);
    if (!unbound) unbound = (dims ? loadCost('') : cost).then((c) => c.symbols || [], () => []);
    Promise.all([cost, unbound]).then(([c, modelDims]) => {
      const bound = Object.keys(c.dims || {});
      if (modelDims.length) input.placeholder = modelDims.slice(0, 2).map((n, i) => `${n}:${i ? 128 : 1}`).join(',');
      const unknown = bound.filter((n) => !modelDims.includes(n));
      const t = c.total || {};
      const par = t.params || {};
      const nodes = t.nodes || {};
      const rows = [
        ['MACs', fmtFigure(t.macs)],
        ['Other ops', fmtFigure(t.ops)],
        ['FLOPs', `${fmtFigure(t.flops)} (2 × MACs + other ops)`],
        ['Parameters', par.weights !== undefined ? `${fmtInt(par.weights)} · ${fmtBytes(par.bytes)}${par.scale_bytes ? ` (scales and zero points ${fmtBytes(par.scale_bytes)})` : ''}` : undefined],
        ['Activations', `${figBytes(t.read_bytes)} read · ${figBytes(t.written_bytes)} written`],
        ['Nodes', `${fmtInt(nodes.counted)} counted · ${fmtInt(nodes.bookkeeping)} bookkeeping (shape arithmetic and masks: no cost)${nodes.uncounted ? ` · ${fmtInt(nodes.uncounted)} uncounted` : ''}${nodes.unknown ? ` · ${fmtInt(nodes.unknown)} unknown shapes` : ''}`],
      ];
      if (c.symbols && c.symbols.length) rows.push(['Dims', c.symbols.join(', ')]);
      const top = (c.types || []).filter((ty) => ty.kind === 'counted' && ty.macs !== 0).slice(0, 10);
      const unc = c.uncounted || [];
      const blocks = topBlocks(c.blocks);
      clear(body).append(...[kv(rows),
        top.length ? h('ul', { class: 'cost-types' }, top.map((ty) => h('li', { text: `${ty.op} ×${fmtInt(ty.count)}: ${fmtFigure(ty.macs)} MACs` }))) : null,
        blocks.length ? h('h4', { text: 'Top blocks' }) : null,
        blocks.length ? h('ul', { class: 'cost-blocks', 'aria-label': 'Blocks with the most MACs' }, blocks.map((b) => h('li', {
          title: `${fmtInt(b.nodes)} nodes${b.n > 1 ? ' each' : ''}`,
          text: b.n > 1 ? `${b.path} ×${b.n}: ${fmtFigure(b.each)} MACs each` : `${b.path}: ${fmtFigure(b.each)} MACs`,
        }))) : null,
        unc.length ? h('p', { class: 'notice warn', text: `Uncounted: ${unc.map((u) => `${u.domain ? `${u.domain}.` : ''}${u.op} ×${u.count}`).join(', ')}` }) : null].filter(Boolean));
      if (unknown.length) {
        body.prepend(h('p', { class: 'notice warn', id: 'cost-dims-unknown', text: `${unknown.join(', ')}: not ${unknown.length === 1 ? 'a dim' : 'dims'} of this model (nothing bound). ${modelDims.length ? `Its dims: ${modelDims.join(', ')}.` : 'It has no named dims.'}` }));
      }
    }).catch((e) => {
      clear(body).append(h('p', { class: 'notice warn', text: `Cost: ${e.message}` }));
    });
  };
  const form = h('form', { class: 'cost-form', onsubmit: (ev) => {
    ev.preventDefault();
    const d = input.value.trim();
    show(d);
    if (onBindDims) onBindDims(d);
  } },
    input, h('button', { type: 'submit', class: 'btn btn-plain btn-small', text: 'Bind' }));
  box.append(h('h3', { text: 'Cost' }), form, body);
  show(dims);
  return box;
}

// summary.quantization (docs/quant.md): formats, quantized ops per precision, what stays
// float.
const FORMAT_NAMES = { qdq: 'QDQ', qoperator: 'QOperator', dynamic: 'dynamic', weight_only: 'weight-only' };

function quantSection(q) {
  const box = h('section', { class: 'quant-summary', 'aria-label': 'Quantization' });
  const ops = q.ops || {};
  const par = q.parameters || {};
  const total = (par.quantized || 0) + (par.float || 0) + (par.other || 0); // the summary's count
  box.append(h('h3', { text: 'Quantization' }), kv([
    ['Formats', h('span', null, q.formats.map((f) => h('span', { class: 'pill quant-pill', text: FORMAT_NAMES[f] || f })))],
    ['Quantized ops', `${fmtInt(ops.quantized)}${ops.dynamic ? ` (${fmtInt(ops.dynamic)} dynamic)` : ''} · drawn as their float op`],
    ['Float ops', fmtInt(ops.float)],
    ['Q/DQ plumbing', `${fmtInt(ops.plumbing)} node${ops.plumbing === 1 ? '' : 's'}, folded into the ops`],
    ['Parameters', `${fmtInt(total)}: ${fmtInt(par.quantized)} quantized${total ? ` (${((100 * (par.quantized || 0)) / total).toFixed(1)}%)` : ''} · ${fmtInt(par.float)} float${par.other ? ` · ${fmtInt(par.other)} other` : ''}`],
    ['Scales, zero points', `${fmtInt(par.scales)} (not parameters)`],
  ]));
  const rows = (q.weights || []).map((w) => ({ label: `${w.dtype.toLowerCase()} weights`, count: w.parameters, title: `${fmtInt(w.ops)} ops, ${fmtInt(w.tensors)} tensors` }));
  if (rows.length) {
    box.append(h('table', { class: 'quant-table', 'aria-label': 'Quantized weights by precision' },
      h('thead', null, h('tr', null, ['precision', 'ops', 'tensors', 'parameters'].map((t) => h('th', { scope: 'col', text: t })))),
      h('tbody', null, (q.weights || []).map((w) => h('tr', null,
        h('th', { scope: 'row', text: w.dtype.toLowerCase() }), h('td', { text: fmtInt(w.ops) }),
        h('td', { text: fmtInt(w.tensors) }), h('td', { text: fmtInt(w.parameters) }))))));
  }
  if ((q.activations || []).length) {
    box.append(h('p', { class: 'quant-acts', text: `Activations: ${(q.activations || []).map((a) => `${a.dtype.toLowerCase()} in ${fmtInt(a.ops)} ops`).join(', ')}` }));
  }
  return box;
}

// The summary's check (docs/check.md): counts, then the problems it lists, errors first.
const SEVERITY_ORDER = { error: 0, warning: 1, info: 2 };
function checkSection(ck, onNode) {
  const total = ck.errors + ck.warnings + ck.infos;
  const plural = (n, w) => `${fmtInt(n)} ${w}${n === 1 ? '' : 's'}`;
  const out = [h('h3', { text: 'Check' }),
    h('p', { class: `check-verdict ${ck.ok ? 'ok' : 'bad'}`, dataset: { errors: String(ck.errors) } },
      h('strong', { text: ck.ok ? 'No errors' : plural(ck.errors, 'error') }),
      ` · ${plural(ck.warnings, 'warning')} · ${plural(ck.infos, 'info')}`)];
  const probs = [...(ck.problems || [])].sort((a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity]);
  const list = h('ul', { class: 'check-list', 'aria-label': 'Problems' });
  for (const p of probs.slice(0, 50)) {
    list.append(h('li', { class: `sev-${p.severity}`, dataset: { code: p.code } },
      h('span', { class: 'sev', text: p.severity }),
      h('code', { class: 'code', text: p.code }),
      p.node && onNode ? h('button', { type: 'button', class: 'link-btn', text: p.node_name || p.node, title: `Go to node ${p.node}`, onclick: () => onNode(p.node) }) : null,
      h('div', { class: 'msg', text: p.message })));
  }
  if (probs.length) out.push(list);
  if (total > Math.min(probs.length, 50)) out.push(h('p', { class: 'empty', text: `${fmtInt(total - Math.min(probs.length, 50))} more: GET …/check lists them all` }));
  return out;
}

// GET /models/{id} of a tensor upload: {id, size, kind: "tensor", tensor: {name, dtype, dims, count, storage}}.
export function tensorUploadPanel(doc, { fileName } = {}) {
  const t = doc.tensor || {};
  const frag = document.createDocumentFragment();
  frag.append(h('h3', { text: 'Tensor file' }), kv([
    ['File', fileName],
    ['Name', t.name || '(unnamed)'],
    ['Type', t.dtype],
    ['Dims', `[${(t.dims || []).join(', ')}]`],
    ['Elements', t.count !== undefined ? fmtInt(t.count) : undefined],
    ['Storage', t.storage],
    ['Size', fmtBytes(doc.size)],
    ['Id', h('span', { class: 'mono', title: doc.id, text: `${doc.id.slice(0, 16)}…` })],
  ]), h('p', { class: 'empty', text: 'A lone TensorProto (.pb), not a model: it has values, no graph.' }));
  return frag;
}

// ------------------------------------------------------------------------- attributes
const LIST_MAX = 64;

function listText(vals, fmt = (v) => fmtNum(v)) {
  const head = vals.slice(0, LIST_MAX).map(fmt).join(', ');
  return `[${head}${vals.length > LIST_MAX ? `, … ${fmtInt(vals.length - LIST_MAX)} more` : ''}]`;
}

function tensorSummary(t) {
  return `${dtypeShort(t.dtype)} ⟨${fmtShape(t.dims)}⟩ · ${fmtInt(t.count)} value${t.count === 1 ? '' : 's'}`;
}

function attrValue(a, ctx) {
  const v = a.value;
  if (a.ref_attr_name) return h('span', null, 'refers to the function attribute ', h('code', { text: a.ref_attr_name }));
  switch (a.type) {
    case 'INT': return h('span', { class: 'aval', text: String(v) });
    case 'FLOAT': return h('span', { class: 'aval', text: fmtNum(v, 7) });
    case 'INTS': return h('span', { class: 'aval', text: listText(v || [], String) });
    case 'FLOATS': return h('span', { class: 'aval', text: listText(v || []) });
    case 'STRING': return h('span', { class: 'aval' }, h('span', { class: 'str', text: JSON.stringify(v ?? '') }));
    case 'STRINGS': return h('span', { class: 'aval' }, h('span', { class: 'str', text: listText(v || [], (x) => JSON.stringify(x)) }));
    case 'TENSOR':
      if (!v) return h('span', { class: 'empty', text: 'empty' });
      return h('span', { class: 'aval' }, `${tensorSummary(v)} `,
        v.ref ? h('button', { type: 'button', class: 'link-btn', text: 'preview', onclick: () => ctx.onTensor(v.ref, `${a.name} of ${ctx.nodeLabel}`) }) : null);
    case 'TENSORS':
      return h('span', { class: 'aval' }, (v || []).map((t, i) => h('span', { class: 'io-links' },
        `#${i} ${tensorSummary(t)} `,
        t.ref ? h('button', { type: 'button', class: 'link-btn', text: 'preview', onclick: () => ctx.onTensor(t.ref, `${a.name}[${i}] of ${ctx.nodeLabel}`) }) : null)));
    case 'GRAPH':
    case 'GRAPHS': {
      const gs = a.type === 'GRAPH' ? [v] : (v || []);
      return h('span', { class: 'aval' }, gs.filter(Boolean).map((g) => h('span', { class: 'io-links' },
        `subgraph ${g.scope} · ${fmtInt(g.nodes)} nodes `,
        h('button', { type: 'button', class: 'link-btn', text: 'show', onclick: () => ctx.onScope(g.scope) }))));
    }
    default:
      return h('span', { class: 'aval', text: v === undefined ? '' : JSON.stringify(v) });
  }
}

// "Conv-11 (ai.onnx, opset 13)" linking to onnx.ai's page of that version.
function schemaLink(sc) {
  if (!sc) return undefined;
  const label = `${sc.op_type}-${sc.since_version}`;
  // the server's built-in schema table makes the link; a page opens only https (never a
  // javascript: or relative link, should a server send one)
  const link = /^https:\/\//.test(sc.version_link || '') ? sc.version_link : undefined;
  return h('span', { class: 'op-schema' },
    h('a', { href: link, target: '_blank', rel: 'noopener noreferrer', class: 'op-link', title: link, text: label }),
    ` (${domainName(sc.domain)}, opset ${sc.opset})`,
    sc.deprecated ? h('span', { class: 'kind', text: 'deprecated' }) : null);
}

// A list of node ids as buttons with the node's name where known.
function nodeLinks(label, refs, ctx) {
  if (!refs || !refs.length) return null;
  const max = 12;
  return h('div', { class: 'io-links' }, h('span', { text: label }),
    refs.slice(0, max).map((r) => h('button', {
      type: 'button', class: 'link-btn', text: ctx.nameOf(r.node) || r.node,
      title: `Go to node ${r.node}`, onclick: () => ctx.onNode(r.node),
    })),
    refs.length > max ? h('span', { text: `… ${refs.length - max} more` }) : null);
}

function valueItem(v, i, dir, ctx) {
  if (!v) return h('li', null, h('span', { class: 'io-idx', text: String(i) }), h('div', { class: 'io-head' }, h('span', { class: 'empty', text: '(optional, not given)' })));
  const kind = v.kind || '';
  const init = v.initializer;
  const li = h('li', null,
    h('span', { class: 'io-idx', text: i === null ? '' : String(i) }),
    h('div', { class: 'io-head' },
      v.port ? h('span', { class: 'io-port', text: v.port, title: 'Its name in the operator schema' }) : null,
      h('span', { class: 'io-name', text: v.name || '(unnamed)' }),
      kind && kind !== 'node_output' ? h('span', { class: `kind ${kind === 'initializer' ? 'initializer' : kind === 'input' ? 'input' : ''}`, text: kind.replace('_', ' ') }) : null),
    h('div', { class: 'io-type', text: typeText(v.type) }));
  if (dir === 'in' && v.producer) li.append(nodeLinks('from', [v.producer], ctx));
  if (dir === 'out') li.append(nodeLinks('to', v.consumers, ctx) || h('div', { class: 'io-links', text: v.graph_output ? 'graph output' : 'not used' }));
  const ref = (init && init.ref) || v.tensor;
  if (init) {
    li.append(h('div', { class: 'init-box' },
      h('div', null, h('strong', { text: 'Initializer ' }), h('span', { class: 'mono', text: init.ref })),
      h('div', { text: `${dtypeShort(init.dtype)} ⟨${fmtShape(init.dims)}⟩ · ${heldText(init)} · ${fmtBytes(init.bytes)} · ${storageText(init, ctx)}` }),
      h('button', {
        type: 'button', class: 'btn btn-plain btn-small', dataset: { ref: init.ref },
        text: 'Preview values', onclick: () => ctx.onTensor(init.ref, init.name || v.name),
      })));
  } else if (ref) {
    li.append(h('div', { class: 'init-box' }, h('button', {
      type: 'button', class: 'btn btn-plain btn-small', dataset: { ref }, text: 'Preview values',
      onclick: () => ctx.onTensor(ref, v.name),
    })));
  }
  const dq = v.dequantized_from; // a quantized weight behind a DequantizeLinear
  if (dq && dq.ref) {
    li.append(h('div', { class: 'init-box quant-box' },
      h('div', null, h('strong', { text: 'Quantized weight ' }), h('span', { class: 'mono', text: dq.name || dq.ref })),
      h('div', { text: `${dtypeShort(dq.dtype)} ⟨${fmtShape(dq.dims)}⟩ · ${fmtInt(dq.count)} values, dequantized by ${dq.node}` }),
      h('button', {
        type: 'button', class: 'btn btn-plain btn-small', dataset: { ref: dq.ref, dequantize: '1' },
        text: 'Preview dequantized values', onclick: () => ctx.onTensor(dq.ref, dq.name, { dequantize: true }),
      })));
  }
  return li;
}

// What a constant holds (docs/cost.md "Parameters"): a packed 4-bit weight's parameters
// are not its stored values; a scale or zero point holds none.
const heldText = (t) => (t.parameters === undefined || t.parameters === t.count ? `${fmtInt(t.count)} values`
  : t.parameters === 0 ? `${fmtInt(t.count)} values (scales or zero points: no parameters)`
    : `${fmtInt(t.parameters)} parameters packed in ${fmtInt(t.count)} values`);
// A structure upload's tensors are external with their bytes left behind (first.js).
const storageText = (t, ctx) => (ctx.structure && t.storage === 'external' ? 'weights not uploaded' : t.storage);

// A value of document.json (a graph input or output, an initializer drawn as a node):
// its type, producer, consumers and tensor preview.
export function valuePanel(v, ctx) {
  const frag = document.createDocumentFragment();
  frag.append(
    h('div', { class: 'node-title' }, h('span', { class: 'op-badge', text: v.graph_input ? 'graph input' : v.graph_output ? 'graph output' : (v.kind || 'value').replace('_', ' ') })),
    h('div', { class: 'node-name', text: v.name || '(unnamed value)' }),
    kv([['Scope', v.scope ? h('span', { class: 'mono', text: v.scope }) : 'main graph']]));
  if (v.doc_string) frag.append(h('p', { class: 'empty', text: v.doc_string }));
  frag.append(h('h3', { text: 'Type and uses' }), h('ul', { class: 'io-list' }, valueItem(v, null, 'out', ctx)));
  if (v.producer) frag.append(h('h3', { text: 'Produced by' }), nodeLinks('', [v.producer], ctx));
  return frag;
}

// GET /models/{id}/nodes/{node_id}.  ctx: {nameOf(id), onNode(id), onTensor(ref, label),
// onScope(scope), drawn: bool (is the node in the current drawing)}.
export function nodePanel(n, ctx) {
  ctx = { ...ctx, nodeLabel: n.name || n.id };
  const frag = document.createDocumentFragment();
  frag.append(
    h('div', { class: 'node-title' },
      h('span', { class: 'op-badge', text: n.op_type || '?' }),
      h('span', { class: 'node-domain', text: `${domainName(n.domain)}${n.overload ? ` · overload ${n.overload}` : ''}` })),
    h('div', { class: 'node-name', text: n.name || '(unnamed node)' }),
    kv([
      ['Id', h('span', { class: 'mono', text: n.id })],
      ['Scope', n.scope ? h('span', { class: 'mono', text: n.scope }) : 'main graph'],
      ['Function', n.function],
      ['Operator', schemaLink(n.schema)],
    ]));
  if (!ctx.drawn) frag.append(h('div', { class: 'notice info', text: 'This node is not drawn in the current view (it is inside a collapsed group or folded away).' }));
  if (n.doc_string) frag.append(h('p', { class: 'empty', text: n.doc_string }));

  // the attributes given, then those left to their schema defaults (marked so)
  const attrs = n.attributes || [];
  const defaults = n.defaults || [];
  frag.append(h('h3', { text: `Attributes (${attrs.length}${defaults.length ? ` + ${defaults.length} default` : ''})` }));
  if (!attrs.length && !defaults.length) frag.append(h('p', { class: 'empty', text: 'None.' }));
  else {
    const row = (a, left) => h('tr', { class: left ? 'defaulted' : null, dataset: { attr: a.name } },
      h('th', { scope: 'row' }, a.name, h('span', { class: 'atype', text: a.type.toLowerCase() })),
      h('td', null, attrValue(a, ctx), a.default ? h('span', { class: 'default-tag', text: left ? 'default' : '= default', title: left ? 'Not given: the schema default applies' : 'Given, and equal to the schema default' }) : null));
    frag.append(h('table', { class: 'attrs' }, h('tbody', null,
      attrs.map((a) => row(a, false)), defaults.map((a) => row(a, true)))));
  }

  frag.append(h('h3', { text: `Inputs (${(n.inputs || []).length})` }),
    h('ul', { class: 'io-list', 'aria-label': 'Inputs' }, (n.inputs || []).map((v, i) => valueItem(v, i, 'in', ctx))));
  frag.append(h('h3', { text: `Outputs (${(n.outputs || []).length})` }),
    h('ul', { class: 'io-list', 'aria-label': 'Outputs' }, (n.outputs || []).map((v, i) => valueItem(v, i, 'out', ctx))));
  if (n.subgraphs && n.subgraphs.length) {
    frag.append(h('h3', { text: 'Subgraphs' }), h('div', null, n.subgraphs.map((sc) => h('div', { class: 'io-links' },
      h('span', { class: 'mono', text: sc }),
      h('button', { type: 'button', class: 'link-btn', text: 'show', onclick: () => ctx.onScope(sc) })))));
  }
  return frag;
}

// ------------------------------------------------------------------------- tensors
// The preview answer, GET /models/{id}/tensors/{ref}?values=N&bins=B (docs/api.md):
// {name, dtype, dtype_short, dims, ggml_ne, count, storage, bytes, external?,
//  values: {offset, count, data}, stats: {count, finite, nan, pos_inf, neg_inf, zeros,
//  min, max, mean, std, histogram: {bins, lo, hi, counts}}}.  NaN and ±Inf are the strings
// "NaN", "Infinity", "-Infinity".
function histogramSvg(hist, dtype) {
  const counts = (hist && hist.counts) || [];
  if (!counts.length) return null;
  const lo = hist.lo, hi = hist.hi;
  const W = 340, H = 120, padL = 4, padB = 18, top = 6;
  const max = Math.max(1, ...counts);
  const bw = (W - padL * 2) / counts.length;
  const ranged = typeof lo === 'number' && typeof hi === 'number';
  const svg = s('svg', {
    class: 'histogram', viewBox: `0 0 ${W} ${H}`, role: 'img',
    'aria-label': `Histogram of ${counts.length} bins from ${fmtNum(lo)} to ${fmtNum(hi)}`,
  });
  counts.forEach((c, i) => {
    const bh = c === 0 ? 0 : Math.max(1, ((H - padB - top) * c) / max);
    const x0 = ranged ? lo + ((hi - lo) * i) / counts.length : null;
    const x1 = ranged ? lo + ((hi - lo) * (i + 1)) / counts.length : null;
    svg.append(s('rect', {
      class: 'hbar', x: (padL + i * bw + 0.5).toFixed(2), y: (H - padB - bh).toFixed(2),
      width: Math.max(0.5, bw - 1).toFixed(2), height: bh.toFixed(2),
    }, s('title', null, `${ranged ? `[${fmtNum(x0, 4)}, ${fmtNum(x1, 4)}${i === counts.length - 1 ? ']' : ')'}: ` : ''}${fmtInt(c)}`)));
  });
  svg.append(s('line', { class: 'axis', x1: padL, x2: W - padL, y1: H - padB + 0.5, y2: H - padB + 0.5 }));
  svg.append(s('text', { x: padL, y: H - 4 }, fmtNum(lo, 4)));
  svg.append(s('text', { x: W - padL, y: H - 4, 'text-anchor': 'end' }, fmtNum(hi, 4)));
  svg.append(s('text', { x: W / 2, y: H - 4, 'text-anchor': 'middle' }, `${dtype === 'dequantized' ? 'dequantized' : dtypeShort(dtype)} values, ${counts.length} bins`));
  return svg;
}

// What dequantized it (t.dequantized) or that it can be (t.quantized_by): docs/quant.md.
function quantBox(t, { onDequantize, onNode }) {
  const dq = t.dequantized;
  const qb = t.quantized_by;
  if (!dq && !qb) return null;
  const by = (x) => h('span', null, `${x.op_type} `, onNode ? h('button', {
    type: 'button', class: 'link-btn', text: x.node, title: `Go to node ${x.node}`, onclick: () => onNode(x.node),
  }) : h('span', { class: 'mono', text: x.node }));
  const toggle = onDequantize ? h('button', {
    type: 'button', class: 'btn btn-plain btn-small', dataset: { action: dq ? 'raw' : 'dequantize' },
    text: dq ? 'Show the stored integers' : 'Show dequantized values', onclick: () => onDequantize(!dq),
  }) : null;
  if (!dq) {
    return h('div', { class: 'init-box quant-box' },
      h('div', null, h('strong', { text: 'Quantized ' }), `${qb.qtype.toLowerCase()}, ${qb.granularity}, by `, by(qb)), toggle);
  }
  const gran = dq.granularity === 'per-axis' ? `per-axis (axis ${dq.axis})`
    : dq.granularity === 'blocked' ? `blocks of ${dq.block_size} along axis ${dq.axis}` : dq.granularity;
  const param = (p) => (p ? `${p.name} · ${dtypeShort(p.dtype)} ⟨${fmtShape(p.dims)}⟩` : undefined);
  return h('div', { class: 'init-box quant-box' },
    h('div', null, h('strong', { text: 'Dequantized values ' }), h('span', { class: 'mono', text: dq.formula })),
    kv([
      ['Stored', `${dq.from.dtype}${dq.bits ? ` (${dq.bits}-bit ${dq.qtype.toLowerCase()}, ${dq.packing})` : ''} ⟨${fmtShape(dq.from.dims)}⟩`],
      ['By', by(dq)],
      ['Granularity', gran],
      ['Scale', param(dq.scale)],
      ['Zero point', dq.zero_point ? param(dq.zero_point) : dq.zero_point_default !== undefined ? `none (${dq.zero_point_default})` : 'none'],
    ]), toggle);
}

// opts: {label, onMore(offset) -> Promise<preview> (next page of values), npyUrl,
// onDequantize(on), onNode(id)}
export function tensorPanel(t, { label, onMore, npyUrl, onDequantize, onNode } = {}) {
  const frag = document.createDocumentFragment();
  const dims = t.dims || [];
  const ext = t.external;
  frag.append(
    h('div', { class: 'node-title' },
      h('span', { class: 'op-badge', text: t.dequantized ? 'f32 dequantized' : t.dtype_short || dtypeShort(t.dtype) }),
      h('span', { class: 'node-domain', text: `⟨${fmtShape(dims)}⟩` })),
    h('div', { class: 'node-name', text: t.name || label || '' }),
    kv([
      ['Ref', t.tensor && t.tensor !== '_' ? h('span', { class: 'mono', text: t.tensor }) : undefined],
      ['Type', t.dtype],
      ['Dims', `[${dims.join(', ')}]`],
      ['Dims, ggml order', t.ggml_ne ? `[${t.ggml_ne.join(', ')}] (llama.cpp's ne: innermost first)` : undefined],
      ['Elements', t.count !== undefined ? fmtInt(t.count) : undefined],
      ['Bytes', t.bytes !== undefined ? fmtBytes(t.bytes) : undefined],
      ['Storage', t.storage],
      ['External', ext ? `${ext.location} @ ${fmtInt(ext.offset || 0)} (+${fmtBytes(ext.length)})` : undefined],
    ]));
  const qbox = quantBox(t, { onDequantize, onNode });
  if (qbox) frag.append(qbox);
  if (npyUrl) frag.append(h('div', { class: 'panel-actions' }, h('button', { type: 'button', class: 'btn btn-plain btn-small', text: 'Download .npy', onclick: npyUrl })));

  const st = t.stats;
  if (st) {
    const q = st.quant;
    const cells = [
      ['min', st.min], ['max', st.max], ['mean', st.mean], ['std', st.std],
      ['zeros', st.zeros], ['finite', st.finite], ['NaN', st.nan], ['+Inf', st.pos_inf], ['−Inf', st.neg_inf],
      ...(q ? [[`at ${q.qmin}`, q.saturated_low], [`at ${q.qmax}`, q.saturated_high],
        ['levels', q.levels === null ? null : `${fmtInt(q.levels)} of ${fmtInt(q.levels_possible)}`]] : []),
    ].filter(([, v]) => v !== undefined);
    const counted = new Set(['zeros', 'finite', 'NaN', '+Inf', '−Inf', ...(q ? [`at ${q.qmin}`, `at ${q.qmax}`] : [])]);
    frag.append(h('h3', { text: 'Statistics' }), h('div', { class: 'stats' }, cells.map(([k, v]) => h('div', { class: 'stat', dataset: { stat: k } },
      h('div', { class: 'k', text: k }),
      h('div', { class: `v${isSpecial(v) || (counted.has(k) && k !== 'zeros' && k !== 'finite' && v > 0) ? ' special' : ''}`, text: v === null ? '—' : counted.has(k) ? fmtInt(v) : fmtNum(v, 7) })))));
    const hs = histogramSvg(st.histogram, t.dequantized ? 'dequantized' : t.dtype);
    if (hs) frag.append(h('h3', { text: 'Histogram' }), hs);
  } else if (t.class === 'string') {
    frag.append(h('p', { class: 'empty', text: 'Strings have no statistics.' }));
  }

  const page = t.values || { offset: 0, count: 0, data: [] };
  const vals = [...(page.data || [])];
  const heading = h('h3');
  const body = h('div');
  const more = h('button', { type: 'button', class: 'btn btn-plain btn-small more-btn' });
  const render = () => {
    const total = typeof t.count === 'number' ? t.count : vals.length;
    heading.textContent = vals.length < total ? `First ${fmtInt(vals.length)} of ${fmtInt(total)} values` : `Values (${fmtInt(vals.length)})`;
    clear(body).append(vals.length ? valuesView(vals, dims) : h('p', { class: 'empty', text: 'No values.' }));
    more.hidden = !onMore || vals.length >= total;
    more.textContent = `Show ${fmtInt(Math.min(1024, total - vals.length))} more`;
  };
  more.addEventListener('click', async () => {
    more.disabled = true;
    try {
      const next = await onMore(vals.length);
      vals.push(...((next.values && next.values.data) || []));
      render();
    } catch (e) {
      more.replaceWith(h('div', { class: 'notice error', text: e.message }));
    } finally { more.disabled = false; }
  });
  render();
  frag.append(heading, body, more);
  return frag;
}

// One element of a tensor preview: a number (or "NaN"/"Inf"), or a complex pair as JSON.
const elementText = (v) => (typeof v === 'object' && v !== null ? JSON.stringify(v) : fmtNum(v, 9));

function valueCell(v) {
  return h('td', { class: isSpecial(v) ? 'special' : '', text: elementText(v) });
}

// Values in rows of the last dimension (row labels are the leading indices) when that is
// narrow, else as a flat numbered list.
function valuesView(vals, dims) {
  const last = dims.length >= 2 ? dims[dims.length - 1] : 0;
  if (last >= 1 && last <= 8) {
    const lead = dims.slice(0, -1);
    const label = (r) => {
      const idx = [];
      for (let k = lead.length - 1, q = r; k >= 0; k--) { idx.unshift(q % lead[k]); q = Math.floor(q / lead[k]); }
      return `[${idx.join(',')},:]`;
    };
    const rows = [];
    for (let r = 0; r * last < vals.length; r++) {
      rows.push(h('tr', null, h('th', { scope: 'row', text: label(r) }), vals.slice(r * last, (r + 1) * last).map(valueCell)));
    }
    return h('div', { class: 'values-wrap' }, h('table', { class: 'values-table', 'aria-label': 'Values' }, h('tbody', null, rows)));
  }
  return h('ol', { class: 'values', 'aria-label': 'Values' }, vals.map((v, i) => h('li', null,
    h('span', { class: 'vi', text: String(i) }),
    h('span', { class: isSpecial(v) ? 'special' : '', text: elementText(v) }))));
}
