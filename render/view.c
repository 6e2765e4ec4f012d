/*
 * view.c — builds the view (render/internal.h) from the linked graph and the options.
 *
 *  1. folding (fold.c): constants and bookkeeping nodes become rows of their consumers
 *     ("W ⟨64×3×7×7⟩ f16", "shape = [N, 3136, 96] · 14 ops");
 *  2. the main graph's nodes are grouped by name scope (hier.c) or drawn one by one;
 *  3. subgraphs of visible If/Loop/Scan nodes become clusters (subgraphs=expand), or rows
 *     on their owner ("then_branch: 12 nodes");
 *  4. terminals for graph inputs and outputs, tensor boxes (initializers=nodes);
 *  5. edges from every link of the DAG between two visible boxes, aggregated per pair;
 *     dotted edges from what folded chains read where nothing else links the two boxes;
 *  6. rows and sizes; then long edges are cut into a pair of labelled stubs.
 */
#include "render/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Boxes: 200,000 in a layout of 1,000 ranks took 5.1 s and 1.3 GB (docs/bench.md "Big
 * layouts"); --layout-memory bounds the worker below that.  Ranks: Graphviz 2.42's dot
 * crashes in mincross ("out of memory", then SIGSEGV) on drawings deeper than about
 * 32,767 ranks (a chain of 32,700 laid out, one of 32,800 crashed: a 16-bit count, it
 * seems), so deeper views are laid out in bands (layout.c, OXR_BAND_RANKS), or refused with
 * a reason when they have clusters, instead of a killed worker. */
#define VIEW_MAX_BOXES 200000u
#define LONG_SPAN_MIN_BOXES 200u  /* only graphs this big get long edges cut */
#define LONG_SPAN 24u             /* ranks an edge may span before it is cut */

oxr_code oxr__fail(oxr_error *err, oxr_code code, const char *fmt, ...)
{
	if (err != NULL) {
		err->code = code;
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->message, sizeof(err->message), fmt, ap);
		va_end(ap);
	}
	return code;
}

uint32_t oxr__view_add_box(view *v, bx_kind kind, oxr_error *err)
{
	if (v->nboxes >= v->max_boxes) {
		oxr__fail(err, OXR_E_TOO_BIG,
		          "the view has more than %u boxes; use the overview (group=auto) or expand "
		          "fewer scopes",
		          v->max_boxes);
		return OXP_NONE;
	}
	if (v->nboxes == v->capboxes) {
		uint32_t cap = v->capboxes ? v->capboxes * 2 : 256;
		vbox *nb = realloc(v->boxes, (size_t)cap * sizeof(vbox));
		if (nb == NULL) {
			oxr__fail(err, OXR_E_NOMEM, "out of memory");
			return OXP_NONE;
		}
		v->boxes = nb;
		v->capboxes = cap;
	}
	vbox *b = &v->boxes[v->nboxes];
	memset(b, 0, sizeof(*b));
	b->kind = kind;
	b->node = b->value = b->group = b->cluster = b->peer = OXP_NONE;
	return v->nboxes++;
}

uint32_t oxr__view_add_cluster(view *v, uint32_t parent, oxr_error *err)
{
	if (v->nclusters == v->capclusters) {
		uint32_t cap = v->capclusters ? v->capclusters * 2 : 32;
		vcluster *nc = realloc(v->clusters, (size_t)cap * sizeof(vcluster));
		if (nc == NULL) {
			oxr__fail(err, OXR_E_NOMEM, "out of memory");
			return OXP_NONE;
		}
		v->clusters = nc;
		v->capclusters = cap;
	}
	vcluster *c = &v->clusters[v->nclusters];
	memset(c, 0, sizeof(*c));
	c->parent = parent;
	c->scope = c->group = OXP_NONE;
	c->id = oxp_arena_printf(v->arena, "c%u", v->nclusters);
	return v->nclusters++;
}

/* ---------------------------------------------------------------------------------------
 * Edges, aggregated per (from, to) with a hash table
 */
typedef struct edgemap {
	uint32_t *slots;
	uint32_t cap;
	uint64_t *pairs; /* set of (edge << 32 | value): distinct values per edge */
	size_t npairs, pcap;
} edgemap;

#define PAIR_EMPTY UINT64_MAX

/* Adds (edge, value) to the set: 1 when new, 0 when there already, -1 when out of
 * memory. */
static int pair_add(edgemap *m, uint32_t edge, uint32_t value)
{
	if ((m->npairs + 1) * 2 > m->pcap) {
		size_t ncap = m->pcap ? m->pcap * 2 : 1024;
		uint64_t *np = malloc(ncap * sizeof(uint64_t));
		if (np == NULL)
			return -1;
		memset(np, 0xff, ncap * sizeof(uint64_t));
		for (size_t i = 0; i < m->pcap; i++) {
			if (m->pairs[i] == PAIR_EMPTY)
				continue;
			size_t j = (size_t)(m->pairs[i] * 0x9e3779b97f4a7c15ull >> 20) & (ncap - 1);
			while (np[j] != PAIR_EMPTY)
				j = (j + 1) & (ncap - 1);
			np[j] = m->pairs[i];
		}
		free(m->pairs);
		m->pairs = np;
		m->pcap = ncap;
	}
	uint64_t key = (uint64_t)edge << 32 | value;
	size_t j = (size_t)(key * 0x9e3779b97f4a7c15ull >> 20) & (m->pcap - 1);
	while (m->pairs[j] != PAIR_EMPTY) {
		if (m->pairs[j] == key)
			return 0;
		j = (j + 1) & (m->pcap - 1);
	}
	m->pairs[j] = key;
	m->npairs++;
	return 1;
}

