/*
 * fold.c — what is not drawn as a box but as a row of the box that consumes it.
 *
 * One mechanism for constants and bookkeeping (docs/render.md, "Folding"):
 *  - constants: Constant nodes, and ConstantOfShape/Identity nodes fed only by constants
 *    (initializers=nodes draws them as boxes);
 *  - bookkeeping (oxp_dnode.bookkeeping: computable without input data — Shape -> Gather
 *    -> Unsqueeze -> Concat chains, index tables, masks), unless arith=nodes;
 * fold into their consumers, except a node whose output is a graph output, and a
 * bookkeeping node nothing consumes (it would vanish).  unfold=<node id> draws the chains
 * feeding a node as boxes again (constants stay rows).
 *
 * A consumer shows one row per folded input: a literal tensor as "W ⟨64×3×7×7⟩ f16"; a
 * computed value with the values the data propagation knows, "shape = [N, 3136, 96] · 14
 * ops", else with its type, "Where_3 ⟨N×49×49⟩ i64 · 40 ops"; the count is the
 * folded nodes behind it.  A chain that reads a drawn value (Shape's input, ...) which
 * does not otherwise reach the consumer gets a thin dotted edge from it (view.c draws
 * it): no dependency disappears silently.
 *
 * Following the chains costs their sizes summed over the values they feed, which a
 * hostile graph can make quadratic: past a budget (FOLD_BUDGET_*, linear in the graph)
 * folding falls back to constants only.  Nothing here recurses.
 */
#include "render/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FOLD_BUDGET_MIN ((uint64_t)1 << 22) /* input visits while following chains */
#define FOLD_BUDGET_PER 64u                 /* ... plus this many per node and edge */
#define REACH_BUDGET ((uint64_t)1 << 22)    /* box visits while testing reachability */

static bool is_std(oxp_str domain)
{
	return domain.len == 0 || oxp_str_eq(domain, "ai.onnx");
}

/* ---------------------------------------------------------------------------------------
 * Which nodes fold
 */
static void mark_constants(view *v)
{
	const oxp_dag_view *dv = v->dv;
	/* node order is topological in valid models; a constant fed by a later node is
	 * simply not folded */
	for (uint32_t ni = 0; ni < dv->nnodes; ni++) {
		const oxp_dnode *dn = &dv->nodes[ni];
		const oxp_node *n = dn->proto;
		bool c = false;
		if (!is_std(n->domain)) {
			c = false;
		} else if (oxp_str_eq(n->op_type, "Constant")) {
			c = true;
		} else if (oxp_str_eq(n->op_type, "ConstantOfShape") ||
		           oxp_str_eq(n->op_type, "Identity")) {
			/* fed only by constants: PyTorch shares weights through Identity nodes */
			c = n->ninputs > 0;
			for (size_t k = 0; k < n->ninputs; k++) {
				uint32_t vi = dn->inputs[k];
				if (vi == OXP_NONE)
					continue;
				const oxp_value *val = &dv->values[vi];
				c &= val->kind == OXP_VALUE_INITIALIZER ||
				     (val->producer != OXP_NONE && val->producer < ni &&
				      v->node_const[val->producer]);
			}
		}
		v->node_const[ni] = c;
	}
}

/* Constants fold unless initializers=nodes; bookkeeping unless arith=nodes (or the chains
 * were too big to follow).  A graph output stays a box; so does a bookkeeping node that
 * nothing consumes (a constant nobody uses may vanish, as it always did). */
static void mark_hidden(view *v, bool bookkeeping)
{
	const oxp_dag_view *dv = v->dv;
	for (uint32_t ni = 0; ni < dv->nnodes; ni++) {
		const oxp_dnode *dn = &dv->nodes[ni];
		bool konst = v->node_const[ni];
		bool fold = konst ? v->o.initializers != OXR_INIT_NODES : bookkeeping && dn->bookkeeping;
		bool used = false;
		for (size_t o = 0; fold && o < dn->proto->noutputs; o++) {
			uint32_t vi = dn->outputs[o];
			if (vi == OXP_NONE)
				continue;
			if (dv->values[vi].graph_output)
				fold = false;
			used |= dv->values[vi].nconsumers > 0;
		}
		v->node_hidden[ni] = fold && (konst || used);
	}
}

