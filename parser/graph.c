/*
 * graph.c — links a parsed model into the DAG people look at.
 *
 * Steps (all iterative; nothing recurses on model structure):
 *   1. count: walk every graph reachable from the model (main graph, training graphs,
 *      function bodies, GRAPH/GRAPHS attributes at any depth) with an explicit stack, to
 *      size the arrays exactly;
 *   2. scopes: lay the scopes out breadth-first, so each scope's nodes and each node's
 *      subgraph scopes are contiguous;
 *   3. per scope, in order: register initializers, inputs and node outputs in a hash
 *      table; resolve each node input in the scope, then in the enclosing scopes (an
 *      "outer" edge), else create an undefined value and warn; resolve graph outputs;
 *      attach value_info types;
 *   4. consumers per value, topological checks, unused initializers, function calls and
 *      recursion between functions, ids, summary;
 *   5. which nodes are bookkeeping (bookkeeping.c), shape inference (shape.c).
 * Problems of the model are warnings; only resource limits and recursive functions fail.
 */
#include "parser/internal.h"
#include "parser/schema.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WARNINGS 2000
#define MAX_WARNING_NODES 64

/* ---------------------------------------------------------------------------------------
 * Small utilities
 */
static bool str_eq(oxp_str a, oxp_str b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0);
}

static uint32_t pow2_at_least(uint64_t n)
{
	uint32_t c = 8;
	while (c < n && c < (1u << 30))
		c <<= 1;
	return c;
}

/* Printable copy of a model string for messages: non-printable bytes as \xNN, cut at 96. */
void oxp__printable(char *out, size_t size, oxp_str s)
{
	size_t o = 0;
	for (size_t i = 0; i < s.len && o + 5 < size; i++) {
		unsigned char ch = (unsigned char)s.p[i];
		if (i >= 96) {
			out[o++] = '.';
			out[o++] = '.';
			out[o++] = '.';
			break;
		}
		if (ch >= 0x20 && ch < 0x7f && ch != '\\') {
			out[o++] = (char)ch;
		} else {
			snprintf(out + o, size - o, "\\x%02x", ch);
			o += 4;
		}
	}
	out[o] = '\0';
}

/* ---------------------------------------------------------------------------------------
 * The build context
 */
typedef struct gitem { /* a graph to turn into a scope */
	const oxp_graph *graph;
	const oxp_function *function;
	oxp_scope_kind kind;
	uint32_t parent, owner;
	const char *attr;
	const char *id;
	uint32_t depth;
} gitem;

typedef struct build {
	oxp_dag *d;
	oxp_error *err;
	/* capacities from the counting walk */
	uint32_t cap_scopes, cap_nodes, cap_values, cap_edges;
	uint32_t nscopes, nnodes, nvalues, nedges;
	/* per-scope name tables: slots hold value indices */
	uint32_t **tables;
	uint32_t *table_caps;
} build;

static oxp_code nomem(build *b)
{
	if (oxp_arena_code(b->d->arena) == OXP_E_BUDGET)
		return oxp__set_error(b->err, OXP_E_BUDGET, 0, "",
		                      "linking the graph needs more than the model's memory budget");
	return oxp__set_error(b->err, OXP_E_NOMEM, 0, "", "out of memory while linking the graph");
}

static void *alloc_array(build *b, size_t n, size_t size)
{
	return oxp__arena_array(b->d->arena, n ? n : 1, size);
}

/* ---------------------------------------------------------------------------------------
 * Warnings
 */
static oxp_warning *warn(build *b, oxp_warning_kind kind, uint32_t scope, uint32_t value,
                         const char *fmt, ...) OXP_PRINTF(5, 6);

static oxp_warning *warn(build *b, oxp_warning_kind kind, uint32_t scope, uint32_t value,
                         const char *fmt, ...)
{
	oxp_dag *d = b->d;
	if (d->v.nwarnings >= d->warnings_cap) {
		d->warnings_dropped++;
		return NULL;
	}
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	oxp_warning *w = &d->warnings[d->v.nwarnings];
	w->message = oxp__arena_strndup(d->arena, msg, strlen(msg));
	if (w->message == NULL)
		return NULL;
	w->kind = kind;
	w->scope = scope;
	w->value = value;
	d->v.nwarnings++;
	return w;
}

static void warn_nodes(build *b, oxp_warning *w, const uint32_t *nodes, uint32_t n)
{
	if (w == NULL || n == 0)
		return;
	if (n > MAX_WARNING_NODES)
		n = MAX_WARNING_NODES;
	w->nodes = oxp__arena_array(b->d->arena, n, sizeof(uint32_t));
	if (w->nodes == NULL)
		return;
	memcpy(w->nodes, nodes, n * sizeof(uint32_t));
	w->nnodes = n;
}

const char *oxp_warning_kind_name(oxp_warning_kind k)
{
	switch (k) {
	case OXP_W_DANGLING:
		return "dangling_input";
	case OXP_W_DUPLICATE:
		return "duplicate_producer";
	case OXP_W_NOT_SORTED:
		return "not_topologically_sorted";
	case OXP_W_CYCLE:
		return "cycle";
	case OXP_W_UNUSED_INITIALIZER:
		return "unused_initializer";
	case OXP_W_UNPRODUCED_OUTPUT:
		return "unproduced_output";
	default:
		return "other";
	}
}

/* ---------------------------------------------------------------------------------------
 * Step 1: count every graph, node and name reachable, without recursion.
 */
static size_t graph_value_bound(const oxp_graph *g)
{
	size_t n = g->ninputs + g->ninitializers + g->nsparse_initializers + g->noutputs;
	for (size_t i = 0; i < g->nnodes; i++)
		n += g->nodes[i].ninputs + g->nodes[i].noutputs;
	return n;
}

static size_t nodes_value_bound(const oxp_node *nodes, size_t nnodes)
{
	size_t n = 0;
	for (size_t i = 0; i < nnodes; i++)
		n += nodes[i].ninputs + nodes[i].noutputs;
	return n;
}

static size_t nodes_input_count(const oxp_node *nodes, size_t nnodes)
{
	size_t n = 0;
	for (size_t i = 0; i < nnodes; i++)
		n += nodes[i].ninputs;
	return n;
}

typedef struct counter {
	uint64_t scopes, nodes, values, edges;
} counter;