static uint32_t pair_hash(uint32_t a, uint32_t b)
{
	uint64_t h = ((uint64_t)a << 32 | b) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 32);
}

static oxr_code edge_add(view *v, edgemap *m, uint32_t from, uint32_t to, uint32_t value,
                         uint8_t style, oxr_error *err)
{
	if (from == to)
		return OXR_OK;
	if ((uint64_t)(v->nedges + 1) * 2 > m->cap) {
		uint32_t ncap = m->cap ? m->cap * 2 : 1024;
		uint32_t *ns = malloc((size_t)ncap * sizeof(uint32_t));
		if (ns == NULL)
			return oxr__fail(err, OXR_E_NOMEM, "out of memory");
		memset(ns, 0xff, (size_t)ncap * sizeof(uint32_t));
		for (uint32_t e = 0; e < v->nedges; e++) {
			uint32_t i = pair_hash(v->edges[e].from, v->edges[e].to) & (ncap - 1);
			while (ns[i] != OXP_NONE)
				i = (i + 1) & (ncap - 1);
			ns[i] = e;
		}
		free(m->slots);
		m->slots = ns;
		m->cap = ncap;
	}
	uint32_t i = pair_hash(from, to) & (m->cap - 1);
	while (m->slots[i] != OXP_NONE) {
		vedge *e = &v->edges[m->slots[i]];
		if (e->from == from && e->to == to) {
			/* one more distinct value on this edge (a value used twice by one node, or
			 * by several nodes inside one group, still counts once) */
			if (value != OXP_NONE && value != e->value) {
				int added = pair_add(m, m->slots[i], value);
				if (added < 0)
					return oxr__fail(err, OXR_E_NOMEM, "out of memory");
				e->count += (uint32_t)added;
			}
			if (style == ED_DATA)
				e->style = ED_DATA;
			return OXR_OK;
		}
		i = (i + 1) & (m->cap - 1);
	}
	if (v->nedges == v->capedges) {
		uint32_t cap = v->capedges ? v->capedges * 2 : 512;
		vedge *ne = realloc(v->edges, (size_t)cap * sizeof(vedge));
		if (ne == NULL)
			return oxr__fail(err, OXR_E_NOMEM, "out of memory");
		v->edges = ne;
		v->capedges = cap;
	}
	vedge *e = &v->edges[v->nedges];
	memset(e, 0, sizeof(*e));
	e->from = from;
	e->to = to;
	e->value = value;
	e->count = 1;
	e->style = style;
	m->slots[i] = v->nedges++;
	if (value != OXP_NONE && pair_add(m, m->slots[i], value) < 0)
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	return OXR_OK;
}

/* ---------------------------------------------------------------------------------------
 * Boxes
 */
static uint32_t op_box(view *v, uint32_t ni, uint32_t cluster, oxr_error *err)
{
	uint32_t bi = oxr__view_add_box(v, BX_OP, err);
	if (bi == OXP_NONE)
		return bi;
	vbox *b = &v->boxes[bi];
	const oxp_node *n = v->dv->nodes[ni].proto;
	b->node = ni;
	b->cluster = cluster;
	b->family = oxr__op_family(n->domain, n->op_type);
	b->id = v->dv->nodes[ni].id;
	v->node_box[ni] = bi;
	return bi;
}

static uint32_t terminal(view *v, bx_kind kind, uint32_t vi, uint32_t cluster, oxr_error *err)
{
	uint32_t bi = oxr__view_add_box(v, kind, err);
	if (bi == OXP_NONE)
		return bi;
	vbox *b = &v->boxes[bi];
	b->value = vi;
	b->cluster = cluster;
	b->family = FAM_IO;
	const char *prefix = kind == BX_INPUT ? "i" : kind == BX_OUTPUT ? "o" : "t";
	b->id = oxp_arena_printf(v->arena, "%s%u", prefix, vi);
	return bi;
}

typedef struct vstate {
	uint32_t *value_box;  /* input/tensor/missing box per value */
	uint32_t *out_box;    /* output terminal per value (in its scope) */
	edgemap em;
} vstate;

/* The box a value comes from, creating terminals lazily; OXP_NONE when it is not drawn
 * (folded, hidden, or inside something collapsed). */