/* A folded node that is not a constant: part of a chain unfold= can open. */
static bool in_chain(const view *v, uint32_t ni)
{
	return ni != OXP_NONE && v->node_hidden[ni] && !v->node_const[ni];
}

/* unfold=id,...: the chains feeding each listed node (and the node itself when it is
 * folded) become boxes.  Ids that name no node, or no chain, are ignored. */
static oxr_code unfold(view *v, oxr_error *err)
{
	if (v->o.unfold[0] == '\0')
		return OXR_OK;
	const oxp_dag_view *dv = v->dv;
	uint32_t *stack = malloc((size_t)(dv->nnodes ? dv->nnodes : 1) * sizeof(uint32_t));
	if (stack == NULL)
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	const char *p = v->o.unfold;
	while (*p) {
		size_t n = strcspn(p, ",");
		char id[OXR_UNFOLD_MAX];
		snprintf(id, sizeof(id), "%.*s", (int)n, p);
		p += n + (p[n] == ',');
		uint32_t ni = n > 0 ? oxp_dag_find_node(v->d, id) : OXP_NONE;
		if (ni == OXP_NONE)
			continue;
		uint32_t sp = 0;
		if (in_chain(v, ni))
			v->node_hidden[ni] = false;
		stack[sp++] = ni;
		/* every node is pushed once: it is shown as it is pushed */
		while (sp > 0) {
			const oxp_dnode *dn = &dv->nodes[stack[--sp]];
			for (size_t k = 0; k < dn->proto->ninputs; k++) {
				uint32_t vi = dn->inputs[k];
				if (vi == OXP_NONE || !in_chain(v, dv->values[vi].producer))
					continue;
				v->node_hidden[dv->values[vi].producer] = false;
				stack[sp++] = dv->values[vi].producer;
			}
		}
	}
	free(stack);
	return OXR_OK;
}

/* ---------------------------------------------------------------------------------------
 * Chains: the folded nodes behind a value, and the drawn values they read
 */
typedef struct walk {
	uint32_t *node_mark, *value_mark; /* == gen: seen in this walk */
	uint32_t gen;
	uint32_t *stack;
	uint32_t *reads;
	uint32_t nreads, capreads;
	uint64_t budget;
} walk;

/* Whether value vi is drawn (a box, a terminal or a tensor box) rather than folded. */
static bool drawn(const view *v, uint32_t vi)
{
	const oxp_value *val = &v->dv->values[vi];
	switch (val->kind) {
	case OXP_VALUE_NODE_OUTPUT:
		return val->producer != OXP_NONE && !v->node_hidden[val->producer];
	case OXP_VALUE_INITIALIZER:
	case OXP_VALUE_SPARSE_INITIALIZER:
		return v->o.initializers == OXR_INIT_NODES;
	default:
		return true; /* graph and subgraph inputs, undefined values */
	}
}

/* Fill v->fold[vi] for a value produced by a folded node: 1 done, 0 budget spent, -1 out
 * of memory. */
static int follow(view *v, walk *w, uint32_t vi)
{
	const oxp_dag_view *dv = v->dv;
	if (++w->gen == 0) { /* wrapped: start the marks afresh */
		memset(w->node_mark, 0, (size_t)dv->nnodes * sizeof(uint32_t));
		memset(w->value_mark, 0, (size_t)dv->nvalues * sizeof(uint32_t));
		w->gen = 1;
	}
	uint32_t sp = 0, ops = 0;
	w->nreads = 0;
	uint32_t first = dv->values[vi].producer;
	w->node_mark[first] = w->gen;
	w->stack[sp++] = first;
	while (sp > 0) {
		const oxp_dnode *dn = &dv->nodes[w->stack[--sp]];
		ops++;
		for (size_t k = 0; k < dn->proto->ninputs; k++) {
			if (w->budget == 0)
				return 0;
			w->budget--;
			uint32_t in = dn->inputs[k];
			if (in == OXP_NONE)
				continue;
			uint32_t p = dv->values[in].producer;
			if (dv->values[in].kind == OXP_VALUE_NODE_OUTPUT && p != OXP_NONE &&
			    v->node_hidden[p]) {
				if (w->node_mark[p] != w->gen) {
					w->node_mark[p] = w->gen;
					w->stack[sp++] = p;
				}
			} else if (drawn(v, in) && w->value_mark[in] != w->gen) {
				w->value_mark[in] = w->gen;
				if (w->nreads == w->capreads) {
					uint32_t cap = w->capreads ? w->capreads * 2 : 16;
					uint32_t *nr = realloc(w->reads, (size_t)cap * sizeof(uint32_t));
					if (nr == NULL)
						return -1;
					w->reads = nr;
					w->capreads = cap;
				}
				w->reads[w->nreads++] = in;
			}
		}
	}
	vfold *f = &v->fold[vi];
	f->ops = ops;
	f->nreads = w->nreads;
	if (w->nreads > 0) {
		f->reads = oxp_arena_array(v->arena, w->nreads, sizeof(uint32_t));
		if (f->reads == NULL)
			return -1;
		memcpy(f->reads, w->reads, (size_t)w->nreads * sizeof(uint32_t));
	}
	return 1;
}

