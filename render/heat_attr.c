/*
 * heat_attr.c — which nodes of a model an overlay input's name stands for, and how a
 * fused kernel's time is spread over them (docs/overlays.md, decision 65).
 *
 * Attribution, for each name of the input:
 *  1. a node of that name;
 *  2. the name without ORT's fusion segments ("/MatMul_2/MatmulTransposeFusion/" is the
 *     node "/MatMul_2");
 *  3. with ORT's optimized model: its node of that name, whose outputs are values of the
 *     original graph (or are, without "_nchwc"): their producers and what fed them through
 *     values the optimized graph no longer has are the nodes the kernel covers;
 *  4. a value name (without "_nchwc"): its producer; when the kernel's op type is not the
 *     producer's, the producer's single-consumer chain upwards (at most 6 nodes) to a node
 *     of that op type (Conv <- BatchNormalization <- Relu for a fused Conv).
 * A kernel that covers several nodes (a fused group) has its time spread over them in
 * proportion to their MACs + other ops (parser/cost.c), in whole microseconds, the
 * remainder to the anchor (the node of the kernel's op type), so the sums stay exact; when
 * those figures are all 0 or unknown, the anchor has it all.  Other figures (node data,
 * CSV) go to the anchor only.
 */
#include "render/heat_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------
 * Attribution
 */
/* Node and value names -> indices.  ONNX Runtime names an unnamed node of the main graph
 * "<op type>_<k>", k counting the unnamed nodes in order: those names are known too
 * (names the model has win). */
bool oxr__heat_index_dag(const oxp_dag_view *dv, oxp_arena *a, oxp_smap *nodes, oxp_smap *values)
{
	if (!oxp_smap_init(nodes, dv->nnodes + 1) || !oxp_smap_init(values, dv->nvalues + 1))
		return false;
	for (uint32_t i = 0; i < dv->nnodes; i++) {
		oxp_str s = dv->nodes[i].proto->name;
		if (s.len > 0 && !oxp_smap_put(nodes, s.p, s.len, i))
			return false;
	}
	uint32_t unnamed = 0;
	for (uint32_t i = 0; a != NULL && i < dv->nnodes; i++) {
		const oxp_node *n = dv->nodes[i].proto;
		if (dv->nodes[i].scope != 0 || n->name.len > 0)
			continue;
		char *g = oxp_arena_printf(a, "%.*s_%u", (int)(n->op_type.len > 256 ? 256 : n->op_type.len),
		                           n->op_type.p, unnamed++);
		if (g == NULL || !oxp_smap_put(nodes, g, strlen(g), i))
			return false;
	}
	for (uint32_t i = 0; i < dv->nvalues; i++) {
		oxp_str s = dv->values[i].name;
		if (s.len > 0 && !oxp_smap_put(values, s.p, s.len, i))
			return false;
	}
	return true;
}

/* The node the first output consumed feeds (a dag's first edge of it), else OXP_NONE */
uint32_t oxr__heat_first_consumer(const oxp_dag_view *dv, uint32_t n)
{
	const oxp_dnode *dn = &dv->nodes[n];
	for (size_t k = 0; k < dn->proto->noutputs; k++) {
		uint32_t vi = dn->outputs[k];
		if (vi != OXP_NONE && dv->values[vi].nconsumers > 0)
			return dv->edges[dv->values[vi].consumers[0]].dst;
	}
	return OXP_NONE;
}

static bool op_is(const oxp_dag_view *dv, uint32_t n, const char *op)
{
	oxp_str t = dv->nodes[n].proto->op_type;
	return op != NULL && strlen(op) == t.len && memcmp(op, t.p, t.len) == 0;
}

/* The name without ORT's fusion segments: "/x/MatMul/MatmulTransposeFusion//Mul...Fusion/"
 * -> "/x/MatMul", "/x/Slice_3/GatherSliceToSplitFusion" -> "/x/Slice_3".  Returns the new
 * length. */
static size_t strip_fusion(const char *s, size_t len)
{
	while (len > 0) {
		size_t end = s[len - 1] == '/' ? len - 1 : len, k = end;
		while (k > 0 && s[k - 1] != '/')
			k--;
		if (k == 0)
			break;
		static const char fu[] = "Fusion";
		size_t seg = end - k;
		/* "XFusion" or "XFusion_3" */
		const char *f = NULL;
		for (size_t j = k; j + 6 <= end; j++)
			if (memcmp(s + j, fu, 6) == 0)
				f = s + j;
		if (f == NULL || seg < 6)
			break;
		len = k - 1; /* drop "/Seg/" or "/Seg" */
	}
	return len;
}