static uint32_t source_box(view *v, vstate *st, uint32_t vi, uint32_t cluster_hint,
                           oxr_error *err, bool *failed)
{
	const oxp_value *val = &v->dv->values[vi];
	switch (val->kind) {
	case OXP_VALUE_NODE_OUTPUT:
		if (v->node_hidden[val->producer])
			return OXP_NONE;
		return v->node_box[val->producer];
	case OXP_VALUE_INITIALIZER:
	case OXP_VALUE_SPARSE_INITIALIZER:
		if (v->o.initializers != OXR_INIT_NODES)
			return OXP_NONE;
		if (st->value_box[vi] == OXP_NONE) {
			uint32_t bi = terminal(v, BX_TENSOR, vi, cluster_hint, err);
			if (bi == OXP_NONE) {
				*failed = true;
				return OXP_NONE;
			}
			v->boxes[bi].family = FAM_CONST;
			st->value_box[vi] = bi;
		}
		return st->value_box[vi];
	case OXP_VALUE_INPUT:
	case OXP_VALUE_UNDEFINED:
		if (oxr__io_row(v, vi))
			return OXP_NONE; /* a row of its consumer (family.c) */
		if (st->value_box[vi] == OXP_NONE) {
			uint32_t fb;
			if (oxr__io_box(v, vi, &fb, err) != OXR_OK) {
				*failed = true;
				return OXP_NONE;
			}
			if (fb != OXP_NONE) { /* the terminal of its family */
				st->value_box[vi] = fb;
				return fb;
			}
			uint32_t bi = terminal(v, BX_INPUT, vi, cluster_hint, err);
			if (bi == OXP_NONE) {
				*failed = true;
				return OXP_NONE;
			}
			v->boxes[bi].missing = val->kind == OXP_VALUE_UNDEFINED;
			st->value_box[vi] = bi;
		}
		return st->value_box[vi];
	}
	return OXP_NONE;
}

/* hide=: the walk that bridges a hidden node's edges (hide.c).  Marks are stamps (one per
 * walk, no clearing); the budget bounds the visits of all walks together, since a long
 * chain of hidden nodes read by many consumers is walked once per consumer. */
typedef struct bridging {
	uint32_t *stamp;  /* per value: the walk that last visited it */
	uint32_t *stack;  /* values to visit */
	uint32_t walk;
	uint64_t budget;
} bridging;

#define BRIDGE_BUDGET_MIN ((uint64_t)1 << 22)
#define BRIDGE_BUDGET_PER 64u

/* Edges to box `to` from whatever draws the values behind value vi (produced by a hidden
 * node): the inputs of hidden nodes followed back to drawn boxes.  Values drawn nowhere
 * (folded, collapsed) give no edge. */
static oxr_code bridge(view *v, vstate *st, bridging *br, uint32_t vi, uint32_t to,
                       oxr_error *err)
{
	const oxp_dag_view *dv = v->dv;
	if (br->stamp == NULL) {
		br->stamp = calloc(dv->nvalues ? dv->nvalues : 1, sizeof(uint32_t));
		br->stack = malloc((size_t)(dv->nvalues ? dv->nvalues : 1) * sizeof(uint32_t));
		br->budget = BRIDGE_BUDGET_MIN + BRIDGE_BUDGET_PER * ((uint64_t)dv->nnodes + dv->nedges);
		if (br->stamp == NULL || br->stack == NULL)
			return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	}
	br->walk++;
	uint32_t sp = 0;
	br->stamp[vi] = br->walk;
	br->stack[sp++] = vi;
	while (sp > 0) {
		uint32_t cur = br->stack[--sp];
		if (br->budget-- == 0)
			return oxr__fail(err, OXR_E_TOO_BIG,
			                 "hide= leaves chains of hidden nodes too long to bridge; hide "
			                 "fewer op types");
		uint32_t p = dv->values[cur].producer;
		if (!oxr__op_hidden(v, p)) {
			bool failed = false;
			uint32_t from = source_box(v, st, cur, v->boxes[to].cluster, err, &failed);
			if (failed)
				return err ? err->code : OXR_E_NOMEM;
			if (from != OXP_NONE) {
				oxr_code rc = edge_add(v, &st->em, from, to, cur, ED_DATA, err);
				if (rc != OXR_OK)
					return rc;
			}
			continue;
		}
		const oxp_dnode *dn = &dv->nodes[p];
		for (size_t k = 0; k < dn->proto->ninputs; k++) {
			uint32_t in = dn->inputs[k];
			if (in == OXP_NONE || br->stamp[in] == br->walk)
				continue;
			br->stamp[in] = br->walk; /* each value pushed once: the stack holds nvalues */
			br->stack[sp++] = in;
		}
	}
	return OXR_OK;
}

/* Boxes for the nodes of a scope drawn flat (subgraph bodies), in cluster c. */
static oxr_code scope_boxes(view *v, uint32_t si, uint32_t c, oxr_error *err)
{
	const oxp_scope *s = &v->dv->scopes[si];
	for (uint32_t k = 0; k < s->nnodes; k++) {
		uint32_t ni = s->first_node + k;
		if (v->node_hidden[ni] || oxr__quant_joined(v, ni) || oxr__fusion_joined(v, ni))
			continue;
		if (op_box(v, ni, c, err) == OXP_NONE)
			return err ? err->code : OXR_E_NOMEM;
	}
	return OXR_OK;
}

/* Subgraph clusters below every visible box with subgraphs, breadth-first (the box list
 * grows while it is walked). */