/* Subgraphs held by the attributes of nodes[0..n): count them onto a stack of graphs. */
static oxp_code count_graphs(build *b, const oxp_model_proto *p, counter *c)
{
	/* explicit stack of graphs to visit */
	size_t cap = 64, top = 0;
	const oxp_graph **stack = malloc(cap * sizeof(*stack));
	if (stack == NULL)
		return nomem(b);
	oxp_code rc = OXP_OK;
#define PUSH(gp)                                                                               \
	do {                                                                                       \
		if (top == cap) {                                                                      \
			const oxp_graph **ns = realloc(stack, cap * 2 * sizeof(*stack));                   \
			if (ns == NULL) {                                                                  \
				rc = nomem(b);                                                                 \
				goto out;                                                                      \
			}                                                                                  \
			stack = ns;                                                                        \
			cap *= 2;                                                                          \
		}                                                                                      \
		stack[top++] = (gp);                                                                   \
	} while (0)

	if (p->graph)
		PUSH(p->graph);
	for (size_t i = 0; i < p->ntraining_info; i++) {
		if (p->training_info[i].initialization)
			PUSH(p->training_info[i].initialization);
		if (p->training_info[i].algorithm)
			PUSH(p->training_info[i].algorithm);
	}
	/* function bodies are counted as scopes directly; their nodes' subgraphs are pushed */
	for (size_t f = 0; f < p->nfunctions; f++) {
		const oxp_function *fn = &p->functions[f];
		c->scopes++;
		c->nodes += fn->nnodes;
		c->values += fn->ninputs + fn->noutputs + nodes_value_bound(fn->nodes, fn->nnodes);
		c->edges += nodes_input_count(fn->nodes, fn->nnodes);
		for (size_t i = 0; i < fn->nnodes; i++)
			for (size_t a = 0; a < fn->nodes[i].nattrs; a++) {
				const oxp_attr *at = &fn->nodes[i].attrs[a];
				if (at->g)
					PUSH(at->g);
				for (size_t k = 0; k < at->ngraphs; k++)
					PUSH(&at->graphs[k]);
			}
	}
	while (top > 0) {
		const oxp_graph *g = stack[--top];
		c->scopes++;
		c->nodes += g->nnodes;
		c->values += graph_value_bound(g);
		c->edges += nodes_input_count(g->nodes, g->nnodes);
		for (size_t i = 0; i < g->nnodes; i++)
			for (size_t a = 0; a < g->nodes[i].nattrs; a++) {
				const oxp_attr *at = &g->nodes[i].attrs[a];
				if (at->g)
					PUSH(at->g);
				for (size_t k = 0; k < at->ngraphs; k++)
					PUSH(&at->graphs[k]);
			}
	}
#undef PUSH
out:
	free(stack);
	if (rc == OXP_OK && (c->scopes >= UINT32_MAX / 2 || c->nodes >= UINT32_MAX / 2 ||
	                     c->values >= UINT32_MAX / 2 || c->edges >= UINT32_MAX / 2))
		rc = oxp__set_error(b->err, OXP_E_LIMIT, 0, "", "graph too large to link");
	return rc;
}

/* ---------------------------------------------------------------------------------------
 * Step 2: scopes and node ids
 */
static bool plain_ident(oxp_str s)
{
	if (s.len == 0 || s.len > 64)
		return false;
	for (size_t i = 0; i < s.len; i++) {
		char ch = s.p[i];
		bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
		          (i > 0 && ch >= '0' && ch <= '9');
		if (!ok)
			return false;
	}
	return true;
}

/* Whether attribute a of node n may name its subgraph scopes: a plain identifier, not of
 * the form a<digits> (the fallback "a<index>" is kept for everything else), and not
 * the name of an earlier graph attribute of the node — so scope ids stay unique. */
static bool own_attr_name(const oxp_node *n, size_t a)
{
	oxp_str name = n->attrs[a].name;
	if (!plain_ident(name))
		return false;
	if (name.len >= 2 && name.p[0] == 'a') {
		size_t i = 1;
		while (i < name.len && name.p[i] >= '0' && name.p[i] <= '9')
			i++;
		if (i == name.len)
			return false;
	}
	for (size_t k = 0; k < a; k++) {
		const oxp_attr *other = &n->attrs[k];
		if ((other->g != NULL || other->ngraphs > 0) && other->name.len == name.len &&
		    memcmp(other->name.p, name.p, name.len) == 0)
			return false;
	}
	return true;
}

static oxp_code add_scope(build *b, const gitem *it, uint32_t *out)
{
	if (b->nscopes >= b->cap_scopes)
		return oxp__set_error(b->err, OXP_E_LIMIT, 0, "", "scope count mismatch");
	uint32_t si = b->nscopes++;
	oxp_scope *s = &b->d->scopes[si];
	s->id = it->id;
	s->kind = it->kind;
	s->graph = it->graph;
	s->function = it->function;
	s->parent = it->parent;
	s->owner = it->owner;
	s->attr = it->attr;
	s->depth = it->depth;
	*out = si;
	return OXP_OK;
}

/* "n<index>", or "<scope id>.n<index>" inside a subgraph or function (one per node:
 * written by hand, a printf each was a fifth of the DAG's instructions). */
static const char *node_id(build *b, const oxp_scope *s, uint32_t index)
{
	char digits[10];
	size_t nd = 0;
	do {
		digits[nd++] = (char)('0' + index % 10);
		index /= 10;
	} while (index != 0);
	size_t plen = strlen(s->id);
	size_t len = (plen ? plen + 1 : 0) + 1 + nd;
	char *id = oxp__arena_alloc(b->d->arena, len + 1);
	if (id == NULL)
		return NULL;
	char *w = id;
	if (plen) {
		memcpy(w, s->id, plen);
		w += plen;
		*w++ = '.';
	}
	*w++ = 'n';
	while (nd > 0)
		*w++ = digits[--nd];
	*w = '\0';
	return id;
}

/* Create the nodes of scope si, and queue the scopes of their graph attributes right after
 * the scopes already laid out (breadth-first). */