/* A value of the original graph by name, also without an "_nchwc" suffix. */
static uint32_t value_named(const heat_attr *c, const char *s, size_t len)
{
	uint32_t v = oxp_smap_get(&c->values, s, len);
	if (v == OXP_NONE && len > 6 && memcmp(s + len - 6, "_nchwc", 6) == 0)
		v = oxp_smap_get(&c->values, s, len - 6);
	return v;
}

/* Whether the optimized graph still has a value of this name (or its _nchwc twin). */
static bool visible(const heat_attr *c, oxp_str name)
{
	if (oxp_smap_get(&c->ovalues, name.p, name.len) != OXP_NONE)
		return true;
	char buf[MAX_NAME + 8];
	if (name.len > MAX_NAME)
		return false;
	memcpy(buf, name.p, name.len);
	memcpy(buf + name.len, "_nchwc", 6);
	return oxp_smap_get(&c->ovalues, buf, name.len + 6) != OXP_NONE;
}

/* The nodes of the original graph optimized node on stands for: the node of its name, the
 * producer of the value its name is made from (an NCHWc node is named after the output it
 * replaces: "<value>_nchwc"), the producers of its outputs (by name, or without "_nchwc").
 * Calls fn(c, node, ctx) for each. */
static void stands_for(heat_attr *c, uint32_t on, void (*fn)(heat_attr *, uint32_t, void *),
                       void *ctx)
{
	const oxp_dnode *o = &c->ov->nodes[on];
	oxp_str name = o->proto->name;
	uint32_t x = oxp_smap_get(&c->nodes, name.p, name.len);
	if (x != OXP_NONE)
		fn(c, x, ctx);
	uint32_t v = name.len > 0 ? value_named(c, name.p, name.len) : OXP_NONE;
	if (v != OXP_NONE && c->dv->values[v].producer != OXP_NONE)
		fn(c, c->dv->values[v].producer, ctx);
	for (size_t k = 0; k < o->proto->noutputs; k++) {
		uint32_t ovi = o->outputs[k];
		if (ovi == OXP_NONE)
			continue;
		oxp_str nm = c->ov->values[ovi].name;
		v = value_named(c, nm.p, nm.len);
		if (v != OXP_NONE && c->dv->values[v].producer != OXP_NONE)
			fn(c, c->dv->values[v].producer, ctx);
	}
}

static void own(heat_attr *c, uint32_t node, void *ctx)
{
	(void)ctx;
	c->owned[node] = true;
}

/* Which nodes of the original graph some optimized node stands for. */
bool oxr__heat_mark_owned(heat_attr *c)
{
	c->owned = calloc(c->dv->nnodes ? c->dv->nnodes : 1, sizeof(bool));
	if (c->owned == NULL)
		return false;
	for (uint32_t i = 0; i < c->ov->nnodes; i++)
		stands_for(c, i, own, NULL);
	return true;
}

typedef struct group_acc {
	uint32_t *g, n;
} group_acc;

static bool add_node(heat_attr *c, uint32_t *g, uint32_t *n, uint32_t node)
{
	if (c->mark[node] == c->gen || *n >= MAX_GROUP)
		return false;
	c->mark[node] = c->gen;
	g[(*n)++] = node;
	return true;
}

static void seed(heat_attr *c, uint32_t node, void *ctx)
{
	group_acc *ga = ctx;
	add_node(c, ga->g, &ga->n, node);
}

/* The nodes an optimized node covers: those it stands for and what fed them through
 * values the optimized graph no longer has, from nodes no optimized node stands for. */