static oxr_code expand_subgraphs(view *v, vstate *st, oxr_error *err)
{
	for (uint32_t bi = 0; bi < v->nboxes; bi++) {
		if (v->boxes[bi].kind != BX_OP)
			continue;
		uint32_t ni = v->boxes[bi].node;
		const oxp_dnode *dn = &v->dv->nodes[ni];
		for (uint32_t k = 0; k < dn->nsubscopes; k++) {
			uint32_t si = dn->first_subscope + k;
			const oxp_scope *s = &v->dv->scopes[si];
			uint32_t ci = oxr__view_add_cluster(v, v->boxes[bi].cluster, err);
			if (ci == OXP_NONE)
				return err ? err->code : OXR_E_NOMEM;
			vcluster *c = &v->clusters[ci];
			c->kind = CL_SUBGRAPH;
			c->scope = si;
			c->label = oxp_arena_printf(v->arena, "%s \xc2\xb7 %s",
			                            oxr__text(v->arena, dn->proto->op_type, 24),
			                            s->attr ? s->attr : "graph");
			c->title = s->id;
			c->owner = bi;
			oxr_code rc;
			for (uint32_t i = 0; i < s->ninputs; i++) {
				uint32_t vi = s->inputs[i];
				if (vi == OXP_NONE || v->dv->values[vi].kind != OXP_VALUE_INPUT)
					continue;
				uint32_t tb = terminal(v, BX_INPUT, vi, ci, err);
				if (tb == OXP_NONE)
					return err ? err->code : OXR_E_NOMEM;
				st->value_box[vi] = tb;
			}
			rc = scope_boxes(v, si, ci, err);
			if (rc != OXR_OK)
				return rc;
		}
	}
	return OXR_OK;
}

static oxr_code outputs_of_scope(view *v, vstate *st, uint32_t si, uint32_t cluster,
                                 oxr_error *err)
{
	const oxp_scope *s = &v->dv->scopes[si];
	for (uint32_t i = 0; i < s->noutputs; i++) {
		uint32_t vi = s->outputs[i];
		if (vi == OXP_NONE || st->out_box[vi] != OXP_NONE || (si == 0 && oxr__io_row(v, vi)))
			continue;
		bool failed = false;
		uint32_t src = source_box(v, st, vi, cluster, err, &failed);
		if (failed)
			return err ? err->code : OXR_E_NOMEM;
		uint32_t ob = OXP_NONE;
		if (si == 0 && oxr__io_box(v, vi, &ob, err) != OXR_OK)
			return err ? err->code : OXR_E_NOMEM;
		if (ob == OXP_NONE)
			ob = terminal(v, BX_OUTPUT, vi, cluster, err);
		if (ob == OXP_NONE)
			return err ? err->code : OXR_E_NOMEM;
		st->out_box[vi] = ob;
		if (src != OXP_NONE) {
			oxr_code rc = edge_add(v, &st->em, src, ob, vi, ED_DATA, err);
			if (rc != OXR_OK)
				return rc;
		}
	}
	return OXR_OK;
}

/* ---------------------------------------------------------------------------------------
 * Rows
 */
static oxr_code op_box_rows(view *v, uint32_t bi, oxr_error *err)
{
	oxr_code rc = oxr__op_rows(v, bi, err);
	if (rc != OXR_OK || oxr__fusion_rows(v, bi))
		return rc;
	oxr__quant_rows(v, bi);
	vbox *b = &v->boxes[bi];
	const oxp_dnode *dn = &v->dv->nodes[b->node];
	if (v->cost != NULL) {
		const char *macs = oxr__macs_text(v, &v->cost->nodes[b->node].macs, "");
		if (macs != NULL)
			oxr__add_row(v, b, ROW_SUB, macs);
	}
	oxr__fold_rows(v, bi);
	oxr__io_rows(v, bi); /* graph inputs and outputs drawn as its rows */
	/* subgraphs, when collapsed */
	if (!v->o.subgraphs_expand) {
		for (uint32_t k = 0; k < dn->nsubscopes; k++) {
			const oxp_scope *s = &v->dv->scopes[dn->first_subscope + k];
			oxr__add_row(v, b, ROW_SUB,
			             oxp_arena_printf(v->arena, "%s: %u nodes", s->attr ? s->attr : "graph",
			                              s->nnodes));
		}
	}
	return OXR_OK;
}

static void terminal_rows(view *v, vbox *b)
{
	if (b->value == OXP_NONE)
		return; /* subgraph entry: its row is set already */
	if (oxr__io_terminal_rows(v, (uint32_t)(b - v->boxes)))
		return; /* a family of inputs or outputs */
	const oxp_value *val = &v->dv->values[b->value];
	const char *name = oxr__text(v->arena, val->name, 36);
	b->title = oxr__text(v->arena, val->name, 200);
	if (b->kind == BX_TENSOR) {
		const oxp_tensor *t = val->initializer ? val->initializer
		                                       : val->sparse_initializer
		                                             ? val->sparse_initializer->values
		                                             : NULL;
		oxr__add_row(v, b, ROW_PLAIN, name);
		if (t != NULL)
			oxr__add_row(v, b, ROW_TENSOR, oxr__tensor_row(v->arena, "", t));
		return;
	}
	oxr__add_row(v, b, ROW_PLAIN, b->missing ? oxp_arena_printf(v->arena, "? %s", name) : name);
	const char *sh = oxr__shape_text(v->arena, val);
	if (sh != NULL)
		oxr__add_row(v, b, ROW_TENSOR, sh);
}

/* ---------------------------------------------------------------------------------------
 * Long edges
 */
/* Ranks "as late as possible": a box sits just above its earliest consumer.  This is the
 * proxy for where dot's ranking ends up once long edges are cut: a side chain (a shape
 * computation from a graph input, say) hangs just above the node it feeds, and the edge
 * into it from far above is the long one, cut into stubs.  Boxes on cycles keep rank 0. */