static oxp_code add_nodes(build *b, uint32_t si)
{
	oxp_dag *d = b->d;
	oxp_scope *s = &d->scopes[si];
	const oxp_node *protos = s->graph ? s->graph->nodes : s->function->nodes;
	size_t n = s->graph ? s->graph->nnodes : s->function->nnodes;
	if (b->nnodes + n > b->cap_nodes)
		return oxp__set_error(b->err, OXP_E_LIMIT, 0, "", "node count mismatch");
	s->first_node = b->nnodes;
	s->nnodes = (uint32_t)n;
	for (size_t i = 0; i < n; i++) {
		uint32_t ni = b->nnodes++;
		oxp_dnode *dn = &d->nodes[ni];
		dn->proto = &protos[i];
		dn->scope = si;
		dn->index = (uint32_t)i;
		dn->function = OXP_NONE;
		dn->id = node_id(b, &d->scopes[si], (uint32_t)i);
		if (dn->id == NULL)
			return nomem(b);
		dn->inputs = alloc_array(b, dn->proto->ninputs, sizeof(uint32_t));
		dn->outputs = alloc_array(b, dn->proto->noutputs, sizeof(uint32_t));
		if (dn->inputs == NULL || dn->outputs == NULL)
			return nomem(b);
		dn->first_subscope = b->nscopes;
		for (size_t a = 0; a < dn->proto->nattrs; a++) {
			const oxp_attr *at = &dn->proto->attrs[a];
			size_t k_count = (at->g ? 1 : 0) + at->ngraphs;
			if (k_count == 0)
				continue;
			const char *aname = own_attr_name(dn->proto, a)
			                        ? oxp__arena_strndup(d->arena, at->name.p, at->name.len)
			                        : oxp__arena_printf(d->arena, "a%zu", a);
			if (aname == NULL)
				return nomem(b);
			for (size_t k = 0; k < k_count; k++) {
				gitem it = {0};
				it.graph = at->g && k == 0 ? at->g : &at->graphs[k - (at->g ? 1 : 0)];
				it.kind = OXP_SCOPE_SUBGRAPH;
				it.parent = si;
				it.owner = ni;
				it.attr = aname;
				it.depth = d->scopes[si].depth + 1;
				if (at->g && k == 0)
					it.id = oxp__arena_printf(d->arena, "%s.%s", dn->id, aname);
				else
					it.id = oxp__arena_printf(d->arena, "%s.%s.%zu", dn->id, aname,
					                          k - (at->g ? 1 : 0));
				if (it.id == NULL)
					return nomem(b);
				uint32_t sub;
				oxp_code rc = add_scope(b, &it, &sub);
				if (rc != OXP_OK)
					return rc;
				dn->nsubscopes++;
			}
		}
		if (dn->nsubscopes == 0)
			dn->first_subscope = OXP_NONE;
	}
	return OXP_OK;
}

/* ---------------------------------------------------------------------------------------
 * Step 3: values and names
 */
static oxp_code table_init(build *b, uint32_t si, size_t entries)
{
	uint32_t cap = pow2_at_least((uint64_t)entries * 2 + 1);
	uint32_t *t = malloc((size_t)cap * sizeof(uint32_t));
	if (t == NULL)
		return nomem(b);
	memset(t, 0xff, (size_t)cap * sizeof(uint32_t));
	b->tables[si] = t;
	b->table_caps[si] = cap;
	return OXP_OK;
}

static uint32_t table_find(const build *b, uint32_t si, oxp_str name)
{
	const uint32_t *t = b->tables[si];
	uint32_t mask = b->table_caps[si] - 1;
	uint32_t i = (uint32_t)oxp_hash(name.p, name.len, 0) & mask;
	for (;;) {
		uint32_t v = t[i];
		if (v == OXP_NONE)
			return OXP_NONE;
		if (str_eq(b->d->values[v].name, name))
			return v;
		i = (i + 1) & mask;
	}
}

/* Insert value vi under its name (the caller checked it is absent). */
static void table_put(build *b, uint32_t si, uint32_t vi)
{
	uint32_t *t = b->tables[si];
	uint32_t mask = b->table_caps[si] - 1;
	uint32_t i = (uint32_t)oxp_hash(b->d->values[vi].name.p, b->d->values[vi].name.len, 0) & mask;
	while (t[i] != OXP_NONE)
		i = (i + 1) & mask;
	t[i] = vi;
}

static oxp_code new_value(build *b, uint32_t si, oxp_str name, oxp_value_kind kind,
                          uint32_t *out)
{
	if (b->nvalues >= b->cap_values)
		return oxp__set_error(b->err, OXP_E_LIMIT, 0, "", "value count mismatch");
	uint32_t vi = b->nvalues++;
	oxp_value *v = &b->d->values[vi];
	v->name = name;
	v->scope = si;
	v->kind = kind;
	v->producer = OXP_NONE;
	v->producer_output = OXP_NONE;
	v->declared.rank = -1;
	v->inferred.rank = -1;
	*out = vi;
	return OXP_OK;
}

/* Look a name up in scope si, then in its enclosing scopes. *outer tells which. */
static uint32_t resolve(const build *b, uint32_t si, oxp_str name, bool *outer)
{
	*outer = false;
	uint32_t s = si;
	while (s != OXP_NONE) {
		uint32_t v = table_find(b, s, name);
		if (v != OXP_NONE)
			return v;
		s = b->d->scopes[s].parent;
		*outer = true;
	}
	*outer = false;
	return OXP_NONE;
}

static void declare_from_type(oxp_value *v, const oxp_type *t)
{
	if (t == NULL || (t->kind != OXP_TYPE_TENSOR && t->kind != OXP_TYPE_SPARSE_TENSOR))
		return;
	v->declared.source = OXP_SHAPE_DECLARED;
	v->declared.elem_type = t->elem_type;
	if (t->shape != NULL) {
		v->declared.rank = (int32_t)t->shape->ndims;
		v->declared.dims = t->shape->dims;
	} else {
		v->declared.rank = -1;
		v->declared.dims = NULL;
	}
}

static oxp_code declare_from_tensor(build *b, oxp_value *v, int32_t dtype, const int64_t *dims,
                                    size_t ndims)
{
	if (v->declared.source == OXP_SHAPE_DECLARED && v->declared.rank >= 0)
		return OXP_OK; /* a declared shape wins */
	oxp_dim *dd = alloc_array(b, ndims, sizeof(oxp_dim));
	if (dd == NULL)
		return nomem(b);
	for (size_t i = 0; i < ndims; i++) {
		dd[i].kind = OXP_DIM_VALUE;
		dd[i].value = dims[i];
	}
	v->declared.source = OXP_SHAPE_INITIALIZER;
	v->declared.elem_type = dtype;
	v->declared.rank = (int32_t)ndims;
	v->declared.dims = dd;
	return OXP_OK;
}