/* Follow every chain a drawn node consumes.  1 done, 0 budget spent, -1 out of memory. */
static int follow_all(view *v)
{
	const oxp_dag_view *dv = v->dv;
	walk w = {0};
	w.node_mark = calloc(dv->nnodes ? dv->nnodes : 1, sizeof(uint32_t));
	w.value_mark = calloc(dv->nvalues ? dv->nvalues : 1, sizeof(uint32_t));
	w.stack = malloc((size_t)(dv->nnodes ? dv->nnodes : 1) * sizeof(uint32_t));
	w.budget = FOLD_BUDGET_MIN + FOLD_BUDGET_PER * ((uint64_t)dv->nnodes + dv->nedges);
	int rc = 1;
	if (w.node_mark == NULL || w.value_mark == NULL || w.stack == NULL)
		rc = -1;
	for (uint32_t e = 0; e < dv->nedges && rc == 1; e++) {
		const oxp_edge *ed = &dv->edges[e];
		if (v->node_hidden[ed->dst] || !in_chain(v, dv->values[ed->value].producer) ||
		    v->fold[ed->value].ops > 0)
			continue;
		rc = follow(v, &w, ed->value);
	}
	free(w.node_mark);
	free(w.value_mark);
	free(w.stack);
	free(w.reads);
	return rc;
}

oxr_code oxr__fold_mark(view *v, oxr_error *err)
{
	const oxp_dag_view *dv = v->dv;
	v->node_const = calloc(dv->nnodes ? dv->nnodes : 1, sizeof(bool));
	if (v->node_const == NULL)
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	mark_constants(v);
	mark_hidden(v, !v->o.arith_nodes);
	if (v->o.arith_nodes)
		return OXR_OK;
	oxr_code rc = unfold(v, err);
	if (rc != OXR_OK)
		return rc;
	v->fold = calloc(dv->nvalues ? dv->nvalues : 1, sizeof(vfold));
	if (v->fold == NULL)
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	int done = follow_all(v);
	if (done < 0)
		return oxr__fail(err, OXR_E_NOMEM, "out of memory");
	if (done == 0) {
		/* a graph built so that chains share too much: draw bookkeeping as boxes */
		free(v->fold);
		v->fold = NULL;
		mark_hidden(v, false);
	}
	return OXR_OK;
}

/* ---------------------------------------------------------------------------------------
 * Rows
 */
static const char *short_name(view *v, oxp_str name)
{
	size_t start = 0;
	for (size_t i = 0; i + 1 < name.len; i++)
		if (name.p[i] == '/' || name.p[i] == '.' || name.p[i] == ':')
			start = i + 1;
	return oxr__text(v->arena, (oxp_str){name.p + start, name.len - start}, 18);
}

/* The tensor behind a folded value: an initializer, or a Constant's value, following
 * Identity nodes; NULL for computed values. */