static oxr_code compute_ranks(view *v)
{
	uint32_t n = v->nboxes;
	uint32_t *outdeg = calloc(n, sizeof(uint32_t));
	uint32_t *first = malloc((size_t)n * sizeof(uint32_t));  /* in-edges per box */
	uint32_t *next = malloc((size_t)(v->nedges ? v->nedges : 1) * sizeof(uint32_t));
	uint32_t *queue = malloc((size_t)n * sizeof(uint32_t));
	uint32_t *height = calloc(n, sizeof(uint32_t));         /* longest path to a sink */
	if (!outdeg || !first || !next || !queue || !height) {
		free(outdeg);
		free(first);
		free(next);
		free(queue);
		free(height);
		return OXR_E_NOMEM;
	}
	memset(first, 0xff, (size_t)n * sizeof(uint32_t));
	for (uint32_t e = 0; e < v->nedges; e++) {
		next[e] = first[v->edges[e].to];
		first[v->edges[e].to] = e;
		outdeg[v->edges[e].from]++;
	}
	uint32_t head = 0, tail = 0, maxh = 0;
	for (uint32_t b = 0; b < n; b++)
		if (outdeg[b] == 0)
			queue[tail++] = b;
	while (head < tail) {
		uint32_t b = queue[head++];
		if (height[b] > maxh)
			maxh = height[b];
		for (uint32_t e = first[b]; e != OXP_NONE; e = next[e]) {
			uint32_t f = v->edges[e].from;
			if (height[f] < height[b] + 1)
				height[f] = height[b] + 1;
			if (--outdeg[f] == 0)
				queue[tail++] = f;
		}
	}
	for (uint32_t b = 0; b < n; b++)
		v->boxes[b].rank = maxh - (height[b] < maxh ? height[b] : maxh);
	free(outdeg);
	free(first);
	free(next);
	free(queue);
	free(height);
	return OXR_OK;
}

/* Union-find over boxes. */
static uint32_t uf_find(uint32_t *up, uint32_t x)
{
	while (up[x] != x) {
		up[x] = up[up[x]];
		x = up[x];
	}
	return x;
}

typedef struct span_edge {
	uint32_t edge, span;
} span_edge;

static int by_span(const void *a, const void *b)
{
	const span_edge *x = a, *y = b;
	if (x->span != y->span)
		return x->span < y->span ? -1 : 1;
	return (x->edge > y->edge) - (x->edge < y->edge);
}

/* Which data edges to cut: those spanning more than LONG_SPAN ranks, except where cutting
 * would leave a part of the drawing hanging on nothing but stubs: such a part (a chain
 * from a side output to a graph output, say) has no edge left to place it, and dot would
 * put it at the top.  The long edges are considered shortest first; one that joins two
 * parts otherwise apart is kept.  false when out of memory. */
static bool choose_cuts(const view *v, bool *cut_it)
{
	uint32_t *up = malloc((size_t)v->nboxes * sizeof(uint32_t));
	span_edge *cand = malloc((size_t)v->nedges * sizeof(span_edge));
	if (up == NULL || cand == NULL) {
		free(up);
		free(cand);
		return false;
	}
	for (uint32_t b = 0; b < v->nboxes; b++)
		up[b] = b;
	uint32_t nc = 0;
	for (uint32_t e = 0; e < v->nedges; e++) {
		const vedge *ed = &v->edges[e];
		uint32_t rf = v->boxes[ed->from].rank, rt = v->boxes[ed->to].rank;
		bool data = ed->style == ED_DATA || ed->style == ED_OUTER || ed->style == ED_READS;
		if (data && rt > rf && rt - rf > LONG_SPAN) {
			cand[nc].edge = e;
			cand[nc].span = rt - rf;
			nc++;
		} else {
			up[uf_find(up, ed->from)] = uf_find(up, ed->to);
		}
	}
	qsort(cand, nc, sizeof(*cand), by_span);
	for (uint32_t k = 0; k < nc; k++) {
		const vedge *ed = &v->edges[cand[k].edge];
		uint32_t a = uf_find(up, ed->from), b = uf_find(up, ed->to);
		if (a != b)
			up[a] = b; /* the only link between two parts: keep it */
		else
			cut_it[cand[k].edge] = true;
	}
	free(up);
	free(cand);
	return true;
}