static void attach_info(oxp_value *v, const oxp_value_info *vi)
{
	if (v->info == NULL)
		v->info = vi;
	if (vi->type != NULL && (v->declared.source != OXP_SHAPE_DECLARED ||
	                         (v->declared.rank < 0 && vi->type->kind == OXP_TYPE_TENSOR &&
	                          vi->type->shape != NULL)))
		declare_from_type(v, vi->type);
}

static oxp_code register_name(build *b, uint32_t si, oxp_str name, oxp_value_kind kind,
                              uint32_t *out, bool *dup)
{
	*dup = false;
	uint32_t existing = table_find(b, si, name);
	oxp_code rc = new_value(b, si, name, kind, out);
	if (rc != OXP_OK)
		return rc;
	if (existing != OXP_NONE) {
		*dup = true;
		return OXP_OK;
	}
	table_put(b, si, *out);
	return OXP_OK;
}

static void warn_duplicate(build *b, uint32_t si, uint32_t vi, uint32_t node)
{
	char nm[420];
	oxp__printable(nm, sizeof(nm), b->d->values[vi].name);
	uint32_t first = table_find(b, si, b->d->values[vi].name);
	oxp_warning *w = warn(b, OXP_W_DUPLICATE, si, first,
	                      "value '%s' has more than one producer; the first one is used", nm);
	uint32_t nodes[2];
	uint32_t n = 0;
	if (first != OXP_NONE && b->d->values[first].producer != OXP_NONE)
		nodes[n++] = b->d->values[first].producer;
	if (node != OXP_NONE)
		nodes[n++] = node;
	warn_nodes(b, w, nodes, n);
}

static oxp_code link_scope(build *b, uint32_t si)
{
	oxp_dag *d = b->d;
	oxp_scope *s = &d->scopes[si];
	const oxp_graph *g = s->graph;
	const oxp_function *fn = s->function;
	oxp_code rc;
	bool dup;
	uint32_t vi;

	size_t entries = g ? graph_value_bound(g)
	                   : fn->ninputs + fn->noutputs + nodes_value_bound(fn->nodes, fn->nnodes);
	rc = table_init(b, si, entries);
	if (rc != OXP_OK)
		return rc;
	s->first_value = b->nvalues;

	/* initializers, then inputs (an input may name an initializer: IR < 4 lists them) */
	if (g != NULL) {
		for (size_t i = 0; i < g->ninitializers; i++) {
			const oxp_tensor *t = &g->initializers[i];
			rc = register_name(b, si, t->name, OXP_VALUE_INITIALIZER, &vi, &dup);
			if (rc != OXP_OK)
				return rc;
			d->values[vi].initializer = t;
			rc = declare_from_tensor(b, &d->values[vi], t->data_type, t->dims, t->ndims);
			if (rc != OXP_OK)
				return rc;
			if (dup)
				warn_duplicate(b, si, vi, OXP_NONE);
		}
		for (size_t i = 0; i < g->nsparse_initializers; i++) {
			const oxp_sparse_tensor *sp = &g->sparse_initializers[i];
			oxp_str name = sp->values ? sp->values->name : (oxp_str){"", 0};
			rc = register_name(b, si, name, OXP_VALUE_SPARSE_INITIALIZER, &vi, &dup);
			if (rc != OXP_OK)
				return rc;
			d->values[vi].sparse_initializer = sp;
			rc = declare_from_tensor(b, &d->values[vi],
			                         sp->values ? sp->values->data_type : 0, sp->dims,
			                         sp->ndims);
			if (rc != OXP_OK)
				return rc;
			if (dup)
				warn_duplicate(b, si, vi, OXP_NONE);
		}
	}
	size_t nin = g ? g->ninputs : fn->ninputs;
	s->ninputs = (uint32_t)nin;
	s->inputs = alloc_array(b, nin, sizeof(uint32_t));
	if (s->inputs == NULL)
		return nomem(b);
	for (size_t i = 0; i < nin; i++) {
		oxp_str name = g ? g->inputs[i].name : fn->inputs[i];
		uint32_t existing = table_find(b, si, name);
		if (existing != OXP_NONE && d->values[existing].kind != OXP_VALUE_INPUT) {
			vi = existing; /* an initializer listed as an input */
		} else {
			rc = register_name(b, si, name, OXP_VALUE_INPUT, &vi, &dup);
			if (rc != OXP_OK)
				return rc;
			if (dup)
				warn_duplicate(b, si, vi, OXP_NONE);
		}
		d->values[vi].graph_input = true;
		if (g != NULL)
			attach_info(&d->values[vi], &g->inputs[i]);
		s->inputs[i] = vi;
	}

	/* node outputs */
	for (uint32_t k = 0; k < s->nnodes; k++) {
		uint32_t ni = s->first_node + k;
		oxp_dnode *dn = &d->nodes[ni];
		for (size_t o = 0; o < dn->proto->noutputs; o++) {
			oxp_str name = dn->proto->outputs[o];
			if (name.len == 0) {
				dn->outputs[o] = OXP_NONE;
				continue;
			}
			rc = register_name(b, si, name, OXP_VALUE_NODE_OUTPUT, &vi, &dup);
			if (rc != OXP_OK)
				return rc;
			d->values[vi].producer = ni;
			d->values[vi].producer_output = (uint32_t)o;
			dn->outputs[o] = vi;
			if (dup)
				warn_duplicate(b, si, vi, ni);
		}
	}

	/* node inputs: edges */
	for (uint32_t k = 0; k < s->nnodes; k++) {
		uint32_t ni = s->first_node + k;
		oxp_dnode *dn = &d->nodes[ni];
		dn->first_edge_in = b->nedges;
		for (size_t in = 0; in < dn->proto->ninputs; in++) {
			oxp_str name = dn->proto->inputs[in];
			if (name.len == 0) {
				dn->inputs[in] = OXP_NONE;
				continue;
			}
			bool outer;
			vi = resolve(b, si, name, &outer);
			if (vi == OXP_NONE) {
				rc = new_value(b, si, name, OXP_VALUE_UNDEFINED, &vi);
				if (rc != OXP_OK)
					return rc;
				table_put(b, si, vi);
			}
			dn->inputs[in] = vi;
			if (b->nedges >= b->cap_edges)
				return oxp__set_error(b->err, OXP_E_LIMIT, 0, "", "edge count mismatch");
			oxp_edge *e = &d->edges[b->nedges++];
			e->value = vi;
			e->src = d->values[vi].producer;
			e->src_output = d->values[vi].producer_output;
			e->dst = ni;
			e->dst_input = (uint32_t)in;
			e->outer = outer;
			dn->nedges_in++;
		}
	}

	/* graph outputs */
	size_t nout = g ? g->noutputs : fn->noutputs;
	s->noutputs = (uint32_t)nout;
	s->outputs = alloc_array(b, nout, sizeof(uint32_t));
	if (s->outputs == NULL)
		return nomem(b);
	for (size_t i = 0; i < nout; i++) {
		oxp_str name = g ? g->outputs[i].name : fn->outputs[i];
		bool outer;
		vi = resolve(b, si, name, &outer);
		if (vi == OXP_NONE || d->values[vi].kind == OXP_VALUE_UNDEFINED) {
			char nm[420];
			oxp__printable(nm, sizeof(nm), name);
			warn(b, OXP_W_UNPRODUCED_OUTPUT, si, vi, "graph output '%s' is produced by nothing",
			     nm);
		}
		s->outputs[i] = vi;
		if (vi != OXP_NONE && !outer) {
			d->values[vi].graph_output = true;
			if (g != NULL)
				attach_info(&d->values[vi], &g->outputs[i]);
		}
	}

	/* value_info: declared types of intermediate values */
	const oxp_value_info *vinfo = g ? g->value_info : fn->value_info;
	size_t nvinfo = g ? g->nvalue_info : fn->nvalue_info;
	for (size_t i = 0; i < nvinfo; i++) {
		uint32_t v = table_find(b, si, vinfo[i].name);
		if (v != OXP_NONE)
			attach_info(&d->values[v], &vinfo[i]);
	}
	s->nvalues = b->nvalues - s->first_value;
	return OXP_OK;
}