static const oxp_tensor *folded_tensor(const view *v, uint32_t vi)
{
	for (int hops = 0; hops < 64 && vi != OXP_NONE; hops++) {
		const oxp_value *val = &v->dv->values[vi];
		if (val->kind == OXP_VALUE_INITIALIZER)
			return val->initializer;
		if (val->kind == OXP_VALUE_SPARSE_INITIALIZER)
			return val->sparse_initializer->values;
		if (val->producer == OXP_NONE)
			return NULL;
		const oxp_dnode *pn = &v->dv->nodes[val->producer];
		if (oxp_str_eq(pn->proto->op_type, "Constant")) {
			for (size_t a = 0; a < pn->proto->nattrs; a++)
				if (pn->proto->attrs[a].t != NULL)
					return pn->proto->attrs[a].t;
			return NULL;
		}
		if (!oxp_str_eq(pn->proto->op_type, "Identity") || pn->proto->ninputs < 1)
			return NULL;
		vi = pn->inputs[0];
	}
	return NULL;
}

/* Text built from whole pieces: a piece that does not fit is left out with the rest. */
typedef struct line {
	char b[320];
	size_t n;
	bool full;
} line;

static void put(line *l, const char *s)
{
	size_t k = strlen(s);
	if (l->full || l->n + k >= sizeof(l->b)) {
		l->full = true;
		return;
	}
	memcpy(l->b + l->n, s, k);
	l->n += k;
	l->b[l->n] = '\0';
}

static void put_int(line *l, int64_t x)
{
	char num[24];
	snprintf(num, sizeof(num), "%lld", (long long)x);
	put(l, num);
}

#define SHOWN_ELEMS 8

/* "label = [N, 3136, 96]" (a scalar: "label = 4"); false when no element is known. */
static bool put_known(view *v, line *l, const char *label, uint32_t vi)
{
	oxp_known_data kd;
	if (!oxp_dag_value_data(v->d, vi, &kd) || kd.count == 0)
		return false;
	bool any = false;
	for (uint32_t i = 0; i < kd.count; i++)
		any |= kd.elems[i].kind != OXP_DIM_UNKNOWN;
	if (!any)
		return false;
	bool boolean = oxp_value_best_type(&v->dv->values[vi])->elem_type == OXP_DT_BOOL;
	put(l, label);
	put(l, kd.rank == 0 ? " = " : " = [");
	for (uint32_t i = 0; i < kd.count; i++) {
		if (i == SHOWN_ELEMS && kd.count > SHOWN_ELEMS + 1) {
			char more[32];
			snprintf(more, sizeof(more), ", \xe2\x80\xa6(%u)", kd.count);
			put(l, more);
			break;
		}
		if (i)
			put(l, ", ");
		const oxp_dim *d = &kd.elems[i];
		if (d->kind == OXP_DIM_VALUE && boolean)
			put(l, d->value ? "true" : "false");
		else if (d->kind == OXP_DIM_VALUE)
			put_int(l, d->value);
		else if (d->kind == OXP_DIM_PARAM)
			put(l, oxr__text(v->arena, d->param, 12));
		else
			put(l, "?");
	}
	if (kd.rank != 0)
		put(l, "]");
	return true;
}

/* "starts ⟨1⟩ i64", "Unsqueeze_43 ⟨1×64×1×49×49⟩ f32": the input's schema name, except on
 * elementwise math, whose A/B/X/Y say nothing: there the value's name (PyTorch's
 * "<op>_output_0" without its suffix). */
static void put_typed(view *v, line *l, const char *label, const oxp_node *consumer,
                      uint32_t vi)
{
	const oxp_value *val = &v->dv->values[vi];
	if (label != NULL && oxr__op_family(consumer->domain, consumer->op_type) != FAM_MATH) {
		put(l, label);
	} else {
		oxp_str name = val->name;
		static const char suffix[] = "_output_0";
		size_t sn = sizeof(suffix) - 1;
		if (name.len > sn && memcmp(name.p + name.len - sn, suffix, sn) == 0)
			name.len -= sn;
		put(l, short_name(v, name));
	}
	const oxp_value_type *t = oxp_value_best_type(val);
	/* the dims alone: the shape text of the same type without its element type */
	oxp_value dims_only = {0};
	dims_only.inferred = *t;
	dims_only.inferred.elem_type = 0;
	const char *dims = t->source == OXP_SHAPE_NONE || t->rank < 0 ? NULL
	                   : t->rank == 0                             ? "" /* as tensor rows */
	                                                              : oxr__shape_text(v->arena, &dims_only);
	put(l, " \xe2\x9f\xa8"); /* ⟨ */
	put(l, dims ? dims : "?");
	put(l, "\xe2\x9f\xa9"); /* ⟩ */
	if (t->elem_type != 0) {
		put(l, " ");
		put(l, oxp_dtype_short(t->elem_type));
	}
}