static oxr_code cut_long_edges(view *v, vstate *st, oxr_error *err)
{
	if (v->nboxes < LONG_SPAN_MIN_BOXES || v->nedges == 0)
		return OXR_OK;
	if (compute_ranks(v) != OXR_OK)
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	uint32_t nedges = v->nedges;
	/* one "x →" stub per (source box, value) */
	uint32_t *stub_of = malloc((size_t)nedges * sizeof(uint32_t));
	uint32_t scap = 64;
	while (scap < nedges * 2u && scap < (1u << 30))
		scap <<= 1;
	uint32_t *skey = malloc((size_t)scap * sizeof(uint32_t)); /* (from, value) -> edge */
	if (stub_of == NULL || skey == NULL) {
		free(stub_of);
		free(skey);
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	}
	memset(skey, 0xff, (size_t)scap * sizeof(uint32_t));
	bool *cut_it = calloc(nedges, sizeof(bool));
	if (cut_it == NULL || !choose_cuts(v, cut_it)) {
		free(stub_of);
		free(skey);
		free(cut_it);
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	}
	uint32_t cut = 0;
	for (uint32_t e = 0; e < nedges; e++) {
		stub_of[e] = OXP_NONE;
		vedge *ed = &v->edges[e];
		if (!cut_it[e])
			continue;
		/* shared stub: an earlier cut edge from the same box with the same value */
		uint32_t so = OXP_NONE;
		uint32_t h = pair_hash(ed->from, ed->value) & (scap - 1);
		while (skey[h] != OXP_NONE) {
			/* the earlier edge now starts at its stub-in: compare with its producer, the
			 * stub-out's peer */
			if (v->boxes[stub_of[skey[h]]].peer == ed->from &&
			    v->edges[skey[h]].value == ed->value) {
				so = stub_of[skey[h]];
				break;
			}
			h = (h + 1) & (scap - 1);
		}
		if (so == OXP_NONE)
			skey[h] = e;
		const char *vname = ed->value != OXP_NONE
		                        ? oxr__text_tail(v->arena, v->dv->values[ed->value].name, 24)
		                        : "";
		if (so == OXP_NONE) {
			so = oxr__view_add_box(v, BX_STUB_OUT, err);
			if (so == OXP_NONE)
				goto fail;
			vbox *sb = &v->boxes[so];
			sb->value = ed->value;
			sb->peer = ed->from;
			sb->cluster = v->boxes[ed->from].cluster;
			sb->family = FAM_IO;
			sb->id = oxp_arena_printf(v->arena, "s%u", so);
			oxr__add_row(v, sb, ROW_PLAIN, oxp_arena_printf(v->arena, "%s \xe2\x86\x92", vname));
			sb->title = vname;
			if (edge_add(v, &st->em, ed->from, so, ed->value, ED_STUB, err) != OXR_OK)
				goto fail;
			ed = &v->edges[e]; /* edges may have moved */
		}
		stub_of[e] = so;
		uint32_t si = oxr__view_add_box(v, BX_STUB_IN, err);
		if (si == OXP_NONE)
			goto fail;
		vbox *ib = &v->boxes[si];
		ib->value = ed->value;
		ib->peer = ed->from;
		ib->cluster = v->boxes[ed->to].cluster;
		ib->family = FAM_IO;
		ib->id = oxp_arena_printf(v->arena, "s%u", si);
		oxr__add_row(v, ib, ROW_PLAIN, oxp_arena_printf(v->arena, "\xe2\x86\x92 %s", vname));
		ib->title = vname;
		/* the edge now runs from the incoming stub */
		ed = &v->edges[e];
		ed->from = si;
		ed->style = ED_STUB;
		cut++;
	}
	free(stub_of);
	free(skey);
	free(cut_it);
	(void)cut;
	return OXR_OK;
fail:
	free(stub_of);
	free(skey);
	free(cut_it);
	return err ? err->code : OXR_E_NOMEM;
}

/* ---------------------------------------------------------------------------------------
 */