/* ---------------------------------------------------------------------------------------
 * Step 4: consumers, order, warnings
 */
static oxp_code link_consumers(build *b)
{
	oxp_dag *d = b->d;
	for (uint32_t e = 0; e < b->nedges; e++)
		d->values[d->edges[e].value].nconsumers++;
	for (uint32_t v = 0; v < b->nvalues; v++) {
		if (d->values[v].nconsumers == 0)
			continue;
		d->values[v].consumers = alloc_array(b, d->values[v].nconsumers, sizeof(uint32_t));
		if (d->values[v].consumers == NULL)
			return nomem(b);
		d->values[v].nconsumers = 0;
	}
	for (uint32_t e = 0; e < b->nedges; e++) {
		oxp_value *v = &d->values[d->edges[e].value];
		v->consumers[v->nconsumers++] = e;
	}
	return OXP_OK;
}

/* The node of scope `scope` that contains node ni (ni itself, or the owner of the subgraph
 * holding it, walking outwards); OXP_NONE when ni is not below that scope. */
static uint32_t ancestor_in(const oxp_dag *d, uint32_t ni, uint32_t scope)
{
	while (ni != OXP_NONE && d->nodes[ni].scope != scope)
		ni = d->scopes[d->nodes[ni].scope].owner;
	return ni;
}

static void warn_dangling(build *b)
{
	oxp_dag *d = b->d;
	uint32_t nodes[MAX_WARNING_NODES];
	for (uint32_t v = 0; v < b->nvalues; v++) {
		const oxp_value *val = &d->values[v];
		if (val->kind != OXP_VALUE_UNDEFINED)
			continue;
		uint32_t n = 0;
		for (uint32_t c = 0; c < val->nconsumers && n < MAX_WARNING_NODES; c++)
			nodes[n++] = d->edges[val->consumers[c]].dst;
		char nm[420];
		oxp__printable(nm, sizeof(nm), val->name);
		oxp_warning *w = warn(b, OXP_W_DANGLING, val->scope, v,
		                      "input '%s' is not produced by any node, input or initializer", nm);
		warn_nodes(b, w, nodes, n);
	}
}

static void warn_unused(build *b)
{
	oxp_dag *d = b->d;
	for (uint32_t v = 0; v < b->nvalues; v++) {
		const oxp_value *val = &d->values[v];
		if ((val->kind != OXP_VALUE_INITIALIZER && val->kind != OXP_VALUE_SPARSE_INITIALIZER) ||
		    val->nconsumers > 0 || val->graph_output)
			continue;
		char nm[420];
		oxp__printable(nm, sizeof(nm), val->name);
		warn(b, OXP_W_UNUSED_INITIALIZER, val->scope, v, "initializer '%s' is never used", nm);
	}
}

/* Per scope: a node using a value produced by a node at or after it (directly, or through
 * a subgraph it holds) breaks the topological order; Kahn's algorithm then tells whether
 * the scope has a real cycle and which nodes are on or behind it.  One pass over the
 * edges computes in-degrees and late uses for all scopes at once. */
