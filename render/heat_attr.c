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

/* A node by name, else the producer of a value of that name */
static uint32_t node_or_producer(heat_attr *c, const char *s, size_t len)
{
	uint32_t x = oxp_smap_get(&c->nodes, s, len);
	if (x == OXP_NONE) {
		uint32_t v = value_named(c, s, len);
		x = v != OXP_NONE ? c->dv->values[v].producer : OXP_NONE;
	}
	return x;
}

/* A TensorRT layer (its name made of the ONNX nodes it runs): "a + b" (fused), "a || b"
 * (merged horizontally), "... input reformatter 0" (a copy for that layer: its nodes),
 * "{ForeignNode[a...b]}" (Myelin: a to b in graph order, at most MAX_GROUP nodes).  The
 * nodes found, the first named first; the parts not found cover nothing. */
static uint32_t map_layer(heat_attr *c, const heat_entry *e, uint32_t *g)
{
	const char *s = e->name;
	size_t len = e->len, n = 0;
	static const char *const refmt[] = {" input reformatter ", " output reformatter "};
	for (int k = 0; k < 2; k++) {
		const char *r = NULL;
		for (const char *q = strstr(s, refmt[k]); q != NULL && q < s + len; q = strstr(q + 1, refmt[k]))
			r = q;
		size_t rl = strlen(refmt[k]);
		if (r != NULL && r + rl < s + len &&
		    strspn(r + rl, "0123456789") == (size_t)(s + len - (r + rl))) {
			len = (size_t)(r - s);
			break;
		}
	}
	static const char fn[] = "{ForeignNode[";
	size_t fl = sizeof(fn) - 1;
	if (len > fl + 2 && memcmp(s, fn, fl) == 0 && memcmp(s + len - 2, "]}", 2) == 0) {
		const char *in = s + fl, *end = s + len - 2, *dots = NULL;
		for (const char *q = in; q + 3 <= end; q++)
			if (memcmp(q, "...", 3) == 0) {
				dots = q;
				break;
			}
		uint32_t a = dots ? node_or_producer(c, in, (size_t)(dots - in))
		                  : node_or_producer(c, in, (size_t)(end - in));
		uint32_t b = dots ? node_or_producer(c, dots + 3, (size_t)(end - dots - 3)) : a;
		if (a == OXP_NONE || b == OXP_NONE || b < a || b - a >= MAX_GROUP)
			return 0;
		uint32_t m = 0;
		for (uint32_t x = a; x <= b; x++)
			if (!c->dv->nodes[x].bookkeeping || x == a || x == b)
				add_node(c, g, &m, x);
		return m;
	}
	uint32_t m = 0;
	while (n < len) {
		/* the next part: up to " + " or " || " */
		size_t end = n;
		while (end < len && !(end + 3 <= len && memcmp(s + end, " + ", 3) == 0) &&
		       !(end + 4 <= len && memcmp(s + end, " || ", 4) == 0))
			end++;
		uint32_t x = node_or_producer(c, s + n, end - n);
		if (x != OXP_NONE)
			add_node(c, g, &m, x);
		n = end < len ? end + (s[end + 1] == '+' ? 3 : 4) : len;
	}
	return m;
}