oxr_code oxr__view_build(view *v, const oxp_model *m, const oxp_dag *d, const oxr_options *o,
                         const oxr_overlay *ov, oxr_error *err)
{
	memset(v, 0, sizeof(*v));
	v->ov = ov;
	v->m = m;
	v->d = d;
	v->dv = oxp_dag_get(d);
	v->o = *o;
	v->max_boxes = VIEW_MAX_BOXES;
	v->arena = oxp_arena_new((size_t)1 << 30);
	uint32_t nn = v->dv->nnodes, nv = v->dv->nvalues;
	v->node_box = malloc((size_t)(nn ? nn : 1) * sizeof(uint32_t));
	v->node_cluster = malloc((size_t)(nn ? nn : 1) * sizeof(uint32_t));
	v->node_hidden = calloc(nn ? nn : 1, sizeof(bool));
	if (ov != NULL && ov->heat != NULL) {
		v->node_rep = malloc((size_t)(nn ? nn : 1) * sizeof(uint32_t));
		if (v->node_rep != NULL)
			memset(v->node_rep, 0xff, (size_t)(nn ? nn : 1) * sizeof(uint32_t));
	}
	vstate st = {0};
	bridging br = {0};
	fold_read *reads = NULL; /* chains' reads of drawn values: dotted edge candidates */
	uint32_t nreads = 0, capreads = 0;
	bool *reached = NULL;
	st.value_box = malloc((size_t)(nv ? nv : 1) * sizeof(uint32_t));
	st.out_box = malloc((size_t)(nv ? nv : 1) * sizeof(uint32_t));
	oxr_code rc = OXR_OK;
	if (v->arena == NULL || !v->node_box || !v->node_cluster || !v->node_hidden ||
	    !st.value_box || !st.out_box || (ov != NULL && ov->heat != NULL && !v->node_rep)) {
		rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
		goto out;
	}
	memset(v->node_box, 0xff, (size_t)(nn ? nn : 1) * sizeof(uint32_t));
	memset(v->node_cluster, 0xff, (size_t)(nn ? nn : 1) * sizeof(uint32_t));
	memset(st.value_box, 0xff, (size_t)(nv ? nv : 1) * sizeof(uint32_t));
	memset(st.out_box, 0xff, (size_t)(nv ? nv : 1) * sizeof(uint32_t));

	if (v->dv->nscopes == 0 || v->dv->scopes[0].kind != OXP_SCOPE_MAIN) {
		rc = oxr__fail(err, OXR_E_MODEL, "the model has no main graph to draw");
		goto out;
	}
	rc = oxr__fold_mark(v, err);
	if (rc == OXR_OK) /* after folding: a weight's DequantizeLinear may be folded already */
		rc = oxr__quant_mark(v, err);
	if (rc == OXR_OK)
		rc = oxr__fusion_mark(v, err);
	if (rc == OXR_OK)
		rc = oxr__hide_mark(v, err);
	if (rc != OXR_OK)
		goto out;
	/* MAC rows: a cost that cannot be computed (memory) leaves them out, nothing else */
	oxp_cost_bind bind;
	bool bound = v->o.dims[0] != '\0' && oxp_cost_bind_parse(&bind, v->o.dims, NULL) == OXP_OK;
	v->cost_arena = oxp_arena_new((size_t)512 << 20);
	if (v->cost_arena == NULL ||
	    oxp_cost_compute(d, v->cost_arena, bound ? &bind : NULL, &v->cost, NULL) != OXP_OK)
		v->cost = NULL;

	/* main graph: groups first (they decide which nodes are boxes) */
	rc = oxr__hier_apply(v, 0, err);
	if (rc != OXR_OK)
		goto out;
	const oxp_scope *main = &v->dv->scopes[0];
	for (uint32_t k = 0; k < main->nnodes; k++) {
		uint32_t ni = main->first_node + k;
		if (v->node_hidden[ni] || v->node_box[ni] != OXP_NONE || oxr__quant_joined(v, ni) ||
		    oxr__fusion_joined(v, ni))
			continue;
		if (op_box(v, ni, v->node_cluster[ni], err) == OXP_NONE) {
			rc = err ? err->code : OXR_E_NOMEM;
			goto out;
		}
	}
	rc = oxr__io_mark(v, err); /* families of inputs and outputs, rows */
	if (rc != OXR_OK)
		goto out;
	/* graph inputs in input order, so they line up at the top */
	for (uint32_t i = 0; i < main->ninputs; i++) {
		uint32_t vi = main->inputs[i];
		if (vi == OXP_NONE || v->dv->values[vi].kind != OXP_VALUE_INPUT ||
		    v->dv->values[vi].nconsumers == 0)
			continue;
		bool failed = false;
		(void)source_box(v, &st, vi, OXP_NONE, err, &failed);
		if (failed) {
			rc = err ? err->code : OXR_E_NOMEM;
			goto out;
		}
	}
	if (v->o.subgraphs_expand) {
		rc = expand_subgraphs(v, &st, err);
		if (rc != OXR_OK)
			goto out;
	}
	oxr__quant_link(v); /* quantization plumbing stands behind the box it joins */
	oxr__fusion_link(v); /* so do the nodes of a named pattern */
	/* nodes of subgraphs not drawn stand behind the box of their owner (or its group), so
	 * values they take from outside still arrive at the If/Loop that holds them */
	for (uint32_t ni = 0; ni < v->dv->nnodes; ni++) {
		const oxp_scope *sc = &v->dv->scopes[v->dv->nodes[ni].scope];
		if (v->node_box[ni] != OXP_NONE || sc->kind != OXP_SCOPE_SUBGRAPH)
			continue;
		uint32_t owner = sc->owner;
		if (owner != OXP_NONE && owner < ni)
			v->node_box[ni] = v->node_box[owner];
	}
	/* edges of the DAG between visible boxes */
	for (uint32_t e = 0; e < v->dv->nedges; e++) {
		const oxp_edge *ed = &v->dv->edges[e];
		uint32_t to = v->node_box[ed->dst];
		if (to == OXP_NONE || v->node_hidden[ed->dst] || oxr__quant_skip_edge(v, ed))
			continue;
		if (oxr__op_hidden(v, v->dv->values[ed->value].producer)) {
			rc = bridge(v, &st, &br, ed->value, to, err);
			if (rc != OXR_OK)
				goto out;
			continue;
		}
		bool failed = false;
		uint32_t from = source_box(v, &st, ed->value, v->boxes[to].cluster, err, &failed);
		if (failed) {
			rc = err ? err->code : OXR_E_NOMEM;
			goto out;
		}
		if (from == OXP_NONE) {
			/* a folded chain: the drawn values it reads may need dotted edges */
			const vfold *f = v->fold != NULL ? &v->fold[ed->value] : NULL;
			for (uint32_t k = 0; f != NULL && k < f->nreads; k++) {
				uint32_t rb = source_box(v, &st, f->reads[k], v->boxes[to].cluster, err, &failed);
				if (failed) {
					rc = err ? err->code : OXR_E_NOMEM;
					goto out;
				}
				if (rb == OXP_NONE)
					continue;
				if (nreads == capreads) {
					uint32_t cap = capreads ? capreads * 2 : 64;
					fold_read *nr = realloc(reads, (size_t)cap * sizeof(fold_read));
					if (nr == NULL) {
						rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
						goto out;
					}
					reads = nr;
					capreads = cap;
				}
				reads[nreads++] = (fold_read){rb, to, f->reads[k]};
			}
			continue;
		}
		rc = edge_add(v, &st.em, from, to, oxr__quant_edge_value(v, ed),
		              ed->outer ? ED_OUTER : ED_DATA, err);
		if (rc != OXR_OK)
			goto out;
	}
	rc = outputs_of_scope(v, &st, 0, OXP_NONE, err);
	if (rc != OXR_OK)
		goto out;
	for (uint32_t c = 0; c < v->nclusters; c++)
		if (v->clusters[c].kind == CL_SUBGRAPH) {
			rc = outputs_of_scope(v, &st, v->clusters[c].scope, c, err);
			if (rc != OXR_OK)
				goto out;
		}
	/* every subgraph hangs below the node that holds it: an edge from the owner to each box
	 * of the cluster that nothing else in the cluster feeds (the first one drawn dotted,
	 * the others only constraints) */
	if (v->nclusters > 0) {
		bool *fed = calloc(v->nboxes ? v->nboxes : 1, sizeof(bool));
		if (fed == NULL) {
			rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
			goto out;
		}
		for (uint32_t e = 0; e < v->nedges; e++)
			if (v->boxes[v->edges[e].from].cluster == v->boxes[v->edges[e].to].cluster)
				fed[v->edges[e].to] = true;
		uint32_t nb = v->nboxes;
		for (uint32_t c = 0; c < v->nclusters && rc == OXR_OK; c++) {
			if (v->clusters[c].kind != CL_SUBGRAPH)
				continue;
			bool first = true;
			for (uint32_t b = 0; b < nb && rc == OXR_OK; b++) {
				if (v->boxes[b].cluster != c || fed[b])
					continue;
				uint32_t before = v->nedges;
				rc = edge_add(v, &st.em, v->clusters[c].owner, b, OXP_NONE, ED_SUB, err);
				if (rc == OXR_OK && v->nedges > before) {
					v->edges[before].invisible = !first;
					first = false;
				}
			}
		}
		free(fed);
		if (rc != OXR_OK)
			goto out;
	}
	/* dotted edges for what folded chains read, where nothing else links the two boxes */
	if (nreads > 0) {
		reached = calloc(nreads, sizeof(bool));
		if (reached == NULL || !oxr__fold_reached(v, reads, nreads, reached)) {
			rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
			goto out;
		}
		for (uint32_t k = 0; k < nreads && rc == OXR_OK; k++)
			if (!reached[k])
				rc = edge_add(v, &st.em, reads[k].from, reads[k].to, reads[k].value, ED_READS,
				              err);
		if (rc != OXR_OK)
			goto out;
	}
	/* labels of edges: the shape of the value carried, once per value leaving a box (it
	 * is written where the edges leave it, so several consumers share one label) */
	edgemap seen = {0};
	for (uint32_t e = 0; e < v->nedges; e++) {
		vedge *ed = &v->edges[e];
		if (!v->o.shapes || ed->value == OXP_NONE || ed->style == ED_READS ||
		    oxr__io_family_box(v, ed->from) || oxr__io_family_box(v, ed->to))
			continue; /* a family's terminal says its shape (and count) itself */
		if (ed->count > 1) {
			ed->label = oxp_arena_printf(v->arena, "%u tensors", ed->count);
			continue;
		}
		int added = pair_add(&seen, ed->from, ed->value);
		if (added < 0) {
			free(seen.pairs);
			rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
			goto out;
		}
		if (added)
			ed->label = oxr__shape_text(v->arena, &v->dv->values[ed->value]);
	}
	free(seen.pairs);
	/* rows and sizes */
	for (uint32_t bi = 0; bi < v->nboxes; bi++) {
		vbox *b = &v->boxes[bi];
		if (b->kind == BX_OP) {
			rc = op_box_rows(v, bi, err);
			if (rc != OXR_OK)
				goto out;
		} else if (b->kind != BX_GROUP) {
			terminal_rows(v, b);
		}
	}
	if (v->ov != NULL && (rc = oxr__overlay_apply(v, err)) != OXR_OK)
		goto out;
	rc = cut_long_edges(v, &st, err);
	if (rc != OXR_OK)
		goto out;
	/* what dot will work on: boxes plus a virtual node per rank an edge crosses */
	if (compute_ranks(v) != OXR_OK) {
		rc = oxr__fail(err, OXR_E_NOMEM, "out of memory");
		goto out;
	}
	v->virtual_nodes = 0;
	for (uint32_t e = 0; e < v->nedges; e++) {
		uint32_t rf = v->boxes[v->edges[e].from].rank, rt = v->boxes[v->edges[e].to].rank;
		uint32_t span = rt > rf ? rt - rf : rf - rt;
		if (span > 1)
			v->virtual_nodes += span - 1;
	}
	for (uint32_t bi = 0; bi < v->nboxes; bi++) {
		oxr__box_size(v, &v->boxes[bi]);
		if (v->boxes[bi].rank + 1 > v->nranks)
			v->nranks = v->boxes[bi].rank + 1;
	}
	if (v->nranks > OXR_VIEW_MAX_RANKS && !oxr__layout_banded(v)) {
		rc = oxr__fail(err, OXR_E_TOO_BIG,
		               "the view is %u ranks deep, more than %u (the layout engine fails on "
		               "deeper drawings with clusters); use the overview (group=auto) or "
		               "expand fewer scopes",
		               v->nranks, OXR_VIEW_MAX_RANKS);
		goto out;
	}
out:
	free(reads);
	free(reached);
	free(st.value_box);
	free(st.out_box);
	free(st.em.slots);
	free(br.stamp);
	free(br.stack);
	free(st.em.pairs);
	return rc;
}

void oxr__view_free(view *v)
{
	free(v->boxes);
	free(v->edges);
	free(v->clusters);
	free(v->node_box);
	free(v->node_cluster);
	free(v->node_rep);
	free(v->node_hidden);
	free(v->node_const);
	free(v->node_ophide);
	free(v->fold);
	oxr__io_free(v);
	oxp_arena_free(v->cost_arena);
	oxp_arena_free(v->arena);
	memset(v, 0, sizeof(*v));
}