static oxp_code check_order(build *b)
{
	oxp_dag *d = b->d;
	uint32_t nn = b->nnodes;
	if (nn == 0)
		return OXP_OK;
	uint32_t *indeg = calloc(nn, sizeof(uint32_t));
	uint32_t *queue = malloc(nn * sizeof(uint32_t));
	uint32_t *late_count = calloc(b->nscopes, sizeof(uint32_t));
	oxp_code rc = OXP_OK;
	if (indeg == NULL || queue == NULL || late_count == NULL) {
		rc = nomem(b);
		goto out;
	}
	for (uint32_t e = 0; e < b->nedges; e++) {
		const oxp_edge *ed = &d->edges[e];
		if (ed->src == OXP_NONE)
			continue;
		uint32_t si = d->nodes[ed->src].scope;
		uint32_t q = ancestor_in(d, ed->dst, si);
		if (q == OXP_NONE)
			continue;
		indeg[q]++;
		if (d->nodes[ed->src].index >= d->nodes[q].index)
			late_count[si]++;
	}
	for (uint32_t si = 0; si < b->nscopes; si++) {
		if (late_count[si] == 0)
			continue;
		const oxp_scope *s = &d->scopes[si];
		/* the consumers that come too early, in node order (rare: a second pass is fine) */
		uint32_t late[MAX_WARNING_NODES];
		uint32_t nlate = 0;
		for (uint32_t e = 0; e < b->nedges && nlate < MAX_WARNING_NODES; e++) {
			const oxp_edge *ed = &d->edges[e];
			if (ed->src == OXP_NONE || d->nodes[ed->src].scope != si)
				continue;
			uint32_t q = ancestor_in(d, ed->dst, si);
			if (q != OXP_NONE && d->nodes[ed->src].index >= d->nodes[q].index &&
			    (nlate == 0 || late[nlate - 1] != q))
				late[nlate++] = q;
		}
		oxp_warning *w =
		    warn(b, OXP_W_NOT_SORTED, si, OXP_NONE,
		         "%" PRIu32 " input(s) in scope '%s' use values produced later in node order",
		         late_count[si], s->id[0] ? s->id : "main");
		warn_nodes(b, w, late, nlate);
		/* Kahn over this scope */
		uint32_t head = 0, tail = 0;
		for (uint32_t k = 0; k < s->nnodes; k++)
			if (indeg[s->first_node + k] == 0)
				queue[tail++] = s->first_node + k;
		while (head < tail) {
			uint32_t ni = queue[head++];
			for (size_t o = 0; o < d->nodes[ni].proto->noutputs; o++) {
				uint32_t vi = d->nodes[ni].outputs[o];
				if (vi == OXP_NONE)
					continue;
				for (uint32_t c = 0; c < d->values[vi].nconsumers; c++) {
					uint32_t q = ancestor_in(d, d->edges[d->values[vi].consumers[c]].dst, si);
					if (q != OXP_NONE && --indeg[q] == 0)
						queue[tail++] = q;
				}
			}
		}
		if (tail < s->nnodes) {
			uint32_t cyc[MAX_WARNING_NODES];
			uint32_t nc = 0;
			for (uint32_t k = 0; k < s->nnodes && nc < MAX_WARNING_NODES; k++)
				if (indeg[s->first_node + k] > 0)
					cyc[nc++] = s->first_node + k;
			oxp_warning *wc = warn(b, OXP_W_CYCLE, si, OXP_NONE,
			                       "%" PRIu32 " node(s) in scope '%s' are on or behind a cycle",
			                       s->nnodes - tail, s->id[0] ? s->id : "main");
			warn_nodes(b, wc, cyc, nc);
		}
	}
out:
	free(indeg);
	free(queue);
	free(late_count);
	return rc;
}

/* Link nodes to model-local functions by (domain, op_type, overload); fail on recursion. */
static oxp_code link_functions(build *b, const oxp_model_proto *p)
{
	oxp_dag *d = b->d;
	if (p->nfunctions == 0)
		return OXP_OK;
	uint32_t nf = (uint32_t)p->nfunctions;
	/* scope index of each function body */
	uint32_t *fscope = malloc(nf * sizeof(uint32_t));
	uint8_t *adj = NULL;
	uint8_t *state = NULL;
	uint32_t *stack = NULL;
	oxp_code rc = OXP_OK;
	if (fscope == NULL) {
		rc = nomem(b);
		goto out;
	}
	for (uint32_t si = 0, f = 0; si < b->nscopes && f < nf; si++)
		if (d->scopes[si].kind == OXP_SCOPE_FUNCTION)
			fscope[f++] = si;
	if ((size_t)nf * nf > (size_t)64 << 20) {
		rc = oxp__set_error(b->err, OXP_E_LIMIT, 0, "", "too many model-local functions");
		goto out;
	}
	adj = calloc((size_t)nf * nf, 1);
	state = calloc(nf, 1);
	stack = malloc((size_t)nf * 2 * sizeof(uint32_t));
	if (adj == NULL || state == NULL || stack == NULL) {
		rc = nomem(b);
		goto out;
	}
	for (uint32_t ni = 0; ni < b->nnodes; ni++) {
		oxp_dnode *dn = &d->nodes[ni];
		for (uint32_t f = 0; f < nf; f++) {
			const oxp_function *fn = &p->functions[f];
			if (str_eq(fn->name, dn->proto->op_type) && str_eq(fn->domain, dn->proto->domain) &&
			    str_eq(fn->overload, dn->proto->overload)) {
				dn->function = f;
				break;
			}
		}
		if (dn->function == OXP_NONE)
			continue;
		/* which function body (if any) is this node in? walk out to the top scope */
		uint32_t s = dn->scope;
		while (d->scopes[s].parent != OXP_NONE)
			s = d->scopes[s].parent;
		if (d->scopes[s].kind != OXP_SCOPE_FUNCTION)
			continue;
		for (uint32_t f = 0; f < nf; f++)
			if (fscope[f] == s)
				adj[(size_t)f * nf + dn->function] = 1;
	}
	/* iterative DFS for a cycle in the call graph: state 0 new, 1 on stack, 2 done */
	for (uint32_t root = 0; root < nf && rc == OXP_OK; root++) {
		if (state[root] != 0)
			continue;
		uint32_t top = 0;
		stack[top++] = root;
		stack[top++] = 0;
		state[root] = 1;
		while (top > 0) {
			uint32_t f = stack[top - 2];
			uint32_t next = stack[top - 1];
			if (next == nf) {
				state[f] = 2;
				top -= 2;
				continue;
			}
			stack[top - 1] = next + 1;
			if (!adj[(size_t)f * nf + next])
				continue;
			if (state[next] == 1) {
				char a[420], c[420];
				oxp__printable(a, sizeof(a), p->functions[f].name);
				oxp__printable(c, sizeof(c), p->functions[next].name);
				rc = oxp__set_error(b->err, OXP_E_RECURSION, 0, "functions",
				                    "model-local function '%s' calls '%s' recursively", a, c);
				break;
			}
			if (state[next] == 0) {
				state[next] = 1;
				stack[top++] = next;
				stack[top++] = 0;
			}
		}
	}
out:
	free(fscope);
	free(adj);
	free(state);
	free(stack);
	return rc;
}

static oxp_code build_id_table(build *b)
{
	oxp_dag *d = b->d;
	d->id_cap = pow2_at_least((uint64_t)b->nnodes * 2 + 1);
	d->id_table = oxp__arena_array(d->arena, d->id_cap, sizeof(uint32_t));
	if (d->id_table == NULL)
		return nomem(b);
	memset(d->id_table, 0xff, (size_t)d->id_cap * sizeof(uint32_t));
	uint32_t mask = d->id_cap - 1;
	for (uint32_t ni = 0; ni < b->nnodes; ni++) {
		const char *id = d->nodes[ni].id;
		uint32_t i = (uint32_t)oxp_hash(id, strlen(id), 0) & mask;
		while (d->id_table[i] != OXP_NONE)
			i = (i + 1) & mask;
		d->id_table[i] = ni;
	}
	return OXP_OK;
}