/* The nodes entry e covers, the anchor first; 0 when none. */
uint32_t oxr__heat_map_entry(heat_attr *c, const heat_entry *e, uint32_t *g, uint8_t *how)
{
	uint32_t n = 0, node;
	c->gen++;
	if (e->kind == KEY_LAYER) {
		*how = OXR_HEAT_BY_FUSED_NAME;
		n = map_layer(c, e, g);
		if (n == 1 && oxp_smap_get(&c->nodes, e->name, e->len) == g[0])
			*how = OXR_HEAT_BY_NAME;
		return n;
	}
	if (e->kind == KEY_ANY && c->ov != NULL) {
		uint32_t on = oxp_smap_get(&c->onodes, e->name, e->len);
		*how = OXR_HEAT_BY_OPTIMIZED;
		if (on != OXP_NONE && (n = cover_optimized(c, on, g)) > 0)
			goto anchor;
	}
	if (e->kind != KEY_VALUE) {
		if ((node = oxp_smap_get(&c->nodes, e->name, e->len)) != OXP_NONE) {
			g[0] = node;
			*how = OXR_HEAT_BY_NAME;
			return 1;
		}
	}
	size_t sl = strip_fusion(e->name, e->len);
	if (e->kind != KEY_VALUE && sl < e->len &&
	    (node = oxp_smap_get(&c->nodes, e->name, sl)) != OXP_NONE) {
		g[0] = node;
		*how = OXR_HEAT_BY_FUSED_NAME;
		return 1;
	}
	if (e->kind == KEY_NODE)
		return 0;
	uint32_t v = value_named(c, e->name, sl);
	if (v == OXP_NONE || (node = c->dv->values[v].producer) == OXP_NONE)
		return 0;
	add_node(c, g, &n, node);
	*how = OXR_HEAT_BY_VALUE;
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

void oxr__heat_spread_real(heat_attr *c, const uint32_t *g, uint32_t n, double x, double *out)
{
	double w[MAX_GROUP], W = 0, given = 0;
	for (uint32_t i = 0; i < n; i++)
		W += (w[i] = n > 1 ? node_weight(c, g[i]) : 0);
	for (uint32_t i = 1; i < n; i++)
		given += (out[i] = W > 0 ? x * (w[i] / W) : 0);
	out[0] = x - given;
}

/* ---------------------------------------------------------------------------------------
 * Kernels no name matches (issue 38): ORT's own nodes ("Gelu_token_108", "ReorderOutput",
 * "gemm_input_reshape_token_2") still say their op type and shapes and run in graph order.
 *
 * By op type, shapes and order (OXR_HEAT_BY_SHAPES): the kernel's window is the nodes
 * between the kernels matched by name just before and just after it in execution order
 * (at most HEAT_WINDOW of them); a candidate there is a node of its op type, or a named
 * pattern of it (parser/fusion.c: every Gelu, LayerNormalization, Gemm... of the model,
 * with ORT's names for the fused forms: SkipLayerNormalization, BiasGelu, ...), that no
 * name matched, whose first input's and output's shapes are the kernel's (a dim the model
 * leaves symbolic matches any).  Exactly one candidate, claimed by no other kernel: it is
 * the kernel's; otherwise the kernel stays unmatched and listed.
 *
 * As a neighbour (OXR_HEAT_BY_NEIGHBOUR): a Reshape, Transpose, reorder or other data
 * movement with no candidate was inserted by ORT for a kernel next to it (the Reshapes
 * around a 3-D MatMul + Add run as a Gemm, NCHWc reorders): it exchanges with that
 * kernel a value of a shape no value of the model near there has.  When exactly one of
 * its two sides is such a value and the adjacent kernel on that side (matched) has it as
 * its own output or input, it is given to that kernel's nodes.
 * ------------------------------------------------------------------------------------- */
#define HEAT_WINDOW 512
/* nodes looked at over all kernels, at most (a hostile profile of 2,000,000 kernels no
 * name matches, on a model of fewer than HEAT_WINDOW nodes, would look at 10^9): past
 * it the rest stay unmatched */
#define HEAT_INFER_BUDGET ((uint64_t)32 << 20)
#define HEAT_MAX_DIMS 16

typedef struct dims {
	uint32_t n;
	int64_t d[HEAT_MAX_DIMS];
} dims;

/* "1x16x64" (up to end) into d: false when it is not that */
static bool dims_parse(const char *s, const char *end, dims *d)
{
	d->n = 0;
	while (s < end) {
		char *e;
		long long v = strtoll(s, &e, 10);
		if (e == s || e > end || d->n >= HEAT_MAX_DIMS || v < 0)
			return false;
		d->d[d->n++] = v;
		s = e;
		if (s < end && *s++ != 'x')
			return false;
	}
	return d->n > 0;
}

/* A kernel's "in>out" shapes */
static bool kernel_dims(const heat_entry *e, dims *in, dims *out)
{
	if (e == NULL || e->nv != 0 || e->shapes == NULL)
		return false;
	const char *gt = strchr(e->shapes, '>');
	return gt != NULL && dims_parse(e->shapes, gt, in) &&
	       dims_parse(gt + 1, gt + strlen(gt), out);
}

/* Whether value vi's shape can be d: the same rank, every known dim equal. */
static bool value_fits(const oxp_dag_view *dv, uint32_t vi, const dims *d, bool exact)
{
	if (vi == OXP_NONE)
		return false;
	const oxp_value_type *t = oxp_value_best_type(&dv->values[vi]);
	if (t == NULL || t->rank < 0 || (uint32_t)t->rank != d->n)
		return false;
	for (uint32_t k = 0; k < d->n; k++) {
		const oxp_dim *x = &t->dims[k];
		if (x->kind == OXP_DIM_VALUE ? x->value != d->d[k] : exact)
			return false;
	}
	return true;
}

static bool dims_equal(const dims *a, const dims *b)
{
	return a->n == b->n && memcmp(a->d, b->d, a->n * sizeof(int64_t)) == 0;
}

/* The named pattern ORT's fused op stands for, else -1 */
static int fused_kind(const char *op)
{
	static const struct {
		const char *op;
		int kind;
	} alias[] = {
	    {"SkipLayerNormalization", OXP_FU_LAYERNORM},
	    {"SimplifiedLayerNormalization", OXP_FU_RMSNORM},
	    {"SkipSimplifiedLayerNormalization", OXP_FU_RMSNORM},
	    {"BiasGelu", OXP_FU_GELU},
	    {"FastGelu", OXP_FU_GELU},
	    {"QuickGelu", OXP_FU_SWISH},
	};
	for (int k = 0; k < OXP_FU__COUNT; k++)
		if (!strcmp(op, oxp_fusion_name((unsigned)k)))
			return k;
	for (size_t k = 0; k < sizeof(alias) / sizeof(alias[0]); k++)
		if (!strcmp(op, alias[k].op))
			return alias[k].kind;
	return -1;
}

static bool moves_data(const char *op)
{
	static const char *const ops[] = {"Reshape", "Transpose", "ReorderInput", "ReorderOutput",
	                                  "Squeeze", "Unsqueeze", "Flatten", "Identity",
	                                  "MemcpyFromHost", "MemcpyToHost", "Cast"};
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		if (!strcmp(op, ops[k]))
			return true;
	return false;
}

/* The nodes of matched entry `at` in execution order: [*lo, *hi] their index range */
static void group_range(const heat_groups *gs, uint32_t entry, uint32_t *lo, uint32_t *hi)
{
	*lo = UINT32_MAX;
	*hi = 0;
	for (uint32_t k = gs->off[entry]; k < gs->off[entry + 1]; k++) {
		uint32_t x = gs->nodes[k];
		*lo = x < *lo ? x : *lo;
		*hi = x > *hi ? x : *hi;
	}
}

/* Whether a value of a node in [lo, hi] (an input or output) can have shape d */
static bool model_has(const oxp_dag_view *dv, uint32_t lo, uint32_t hi, const dims *d)
{
	for (uint32_t x = lo; x <= hi && x < dv->nnodes; x++) {
		const oxp_dnode *dn = &dv->nodes[x];
		for (size_t k = 0; k < dn->proto->ninputs; k++)
			if (value_fits(dv, dn->inputs[k], d, false))
				return true;
		for (size_t k = 0; k < dn->proto->noutputs; k++)
			if (value_fits(dv, dn->outputs[k], d, false))
				return true;
	}
	return false;
}

/* The nodes of a choice (a node, or a pattern's anchor then its other nodes) into g, 0
 * when there is none or two kernels claimed it */
static uint32_t chosen_group(const oxp_fusions *fu, const uint8_t *covered, uint32_t x,
                             uint32_t *g)
{
	if (x == OXP_NONE || covered[x] != 2)
		return 0;
	uint32_t mi = fu->node_match[x], n = 0;
	g[n++] = x;
	if (mi != OXP_NONE)
		for (uint32_t j = 0; j < fu->matches[mi].nnodes && n < MAX_GROUP; j++)
			if (fu->matches[mi].nodes[j] != x)
				g[n++] = fu->matches[mi].nodes[j];
	return n;
}

oxr_code oxr__heat_infer(heat_attr *c, const heat_parse *p, const uint32_t *seq, uint32_t nseq,
                         heat_groups *gs, heat_give give, void *ctx)
{
	const oxp_dag_view *dv = c->dv;
	uint32_t nn = dv->nnodes;
	bool any = false;
	for (uint32_t k = 0; k < nseq && !any; k++) {
		const heat_entry *e = &p->e[seq[k]];
		any = gs->off[seq[k] + 1] == gs->off[seq[k]] && e->op != NULL && e->shapes != NULL;
	}
	if (!any || nseq < 2)
		return OXR_OK;
	oxr_code rc = OXR_OK;
	oxp_arena *fa = oxp_arena_new((size_t)256 << 20);
	const oxp_fusions *fu = NULL;
	uint8_t *covered = calloc(nn ? nn : 1, 1);   /* 1: named, 2: given, 3: claimed twice */
	uint32_t *prevm = malloc((size_t)nseq * sizeof(uint32_t));
	uint32_t *nextm = malloc((size_t)nseq * sizeof(uint32_t));
	uint32_t *choice = malloc((size_t)nseq * sizeof(uint32_t)); /* a node or a pattern's
	                                                                anchor, else NONE */
	oxp_error fe;
	if (fa == NULL || covered == NULL || prevm == NULL || nextm == NULL || choice == NULL ||
	    oxp_fusion_find(c->d, fa, &fu, &fe) != OXP_OK) {
		rc = OXR_E_NOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < gs->len; i++)
		covered[gs->nodes[i]] = 1;
	uint32_t last = OXP_NONE;
	for (uint32_t k = 0; k < nseq; k++) {
		prevm[k] = last;
		if (gs->off[seq[k] + 1] > gs->off[seq[k]])
			last = k;
	}
	last = OXP_NONE;
	for (uint32_t k = nseq; k-- > 0;) {
		nextm[k] = last;
		if (gs->off[seq[k] + 1] > gs->off[seq[k]])
			last = k;
	}
	/* by op type and shapes in the window */
	uint64_t budget = HEAT_INFER_BUDGET;
	for (uint32_t k = 0; k < nseq; k++) {
		choice[k] = OXP_NONE;
		uint32_t ei = seq[k];
		const heat_entry *e = &p->e[ei];
		dims in, out;
		if (gs->off[ei + 1] > gs->off[ei] || e->op == NULL || !kernel_dims(e, &in, &out))
			continue;
		uint32_t lo = 0, hi = nn ? nn - 1 : 0, a, b;
		if (prevm[k] != OXP_NONE) {
			group_range(gs, seq[prevm[k]], &a, &b);
			lo = b + 1;
		}
		if (nextm[k] != OXP_NONE) {
			group_range(gs, seq[nextm[k]], &a, &b);
			hi = a > 0 ? a - 1 : 0;
		}
		if (nn == 0 || hi < lo || hi - lo >= HEAT_WINDOW || budget < hi - lo + 1)
			continue;
		budget -= hi - lo + 1;
		int kind = fused_kind(e->op);
		uint32_t found = OXP_NONE, count = 0;
		for (uint32_t x = lo; x <= hi && count < 2; x++) {
			uint32_t mi = fu->node_match[x], vin, vout;
			if (covered[x] == 1)
				continue;
			if (mi != OXP_NONE && (int)fu->matches[mi].kind == kind) {
				const oxp_fusion *m = &fu->matches[mi];
				bool inside = m->anchor == x;
				for (uint32_t j = 0; j < m->nnodes && inside; j++)
					inside = m->nodes[j] >= lo && m->nodes[j] <= hi && covered[m->nodes[j]] != 1;
				if (!inside)
					continue;
				vin = m->in[0];
				vout = m->output;
			} else if (mi == OXP_NONE && op_is(dv, x, e->op)) {
				const oxp_dnode *dn = &dv->nodes[x];
				vin = dn->proto->ninputs > 0 ? dn->inputs[0] : OXP_NONE;
				vout = dn->proto->noutputs > 0 ? dn->outputs[0] : OXP_NONE;
			} else {
				continue;
			}
			if (value_fits(dv, vin, &in, false) && value_fits(dv, vout, &out, false)) {
				found = x;
				count++;
			}
		}
		if (count == 1) {
			choice[k] = found;
			covered[found] = covered[found] == 2 ? 3 : 2;
		}
	}
	/* give: a node claimed by two kernels goes to neither */
	uint32_t g[MAX_GROUP];
	for (uint32_t k = 0; k < nseq && rc == OXR_OK; k++) {
		uint32_t n = chosen_group(fu, covered, choice[k], g);
		if (n > 0)
			rc = give(ctx, seq[k], g, n, OXR_HEAT_BY_SHAPES);
	}
	/* neighbours: data movement next to a kernel that has nodes (by name or above) */
	for (uint32_t k = 0; k < nseq && rc == OXR_OK; k++) {
		uint32_t ei = seq[k];
		const heat_entry *e = &p->e[ei];
		dims in, out, x, y;
		if (gs->off[ei + 1] > gs->off[ei] || choice[k] != OXP_NONE || e->op == NULL ||
		    !moves_data(e->op) || !kernel_dims(e, &in, &out) ||
		    (prevm[k] == OXP_NONE && nextm[k] == OXP_NONE))
			continue;
		/* near: the nodes of the kernels matched by name around it */
		uint32_t lo = UINT32_MAX, hi = 0, a, b;
		for (int side = 0; side < 2; side++) {
			uint32_t m = side ? nextm[k] : prevm[k];
			if (m == OXP_NONE)
				continue;
			group_range(gs, seq[m], &a, &b);
			lo = a < lo ? a : lo;
			hi = b > hi ? b : hi;
		}
		if (hi - lo >= HEAT_WINDOW || budget < 2 * ((uint64_t)hi - lo + 1))
			continue;
		budget -= 2 * ((uint64_t)hi - lo + 1);
		bool has_in = model_has(dv, lo, hi, &in), has_out = model_has(dv, lo, hi, &out);
		uint32_t to = OXP_NONE;
		if (!has_in && has_out && k > 0 && kernel_dims(&p->e[seq[k - 1]], &x, &y) &&
		    dims_equal(&y, &in))
			to = k - 1;
		else if (has_in && !has_out && k + 1 < nseq && kernel_dims(&p->e[seq[k + 1]], &x, &y) &&
		         dims_equal(&x, &out))
			to = k + 1;
		if (to == OXP_NONE)
			continue;
		uint32_t te = seq[to], n = gs->off[te + 1] - gs->off[te];
		if (n > 0)
			rc = give(ctx, ei, gs->nodes + gs->off[te], n, OXR_HEAT_BY_NEIGHBOUR);
		else if ((n = chosen_group(fu, covered, choice[to], g)) > 0)
			rc = give(ctx, ei, g, n, OXR_HEAT_BY_NEIGHBOUR);
	}
out:
	free(covered);
	free(prevm);
	free(nextm);
	free(choice);
	oxp_arena_free(fa);
	return rc;
}