/* The row of a value computed by a folded chain, input k of consumer n (dag node node). */
static const char *chain_row(view *v, uint32_t node, const oxp_node *n, size_t k, uint32_t vi)
{
	line l = {.n = 0, .full = false};
	l.b[0] = '\0';
	const char *label = oxr__input_label(v, node, k);
	if (!put_known(v, &l, label ? label : short_name(v, v->dv->values[vi].name), vi)) {
		l.n = 0;
		l.b[0] = '\0';
		l.full = false;
		put_typed(v, &l, label, n, vi);
	}
	char count[40];
	snprintf(count, sizeof(count), " \xc2\xb7 %u op%s", v->fold[vi].ops,
	         v->fold[vi].ops == 1 ? "" : "s"); /* · */
	if (l.full || l.n + strlen(count) >= sizeof(l.b)) {
		/* keep the count: cut whole characters until it fits, never past what was
		 * written (a piece that did not fit left l.n short of the end); also when the
		 * text fitted but the count would not */
		size_t keep = sizeof(l.b) - strlen(count) - 4;
		if (keep > l.n)
			keep = l.n;
		while (keep > 0 && ((unsigned char)l.b[keep] & 0xc0) == 0x80)
			keep--;
		l.n = keep;
		l.b[l.n] = '\0';
		l.full = false;
		put(&l, "\xe2\x80\xa6");
	}
	put(&l, count);
	return oxp_arena_strndup(v->arena, l.b, l.n);
}

#define MAX_FOLDED_ROWS 8

void oxr__fold_rows(view *v, uint32_t bi)
{
	vbox *b = &v->boxes[bi];
	const oxp_dnode *dn = &v->dv->nodes[b->node];
	const oxp_node *n = dn->proto;
	uint32_t rows = 0;
	for (size_t k = 0; k < n->ninputs; k++) {
		uint32_t vi = dn->inputs[k];
		if (vi == OXP_NONE || oxr__quant_covers(v, b->node, k))
			continue; /* a quantized op's row says it (quant.c) */
		const oxp_value *val = &v->dv->values[vi];
		if (val->kind == OXP_VALUE_NODE_OUTPUT && oxr__op_hidden(v, val->producer))
			continue; /* hide=: an edge from what it reads stands for it (hide.c) */
		bool chain = v->fold != NULL && v->fold[vi].ops > 0;
		/* literal tensors show with initializers=fold, computed values always */
		if (!chain && v->o.initializers != OXR_INIT_FOLD)
			continue;
		const char *label = oxr__input_label(v, b->node, k);
		if (label == NULL)
			label = short_name(v, val->name);
		const char *row = NULL;
		if (chain) {
			row = chain_row(v, b->node, n, k, vi);
		} else if (val->kind == OXP_VALUE_INITIALIZER) {
			row = oxr__tensor_row(v->arena, label, val->initializer);
		} else if (val->kind == OXP_VALUE_SPARSE_INITIALIZER && val->sparse_initializer->values) {
			row = oxr__tensor_row(v->arena, label, val->sparse_initializer->values);
		} else if (val->producer != OXP_NONE && v->node_hidden[val->producer]) {
			const oxp_tensor *t = folded_tensor(v, vi);
			line l = {.n = 0, .full = false};
			l.b[0] = '\0';
			if (t != NULL) {
				row = oxr__tensor_row(v->arena, label, t);
			} else if (put_known(v, &l, label, vi) && !l.full) {
				/* value_int(s) Constants, ConstantOfShape of known shape */
				row = oxp_arena_strndup(v->arena, l.b, l.n);
			} else {
				const char *sh = oxr__shape_text(v->arena, val);
				row = oxp_arena_printf(v->arena, "%s \xe2\x9f\xa8%s\xe2\x9f\xa9 fill", label,
				                       sh ? sh : "?");
			}
		}
		if (row == NULL)
			continue;
		if (rows == MAX_FOLDED_ROWS) {
			oxr__add_row(v, b, ROW_TENSOR, "\xe2\x80\xa6");
			break;
		}
		if (oxr__add_row(v, b, ROW_TENSOR, row)) {
			b->rows[b->nrows - 1].value = vi;
			b->rows[b->nrows - 1].chain = chain;
		}
		rows++;
	}
}