uint32_t oxp_dag_find_node(const oxp_dag *d, const char *id)
{
	if (d->id_cap == 0 || id == NULL)
		return OXP_NONE;
	uint32_t mask = d->id_cap - 1;
	uint32_t i = (uint32_t)oxp_hash(id, strlen(id), 0) & mask;
	for (;;) {
		uint32_t ni = d->id_table[i];
		if (ni == OXP_NONE)
			return OXP_NONE;
		if (strcmp(d->nodes[ni].id, id) == 0)
			return ni;
		i = (i + 1) & mask;
	}
}

uint32_t oxp_dag_find_value(const oxp_dag *d, uint32_t scope, oxp_str name)
{
	/* linear per scope: used for single look-ups (HTTP), not in loops */
	uint32_t s = scope;
	while (s != OXP_NONE && s < d->v.nscopes) {
		const oxp_scope *sc = &d->scopes[s];
		for (uint32_t k = 0; k < sc->nvalues; k++) {
			uint32_t vi = sc->first_value + k;
			if (str_eq(d->values[vi].name, name))
				return vi;
		}
		s = sc->parent;
	}
	return OXP_NONE;
}

/* Parse "<digits>" at *p into *out (no sign, at most 9 digits); advances *p. */
static bool parse_index(const char **p, uint32_t *out)
{
	const char *s = *p;
	uint32_t v = 0;
	int n = 0;
	while (*s >= '0' && *s <= '9' && n < 9) {
		v = v * 10 + (uint32_t)(*s - '0');
		s++;
		n++;
	}
	if (n == 0 || (*s >= '0' && *s <= '9'))
		return false;
	*p = s;
	*out = v;
	return true;
}

static const oxp_tensor *find_by_ref(const oxp_dag *d, const char *key)
{
	const char *at = strrchr(key, '@');
	if (at == NULL)
		return NULL;
	size_t plen = (size_t)(at - key);
	const char *p = at + 2;
	uint32_t k, j = 0;
	bool has_j = false;
	if (at[1] == '\0' || !parse_index(&p, &k))
		return NULL;
	if (*p == '.') {
		p++;
		if (!parse_index(&p, &j))
			return NULL;
		has_j = true;
	}
	if (*p != '\0')
		return NULL;
	char prefix[512];
	if (plen >= sizeof(prefix))
		return NULL;
	memcpy(prefix, key, plen);
	prefix[plen] = '\0';
	if (at[1] == 'a') { /* "<node id>@a<k>[.<j>]" */
		uint32_t ni = oxp_dag_find_node(d, prefix);
		if (ni == OXP_NONE || k >= d->nodes[ni].proto->nattrs)
			return NULL;
		const oxp_attr *a = &d->nodes[ni].proto->attrs[k];
		if (!has_j)
			return a->t != NULL ? a->t : a->sparse_tensor ? a->sparse_tensor->values : NULL;
		if (j < a->ntensors)
			return &a->tensors[j];
		if (j < a->nsparse_tensors)
			return a->sparse_tensors[j].values;
		return NULL;
	}
	if (has_j || (at[1] != 'i' && at[1] != 's'))
		return NULL;
	for (uint32_t si = 0; si < d->v.nscopes; si++) {
		const oxp_scope *s = &d->scopes[si];
		if (s->graph == NULL || strcmp(s->id, prefix) != 0)
			continue;
		if (at[1] == 'i')
			return k < s->graph->ninitializers ? &s->graph->initializers[k] : NULL;
		return k < s->graph->nsparse_initializers ? s->graph->sparse_initializers[k].values
		                                          : NULL;
	}
	return NULL;
}

const oxp_tensor *oxp_dag_find_tensor(const oxp_dag *d, const char *key)
{
	oxp_str name = {key, strlen(key)};
	/* initializers: main graph first (scope 0), then the others in order */
	for (uint32_t si = 0; si < d->v.nscopes; si++) {
		const oxp_scope *s = &d->scopes[si];
		if (s->graph == NULL)
			continue;
		for (size_t k = 0; k < s->graph->ninitializers; k++)
			if (str_eq(s->graph->initializers[k].name, name))
				return &s->graph->initializers[k];
	}
	/* a Constant's output */
	for (uint32_t vi = 0; vi < d->v.nvalues; vi++) {
		const oxp_value *v = &d->values[vi];
		if (v->producer == OXP_NONE || !str_eq(v->name, name))
			continue;
		const oxp_node *n = d->nodes[v->producer].proto;
		if (!oxp_str_eq(n->op_type, "Constant"))
			continue;
		for (size_t a = 0; a < n->nattrs; a++)
			if (n->attrs[a].t != NULL)
				return n->attrs[a].t;
	}
	return find_by_ref(d, key);
}

const oxp_value_type *oxp_value_best_type(const oxp_value *v)
{
	if (v->declared.source != OXP_SHAPE_NONE &&
	    (v->declared.rank >= 0 || v->inferred.source == OXP_SHAPE_NONE))
		return &v->declared;
	if (v->inferred.source != OXP_SHAPE_NONE)
		return &v->inferred;
	return &v->declared;
}

static void summarize(build *b)
{
	oxp_dag *d = b->d;
	oxp_dag_summary *sum = &d->v.summary;
	sum->nscopes = b->nscopes;
	for (uint32_t si = 0; si < b->nscopes; si++) {
		const oxp_scope *s = &d->scopes[si];
		if (s->kind == OXP_SCOPE_SUBGRAPH)
			sum->nsubgraphs++;
		if (s->depth > sum->max_depth)
			sum->max_depth = s->depth;
	}
	/* the parameters: oxp__dag_params, once the graph is linked and typed */
}

/* ---------------------------------------------------------------------------------------
 * Entry points
 */