static uint32_t cover_optimized(heat_attr *c, uint32_t on, uint32_t *g)
{
	group_acc ga = {g, 0};
	/* a node that stands for nothing (ReorderInput: its output is new): the first node
	 * downstream that does, a few hops at most */
	for (int hop = 0; hop < 8 && ga.n == 0 && on != OXP_NONE; hop++) {
		stands_for(c, on, seed, &ga);
		on = oxr__heat_first_consumer(c->ov, on);
	}
	uint32_t n = ga.n;
	/* upwards through values that disappeared */
	for (uint32_t i = 0; i < n; i++) {
		const oxp_dnode *dn = &c->dv->nodes[g[i]];
		for (size_t k = 0; k < dn->proto->ninputs; k++) {
			uint32_t vi = dn->inputs[k];
			if (vi == OXP_NONE)
				continue;
			const oxp_value *val = &c->dv->values[vi];
			uint32_t p = val->producer;
			if (p == OXP_NONE || c->dv->nodes[p].bookkeeping || c->owned[p] ||
			    visible(c, val->name))
				continue;
			add_node(c, g, &n, p);
		}
	}
	return n;
}

/* The nodes entry e covers, the anchor first; 0 when none. */
uint32_t oxr__heat_map_entry(heat_attr *c, const heat_entry *e, uint32_t *g)
{
	uint32_t n = 0, node;
	c->gen++;
	if (e->kind == KEY_ANY && c->ov != NULL) {
		uint32_t on = oxp_smap_get(&c->onodes, e->name, e->len);
		if (on != OXP_NONE && (n = cover_optimized(c, on, g)) > 0)
			goto anchor;
	}
	if (e->kind != KEY_VALUE) {
		if ((node = oxp_smap_get(&c->nodes, e->name, e->len)) != OXP_NONE) {
			g[0] = node;
			return 1;
		}
	}
	size_t sl = strip_fusion(e->name, e->len);
	if (e->kind != KEY_VALUE && sl < e->len &&
	    (node = oxp_smap_get(&c->nodes, e->name, sl)) != OXP_NONE) {
		g[0] = node;
		return 1;
	}
	if (e->kind == KEY_NODE)
		return 0;
	uint32_t v = value_named(c, e->name, sl);
	if (v == OXP_NONE || (node = c->dv->values[v].producer) == OXP_NONE)
		return 0;
	add_node(c, g, &n, node);
	if (e->op != NULL && !op_is(c->dv, node, e->op)) {
		/* a fused kernel named after its last output: up the single-consumer chain */
		uint32_t path[8], np = 0, x = node;
		path[np++] = x;
		while (np < 7) {
			const oxp_dnode *dn = &c->dv->nodes[x];
			uint32_t vi = dn->proto->ninputs > 0 ? dn->inputs[0] : OXP_NONE;
			if (vi == OXP_NONE || c->dv->values[vi].nconsumers != 1 ||
			    c->dv->values[vi].producer == OXP_NONE)
				break;
			x = c->dv->values[vi].producer;
			path[np++] = x;
			if (op_is(c->dv, x, e->op)) {
				for (uint32_t i = 1; i < np; i++)
					add_node(c, g, &n, path[i]);
				break;
			}
		}
	}
anchor:
	for (uint32_t i = 0; i < n && e->op != NULL; i++)
		if (op_is(c->dv, g[i], e->op)) {
			uint32_t t = g[0];
			g[0] = g[i];
			g[i] = t;
			break;
		}
	return n;
}

static double node_weight(heat_attr *c, uint32_t node)
{
	if (!c->cost_tried) {
		c->cost_tried = true;
		c->cost_arena = oxp_arena_new((size_t)512 << 20);
		if (c->cost_arena == NULL ||
		    oxp_cost_compute(c->d, c->cost_arena, NULL, &c->cost, NULL) != OXP_OK)
			c->cost = NULL;
	}
	if (c->cost == NULL)
		return 0;
	double w = oxp_cost_poly_eval(&c->cost->nodes[node].macs, 1) +
	           oxp_cost_poly_eval(&c->cost->nodes[node].ops, 1);
	return isfinite(w) && w > 0 ? w : 0;
}

/* dur spread over the group: out[i] for g[i], whole microseconds summing to dur exactly */
void oxr__heat_spread(heat_attr *c, const uint32_t *g, uint32_t n, int64_t dur, int64_t *out)
{
	double w[MAX_GROUP], W = 0;
	if (n == 1) {
		out[0] = dur;
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		W += (w[i] = node_weight(c, g[i]));
	int64_t given = 0;
	for (uint32_t i = 1; i < n; i++) {
		double share = W > 0 ? (double)dur * (w[i] / W) : 0;
		int64_t s = (int64_t)floor(share);
		if (s < 0)
			s = 0;
		if (s > dur - given)
			s = dur - given;
		out[i] = s;
		given += s;
	}
	out[0] = dur - given;
}