/* ---------------------------------------------------------------------------------------
 * Reachability for the dotted edges
 */
bool oxr__fold_reached(const view *v, const fold_read *reads, uint32_t n, bool *reached)
{
	uint32_t nb = v->nboxes, ne = v->nedges;
	uint32_t *first = malloc((size_t)(nb ? nb : 1) * sizeof(uint32_t)); /* in-edges */
	uint32_t *next = malloc((size_t)(ne ? ne : 1) * sizeof(uint32_t));
	uint32_t *indeg = calloc(nb ? nb : 1, sizeof(uint32_t));
	uint32_t *outfirst = malloc((size_t)(nb ? nb : 1) * sizeof(uint32_t));
	uint32_t *outnext = malloc((size_t)(ne ? ne : 1) * sizeof(uint32_t));
	uint32_t *rank = calloc(nb ? nb : 1, sizeof(uint32_t)); /* longest path from a source */
	uint32_t *queue = malloc((size_t)(nb ? nb : 1) * sizeof(uint32_t));
	uint32_t *mark = calloc(nb ? nb : 1, sizeof(uint32_t));
	bool *ranked = calloc(nb ? nb : 1, sizeof(bool));
	bool ok = first && next && indeg && outfirst && outnext && rank && queue && mark && ranked;
	if (!ok)
		goto out;
	memset(first, 0xff, (size_t)nb * sizeof(uint32_t));
	memset(outfirst, 0xff, (size_t)nb * sizeof(uint32_t));
	for (uint32_t e = 0; e < ne; e++) {
		next[e] = first[v->edges[e].to];
		first[v->edges[e].to] = e;
		outnext[e] = outfirst[v->edges[e].from];
		outfirst[v->edges[e].from] = e;
		indeg[v->edges[e].to]++;
	}
	/* ranks prune the search: a box on a path from s to t has a rank between theirs.
	 * Boxes on a cycle get no rank and are searched through without pruning. */
	uint32_t head = 0, tail = 0;
	for (uint32_t b = 0; b < nb; b++)
		if (indeg[b] == 0)
			queue[tail++] = b;
	while (head < tail) {
		uint32_t b = queue[head++];
		ranked[b] = true;
		for (uint32_t e = outfirst[b]; e != OXP_NONE; e = outnext[e]) {
			uint32_t t = v->edges[e].to;
			if (rank[t] < rank[b] + 1)
				rank[t] = rank[b] + 1;
			if (--indeg[t] == 0)
				queue[tail++] = t;
		}
	}
	uint64_t budget = REACH_BUDGET;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t s = reads[k].from, t = reads[k].to;
		reached[k] = false;
		if (s == t) {
			reached[k] = true;
			continue;
		}
		bool prune = ranked[s];
		if (prune && ranked[t] && rank[t] <= rank[s])
			continue; /* t is not below s */
		uint32_t gen = k + 1, sp = 0;
		mark[t] = gen;
		queue[sp++] = t;
		while (sp > 0 && !reached[k] && budget > 0) {
			uint32_t b = queue[--sp];
			for (uint32_t e = first[b]; e != OXP_NONE; e = next[e]) {
				uint32_t f = v->edges[e].from;
				budget--;
				if (f == s) {
					reached[k] = true;
					break;
				}
				if (mark[f] == gen || (prune && ranked[f] && rank[f] <= rank[s]))
					continue;
				mark[f] = gen;
				queue[sp++] = f;
			}
		}
	}
out:
	free(first);
	free(next);
	free(indeg);
	free(outfirst);
	free(outnext);
	free(rank);
	free(queue);
	free(mark);
	free(ranked);
	return ok;
}