oxp_code oxp_dag_build(oxp_dag **out, const oxp_model *model, const oxp_dag_options *opt,
                       oxp_error *err)
{
	if (err != NULL)
		memset(err, 0, sizeof(*err));
	const oxp_model_proto *p = oxp_model_proto_get(model);
	if (p == NULL)
		return oxp__set_error(err, OXP_E_NOT_MODEL, 0, "", "not a model");
	oxp_dag_options o = {.infer_shapes = true};
	if (opt != NULL)
		o = *opt;

	build bb = {0};
	build *b = &bb;
	b->err = err;
	oxp_code rc;
	oxp_dag *d = calloc(1, sizeof(*d));
	if (d == NULL)
		return oxp__set_error(err, OXP_E_NOMEM, 0, "", "out of memory");
	b->d = d;
	d->model = model;
	d->arena = oxp__arena_new(oxp_limits_default().max_alloc);
	if (d->arena == NULL) {
		free(d);
		return oxp__set_error(err, OXP_E_NOMEM, 0, "", "out of memory");
	}

	counter c = {0};
	rc = count_graphs(b, p, &c);
	if (rc != OXP_OK)
		goto fail;
	b->cap_scopes = (uint32_t)c.scopes;
	b->cap_nodes = (uint32_t)c.nodes;
	b->cap_values = (uint32_t)c.values;
	b->cap_edges = (uint32_t)c.edges;
	d->scopes = alloc_array(b, c.scopes, sizeof(oxp_scope));
	d->nodes = alloc_array(b, c.nodes, sizeof(oxp_dnode));
	d->values = alloc_array(b, c.values, sizeof(oxp_value));
	d->edges = alloc_array(b, c.edges, sizeof(oxp_edge));
	d->warnings_cap = MAX_WARNINGS;
	d->warnings = alloc_array(b, MAX_WARNINGS + 1, sizeof(oxp_warning));
	b->tables = calloc(c.scopes ? c.scopes : 1, sizeof(uint32_t *));
	b->table_caps = calloc(c.scopes ? c.scopes : 1, sizeof(uint32_t));
	if (d->scopes == NULL || d->nodes == NULL || d->values == NULL || d->edges == NULL ||
	    d->warnings == NULL || b->tables == NULL || b->table_caps == NULL) {
		rc = nomem(b);
		goto fail;
	}

	/* top-level scopes: main graph, functions, training graphs */
	uint32_t si;
	if (p->graph != NULL) {
		gitem it = {.graph = p->graph, .kind = OXP_SCOPE_MAIN, .parent = OXP_NONE,
		            .owner = OXP_NONE, .id = ""};
		if ((rc = add_scope(b, &it, &si)) != OXP_OK)
			goto fail;
	}
	for (size_t f = 0; f < p->nfunctions; f++) {
		gitem it = {.function = &p->functions[f], .kind = OXP_SCOPE_FUNCTION,
		            .parent = OXP_NONE, .owner = OXP_NONE};
		it.id = oxp__arena_printf(d->arena, "f%zu", f);
		if (it.id == NULL) {
			rc = nomem(b);
			goto fail;
		}
		if ((rc = add_scope(b, &it, &si)) != OXP_OK)
			goto fail;
	}
	for (size_t t = 0; t < p->ntraining_info; t++) {
		const oxp_training_info *ti = &p->training_info[t];
		const oxp_graph *gs[2] = {ti->initialization, ti->algorithm};
		static const char *const names[2] = {"initialization", "algorithm"};
		for (int k = 0; k < 2; k++) {
			if (gs[k] == NULL)
				continue;
			/* the training graphs see the main graph's names (onnx.proto: the algorithm
			 * works on ModelProto.graph's initializers) */
			gitem it = {.graph = gs[k], .kind = OXP_SCOPE_TRAINING,
			            .parent = p->graph != NULL ? 0 : OXP_NONE, .owner = OXP_NONE};
			it.id = oxp__arena_printf(d->arena, "t%zu.%s", t, names[k]);
			if (it.id == NULL) {
				rc = nomem(b);
				goto fail;
			}
			if ((rc = add_scope(b, &it, &si)) != OXP_OK)
				goto fail;
		}
	}
	/* breadth-first: each scope's nodes queue their subgraph scopes behind */
	for (uint32_t k = 0; k < b->nscopes; k++)
		if ((rc = add_nodes(b, k)) != OXP_OK)
			goto fail;
	/* parents are linked before their subgraphs (BFS order), so outer names resolve */
	for (uint32_t k = 0; k < b->nscopes; k++)
		if ((rc = link_scope(b, k)) != OXP_OK)
			goto fail;

	d->v.nscopes = b->nscopes;
	d->v.nnodes = b->nnodes;
	d->v.nvalues = b->nvalues;
	d->v.nedges = b->nedges;
	if ((rc = link_consumers(b)) != OXP_OK)
		goto fail;
	if ((rc = link_functions(b, p)) != OXP_OK)
		goto fail;
	warn_dangling(b);
	if ((rc = check_order(b)) != OXP_OK)
		goto fail;
	warn_unused(b);
	if (d->warnings_dropped > 0) {
		/* the spare slot allocated above holds the note */
		d->warnings_cap++;
		warn(b, OXP_W_DANGLING, 0, OXP_NONE, "%" PRIu32 " more warnings not listed",
		     d->warnings_dropped);
	}
	if ((rc = build_id_table(b)) != OXP_OK)
		goto fail;
	summarize(b);
	oxp__dag_resolve_schemas(d);

	d->v.scopes = d->scopes;
	d->v.nodes = d->nodes;
	d->v.values = d->values;
	d->v.edges = d->edges;
	d->v.warnings = d->warnings;
	if ((rc = oxp__dag_mark_bookkeeping(d, err)) != OXP_OK)
		goto fail;
	if (o.infer_shapes && (rc = oxp__dag_infer_shapes(d, err)) != OXP_OK)
		goto fail;
	if ((rc = oxp__dag_params(d, err)) != OXP_OK)
		goto fail;

	for (uint32_t k = 0; k < b->nscopes; k++)
		free(b->tables[k]);
	free(b->tables);
	free(b->table_caps);
	*out = d;
	return OXP_OK;
fail:
	if (b->tables != NULL)
		for (uint32_t k = 0; k < b->nscopes; k++)
			free(b->tables[k]);
	free(b->tables);
	free(b->table_caps);
	oxp_dag_free(d);
	return rc;
}

void oxp_dag_free(oxp_dag *d)
{
	if (d == NULL)
		return;
	oxp__arena_free(d->arena);
	free(d);
}

const oxp_dag_view *oxp_dag_get(const oxp_dag *d)
{
	return &d->v;
}
