/*
 * match.c — pairing A's scopes, nodes and tensors with B's.
 *
 * Scopes: the main graphs; model-local functions by (domain, name, overload); training
 * graphs by id; subgraphs through their owners once those are paired (the same attribute,
 * and index for GRAPHS).  A queue of scope pairs, parents first: nothing recursive.
 *
 * Nodes of a scope pair, in four steps (each only among nodes still unpaired):
 *   1. the same node name (the k-th node of a name in A with the k-th in B);
 *   2. the same name of a value they produce (renamed nodes of the same exporter);
 *   3. structure: from every pair, the consumers of its outputs (at the same input
 *      position, the same op), the producers of its inputs (the same op and output
 *      position), and the other consumers of its inputs; also from graph inputs and
 *      initializers of the same name.  Among candidates the best score wins: the same
 *      attributes, inputs from the same sources; ties go to the first in node order.
 *      A value is walked once per scope pair, and at most 512 of its consumers on each
 *      side are looked at (a bound on hostile fan-outs, not a rule of results);
 *   4. classes (op, domain, attributes, arity) with one unpaired node on each side; then
 *      step 3 again from those, until nothing new is found.
 * Tensors: initializers of paired scopes by name, then the initializers at the same input
 * of paired nodes, then equal content (dtype, dims, bytes).
 */
#include "diff/internal.h"

#include <stdlib.h>
#include <string.h>

#define MAX_CANDIDATES 512u
#define AMBIGUOUS (OXP_NONE - 1)

static bool std_domain(oxp_str d)
{
	return d.len == 0 || oxp_str_eq(d, "ai.onnx");
}

bool oxd__same_op(const oxp_node *x, const oxp_node *y)
{
	if (!oxd__same_str(x->op_type, y->op_type))
		return false;
	return oxd__same_str(x->domain, y->domain) || (std_domain(x->domain) && std_domain(y->domain));
}

static uint64_t attr_hash(const oxp_attr *a)
{
	uint64_t h = oxd__hash(a->name.p, a->name.len, (uint64_t)a->type);
	switch (a->type) {
	case OXP_ATTR_FLOAT:
		h = oxd__hash(&a->f, sizeof(a->f), h);
		break;
	case OXP_ATTR_INT:
		h = oxd__hash(&a->i, sizeof(a->i), h);
		break;
	case OXP_ATTR_STRING:
		h = oxd__hash(a->s.p, a->s.len, h);
		break;
	case OXP_ATTR_INTS:
		h = oxd__hash(a->ints, a->nints * sizeof(int64_t), h);
		break;
	case OXP_ATTR_FLOATS:
		h = oxd__hash(a->floats, a->nfloats * sizeof(float), h);
		break;
	case OXP_ATTR_STRINGS:
		for (size_t i = 0; i < a->nstrings; i++)
			h = oxd__hash(a->strings[i].p, a->strings[i].len, h);
		break;
	case OXP_ATTR_TENSOR:
		if (a->t != NULL)
			h = oxd__hash(a->t->dims, a->t->ndims * sizeof(int64_t),
			              h ^ (uint64_t)(uint32_t)a->t->data_type);
		break;
	case OXP_ATTR_GRAPHS:
		h ^= a->ngraphs;
		break;
	default:
		break;
	}
	return h;
}

uint64_t oxd__node_class(const oxp_node *n, bool with_attrs)
{
	uint64_t h = oxd__hash(n->op_type.p, n->op_type.len, 0x6f70);
	if (!std_domain(n->domain))
		h = oxd__hash(n->domain.p, n->domain.len, h);
	if (with_attrs)
		for (size_t i = 0; i < n->nattrs; i++)
			h += attr_hash(&n->attrs[i]) * 0x9e3779b97f4a7c15ull; /* order does not count */
	return h;
}

/* ---------------------------------------------------------------------------------------
 */
typedef struct scope_pair {
	uint32_t a, b;
} scope_pair;

typedef struct matcher {
	oxd_diff *d;
	const oxp_dag_view *A, *B;
	uint64_t *cls_a, *cls_b;  /* per node: op + attributes class */
	uint32_t *stamp_b;        /* per B value: the scope pair that walked its consumers */
	uint32_t stamp;
	uint32_t *work;           /* B nodes of new pairs (FIFO) */
	uint32_t head, nwork;
	uint32_t sa, sb;
	smap free_a;              /* names of A's values without producer ... */
	uint32_t *free_next;      /* ... chained per name, in value order */
	vec queue;                /* scope_pair */
	bool oom;
} matcher;

static void pair_nodes(matcher *m, uint32_t a, uint32_t b, oxd_how how)
{
	m->d->pa[a] = b;
	m->d->pb[b] = a;
	m->d->how_b[b] = (uint8_t)how;
	m->work[m->nwork++] = b; /* every B node is paired at most once: room for all */
}

static bool unpaired_in_a(const matcher *m, uint32_t n)
{
	return m->d->pa[n] == OXP_NONE && m->A->nodes[n].scope == m->sa;
}

static bool unpaired_in_b(const matcher *m, uint32_t n)
{
	return m->d->pb[n] == OXP_NONE && m->B->nodes[n].scope == m->sb;
}

/* The two values come from the same place as far as is known now. */
static bool same_source_now(const matcher *m, uint32_t ia, uint32_t ib)
{
	if (ia == OXP_NONE || ib == OXP_NONE)
		return ia == ib;
	const oxp_value *x = &m->A->values[ia], *y = &m->B->values[ib];
	if (x->producer != OXP_NONE || y->producer != OXP_NONE)
		return x->producer != OXP_NONE && y->producer != OXP_NONE &&
		       m->d->pa[x->producer] == y->producer && x->producer_output == y->producer_output;
	return oxd__same_str(x->name, y->name);
}

static int score(const matcher *m, uint32_t ca, uint32_t cb)
{
	const oxp_dnode *x = &m->A->nodes[ca], *y = &m->B->nodes[cb];
	int s = m->cls_a[ca] == m->cls_b[cb] ? 16 : 0;
	size_t n = x->proto->ninputs < y->proto->ninputs ? x->proto->ninputs : y->proto->ninputs;
	for (size_t k = 0; k < n && k < 8; k++)
		if (same_source_now(m, x->inputs[k], y->inputs[k]))
			s += 2;
	s += x->proto->noutputs == y->proto->noutputs;
	return s;
}

/* Pair the unpaired consumers of vb (in scope sb) with those of va (in scope sa). */
static void consumers(matcher *m, uint32_t va, uint32_t vb)
{
	if (va == OXP_NONE || vb == OXP_NONE || m->stamp_b[vb] == m->stamp)
		return;
	m->stamp_b[vb] = m->stamp;
	const oxp_value *x = &m->A->values[va], *y = &m->B->values[vb];
	uint32_t na = x->nconsumers < MAX_CANDIDATES ? x->nconsumers : MAX_CANDIDATES;
	uint32_t nb = y->nconsumers < MAX_CANDIDATES ? y->nconsumers : MAX_CANDIDATES;
	for (uint32_t j = 0; j < nb; j++) {
		const oxp_edge *eb = &m->B->edges[y->consumers[j]];
		if (!unpaired_in_b(m, eb->dst))
			continue;
		const oxp_node *nb_ = m->B->nodes[eb->dst].proto;
		uint32_t best = OXP_NONE;
		int bests = -1;
		for (uint32_t i = 0; i < na; i++) {
			const oxp_edge *ea = &m->A->edges[x->consumers[i]];
			if (ea->dst_input != eb->dst_input || !unpaired_in_a(m, ea->dst) ||
			    !oxd__same_op(m->A->nodes[ea->dst].proto, nb_))
				continue;
			int s = score(m, ea->dst, eb->dst);
			if (s > bests) {
				bests = s;
				best = ea->dst;
			}
		}
		if (best != OXP_NONE)
			pair_nodes(m, best, eb->dst, OXD_HOW_STRUCTURE);
	}
}

/* The value of A that plays vb's part, as far as is known: the same output of the
 * producer's partner, or a value without producer of the same name visible in sa. */
static uint32_t equivalent_a(const matcher *m, uint32_t vb)
{
	const oxp_value *y = &m->B->values[vb];
	if (y->producer != OXP_NONE) {
		uint32_t pa = m->d->pb[y->producer];
		if (pa == OXP_NONE || y->producer_output >= m->A->nodes[pa].proto->noutputs)
			return OXP_NONE;
		return m->A->nodes[pa].outputs[y->producer_output];
	}
	/* the nearest of sa and its enclosing scopes that has such a value (a bounded walk:
	 * thousands of subgraphs with an input "x" each must not make this quadratic) */
	smap_entry *e = oxd__smap_find(&m->free_a, y->name);
	uint32_t best = OXP_NONE, best_dist = OXP_NONE, steps = 0;
	for (uint32_t v = e ? e->val : OXP_NONE; v != OXP_NONE && steps < 64;
	     v = m->free_next[v], steps++) {
		uint32_t dist = 0;
		for (uint32_t s = m->sa; s != OXP_NONE && dist < 64; s = m->A->scopes[s].parent, dist++)
			if (m->A->values[v].scope == s) {
				if (dist < best_dist) {
					best = v;
					best_dist = dist;
				}
				break;
			}
	}
	return best;
}

static void propagate(matcher *m)
{
	while (m->head < m->nwork) {
		uint32_t xb = m->work[m->head++];
		uint32_t xa = m->d->pb[xb];
		const oxp_dnode *x = &m->A->nodes[xa], *y = &m->B->nodes[xb];
		if (y->scope != m->sb)
			continue;
		size_t no = x->proto->noutputs < y->proto->noutputs ? x->proto->noutputs
		                                                    : y->proto->noutputs;
		for (size_t o = 0; o < no; o++)
			consumers(m, x->outputs[o], y->outputs[o]);
		size_t ni = x->proto->ninputs < y->proto->ninputs ? x->proto->ninputs : y->proto->ninputs;
		for (size_t k = 0; k < ni; k++) {
			uint32_t ia = x->inputs[k], ib = y->inputs[k];
			if (ia == OXP_NONE || ib == OXP_NONE)
				continue;
			uint32_t pa = m->A->values[ia].producer, pb = m->B->values[ib].producer;
			if (pa != OXP_NONE && pb != OXP_NONE && unpaired_in_a(m, pa) &&
			    unpaired_in_b(m, pb) &&
			    m->A->values[ia].producer_output == m->B->values[ib].producer_output &&
			    oxd__same_op(m->A->nodes[pa].proto, m->B->nodes[pb].proto))
				pair_nodes(m, pa, pb, OXD_HOW_STRUCTURE);
			consumers(m, ia, ib);
		}
	}
}

typedef struct keyed {
	uint64_t key;
	uint32_t node;
} keyed;

static int by_key(const void *p, const void *q)
{
	const keyed *x = p, *y = q;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->node > y->node) - (x->node < y->node);
}

/* One side's unpaired nodes of scope S, keyed by class and arity, into out; how many. */
static uint32_t unpaired_keyed(keyed *out, const oxp_dag_view *G, const oxp_scope *S,
                               const uint32_t *pair, const uint64_t *cls)
{
	uint32_t k = 0;
	for (uint32_t i = 0; i < S->nnodes; i++) {
		uint32_t n = S->first_node + i;
		if (pair[n] != OXP_NONE)
			continue;
		const oxp_node *p = G->nodes[n].proto;
		out[k].key = cls[n] ^ (p->ninputs * 0x100000001b3ull) ^ (p->noutputs << 20);
		out[k++].node = n;
	}
	return k;
}

/* Step 4: classes with exactly one unpaired node on each side; how many were paired. */
static uint32_t unique_classes(matcher *m, const oxp_scope *SA, const oxp_scope *SB)
{
	keyed *ka = malloc((size_t)(SA->nnodes ? SA->nnodes : 1) * sizeof(keyed));
	keyed *kb = malloc((size_t)(SB->nnodes ? SB->nnodes : 1) * sizeof(keyed));
	uint32_t na = 0, nb = 0, paired = 0;
	if (ka == NULL || kb == NULL) {
		m->oom = true;
		goto out;
	}
	na = unpaired_keyed(ka, m->A, SA, m->d->pa, m->cls_a);
	nb = unpaired_keyed(kb, m->B, SB, m->d->pb, m->cls_b);
	qsort(ka, na, sizeof(keyed), by_key);
	qsort(kb, nb, sizeof(keyed), by_key);
	for (uint32_t i = 0, j = 0; i < na && j < nb;) {
		if (ka[i].key != kb[j].key) {
			if (ka[i].key < kb[j].key)
				i++;
			else
				j++;
			continue;
		}
		uint32_t ie = i, je = j;
		while (ie < na && ka[ie].key == ka[i].key)
			ie++;
		while (je < nb && kb[je].key == kb[j].key)
			je++;
		if (ie - i == 1 && je - j == 1 &&
		    oxd__same_op(m->A->nodes[ka[i].node].proto, m->B->nodes[kb[j].node].proto)) {
			pair_nodes(m, ka[i].node, kb[j].node, OXD_HOW_STRUCTURE);
			paired++;
		}
		i = ie;
		j = je;
	}
out:
	free(ka);
	free(kb);
	return paired;
}

/* Steps 1 and 2: names of nodes, then names of the values they produce. */
static void by_names(matcher *m, const oxp_scope *SA, const oxp_scope *SB)
{
	oxd_diff *d = m->d;
	smap names;
	uint32_t *next = malloc((size_t)(SA->nnodes ? SA->nnodes : 1) * sizeof(uint32_t));
	if (next == NULL || !oxd__smap_init(&names, SA->nnodes)) {
		free(next);
		m->oom = true;
		return;
	}
	bool fresh;
	/* chains in node order: pushed from the last node to the first */
	for (uint32_t k = SA->nnodes; k-- > 0;) {
		oxp_str name = m->A->nodes[SA->first_node + k].proto->name;
		if (name.len == 0)
			continue;
		smap_entry *e = oxd__smap_put(&names, name, &fresh);
		next[k] = e->val;
		e->val = k;
	}
	for (uint32_t k = 0; k < SB->nnodes; k++) {
		uint32_t nb = SB->first_node + k;
		oxp_str name = m->B->nodes[nb].proto->name;
		smap_entry *e = name.len ? oxd__smap_find(&names, name) : NULL;
		if (e == NULL)
			continue;
		while (e->val != OXP_NONE && d->pa[SA->first_node + e->val] != OXP_NONE)
			e->val = next[e->val];
		if (e->val == OXP_NONE)
			continue;
		pair_nodes(m, SA->first_node + e->val, nb, OXD_HOW_NAME);
		e->val = next[e->val];
	}
	oxd__smap_free(&names);
	free(next);

	/* output value names of the nodes left */
	uint64_t nout = 0;
	for (uint32_t k = 0; k < SA->nnodes; k++)
		if (d->pa[SA->first_node + k] == OXP_NONE)
			nout += m->A->nodes[SA->first_node + k].proto->noutputs;
	if (nout == 0)
		return;
	smap outs;
	if (nout > UINT32_MAX / 4 || !oxd__smap_init(&outs, (uint32_t)nout)) {
		m->oom = true;
		return;
	}
	for (uint32_t k = 0; k < SA->nnodes; k++) {
		uint32_t na = SA->first_node + k;
		if (d->pa[na] != OXP_NONE)
			continue;
		const oxp_node *p = m->A->nodes[na].proto;
		for (size_t o = 0; o < p->noutputs; o++) {
			if (p->outputs[o].len == 0)
				continue;
			smap_entry *e = oxd__smap_put(&outs, p->outputs[o], &fresh);
			e->val = fresh ? na : AMBIGUOUS;
		}
	}
	for (uint32_t k = 0; k < SB->nnodes; k++) {
		uint32_t nb = SB->first_node + k;
		if (d->pb[nb] != OXP_NONE)
			continue;
		const oxp_node *p = m->B->nodes[nb].proto;
		for (size_t o = 0; o < p->noutputs; o++) {
			smap_entry *e = p->outputs[o].len ? oxd__smap_find(&outs, p->outputs[o]) : NULL;
			if (e == NULL || e->val >= AMBIGUOUS || d->pa[e->val] != OXP_NONE)
				continue;
			pair_nodes(m, e->val, nb, OXD_HOW_OUTPUT);
			break;
		}
	}
	oxd__smap_free(&outs);
}

static void push_scopes(matcher *m, uint32_t a, uint32_t b)
{
	m->d->sa[a] = b;
	m->d->sb[b] = a;
	scope_pair *p = oxd__push(&m->queue, sizeof(scope_pair));
	if (p == NULL) {
		m->oom = true;
		return;
	}
	p->a = a;
	p->b = b;
}

/* The part of a subgraph scope's id after its owner's id: ".then_branch", ".branches.1". */
static oxp_str scope_suffix(const oxp_dag_view *v, uint32_t s)
{
	const char *id = v->scopes[s].id;
	uint32_t owner = v->scopes[s].owner;
	size_t skip = owner != OXP_NONE ? strlen(v->nodes[owner].id) : 0;
	size_t n = strlen(id);
	return (oxp_str){id + (skip < n ? skip : n), n - (skip < n ? skip : n)};
}

/* Subgraphs of the pairs just made. */
static void pair_subscopes(matcher *m, const oxp_scope *SB)
{
	for (uint32_t k = 0; k < SB->nnodes && !m->oom; k++) {
		uint32_t nb = SB->first_node + k, na = m->d->pb[nb];
		if (na == OXP_NONE)
			continue;
		const oxp_dnode *x = &m->A->nodes[na], *y = &m->B->nodes[nb];
		if (x->nsubscopes == 0 || y->nsubscopes == 0)
			continue;
		smap sub;
		if (!oxd__smap_init(&sub, x->nsubscopes)) {
			m->oom = true;
			return;
		}
		bool fresh;
		for (uint32_t i = 0; i < x->nsubscopes; i++) {
			smap_entry *e = oxd__smap_put(&sub, scope_suffix(m->A, x->first_subscope + i), &fresh);
			if (fresh)
				e->val = x->first_subscope + i;
		}
		for (uint32_t j = 0; j < y->nsubscopes; j++) {
			uint32_t sb = y->first_subscope + j;
			smap_entry *e = oxd__smap_find(&sub, scope_suffix(m->B, sb));
			if (e != NULL && e->val != OXP_NONE && m->d->sa[e->val] == OXP_NONE) {
				push_scopes(m, e->val, sb);
				e->val = OXP_NONE;
			}
		}
		oxd__smap_free(&sub);
	}
}

static void match_scope(matcher *m, uint32_t sa, uint32_t sb)
{
	const oxp_scope *SA = &m->A->scopes[sa], *SB = &m->B->scopes[sb];
	m->sa = sa;
	m->sb = sb;
	m->stamp++;
	m->head = m->nwork = 0;
	by_names(m, SA, SB);
	if (m->oom)
		return;
	/* seeds: values without producer (inputs, initializers, outer values by name) and
	 * the outer values the scope's nodes use */
	for (uint32_t k = 0; k < SB->nvalues; k++) {
		uint32_t vb = SB->first_value + k;
		if (m->B->values[vb].producer == OXP_NONE)
			consumers(m, equivalent_a(m, vb), vb);
	}
	for (uint32_t k = 0; k < SB->nnodes; k++) {
		const oxp_dnode *y = &m->B->nodes[SB->first_node + k];
		for (size_t i = 0; i < y->proto->ninputs; i++) {
			uint32_t vb = y->inputs[i];
			if (vb != OXP_NONE && m->B->values[vb].scope != sb)
				consumers(m, equivalent_a(m, vb), vb);
		}
	}
	for (int round = 0; round < 8; round++) {
		propagate(m);
		if (unique_classes(m, SA, SB) == 0 || m->oom)
			break;
	}
	propagate(m);
	pair_subscopes(m, SB);
}

/* Top-level scopes other than the main graph: functions and training graphs. */
static void pair_top_scopes(matcher *m)
{
	const oxp_dag_view *A = m->A, *B = m->B;
	if (A->nscopes > 0 && B->nscopes > 0 && A->scopes[0].kind == OXP_SCOPE_MAIN &&
	    B->scopes[0].kind == OXP_SCOPE_MAIN)
		push_scopes(m, 0, 0);
	smap keys;
	if (!oxd__smap_init(&keys, A->nscopes)) {
		m->oom = true;
		return;
	}
	/* a function's key: domain \0 name \0 overload, in the arena */
	bool fresh;
	for (int side = 0; side < 2; side++) {
		const oxp_dag_view *v = side ? B : A;
		for (uint32_t s = 0; s < v->nscopes; s++) {
			const oxp_scope *sc = &v->scopes[s];
			oxp_str key;
			if (sc->kind == OXP_SCOPE_FUNCTION && sc->function != NULL) {
				const oxp_function *f = sc->function;
				char *k = oxp_arena_printf(m->d->arena, "F%.*s%c%.*s%c%.*s", (int)f->domain.len,
				                           f->domain.p, 0, (int)f->name.len, f->name.p, 0,
				                           (int)f->overload.len, f->overload.p);
				if (k == NULL) {
					m->oom = true;
					break;
				}
				key = (oxp_str){k, 3 + f->domain.len + f->name.len + f->overload.len};
			} else if (sc->kind == OXP_SCOPE_TRAINING && sc->owner == OXP_NONE) {
				key = (oxp_str){sc->id, strlen(sc->id)};
			} else {
				continue;
			}
			if (side == 0) {
				smap_entry *e = oxd__smap_put(&keys, key, &fresh);
				if (fresh)
					e->val = s;
			} else {
				smap_entry *e = oxd__smap_find(&keys, key);
				if (e != NULL && e->val != OXP_NONE) {
					push_scopes(m, e->val, s);
					e->val = OXP_NONE;
				}
			}
		}
	}
	oxd__smap_free(&keys);
}

/* ---------------------------------------------------------------------------------------
 * Tensors
 */
static bool is_init(const oxp_value *v)
{
	return v->kind == OXP_VALUE_INITIALIZER ||
	       (v->kind == OXP_VALUE_SPARSE_INITIALIZER && v->sparse_initializer->values != NULL);
}

static const oxp_tensor *tensor_of(const oxp_value *v)
{
	return v->kind == OXP_VALUE_INITIALIZER ? v->initializer : v->sparse_initializer->values;
}

static oxd_tensor *new_tensor(oxd_diff *d, uint32_t va, uint32_t vb, oxd_how how)
{
	oxd_tensor *t = oxd__push(&d->tensors, sizeof(oxd_tensor));
	if (t == NULL)
		return NULL;
	uint32_t idx = d->tensors.n - 1;
	const oxp_value *x = va != OXP_NONE ? &d->va->values[va] : NULL;
	const oxp_value *y = vb != OXP_NONE ? &d->vb->values[vb] : NULL;
	const oxp_value *any = y ? y : x;
	t->kind = any->kind == OXP_VALUE_SPARSE_INITIALIZER ? OXD_T_SPARSE : OXD_T_INITIALIZER;
	t->how = how;
	t->a = x ? tensor_of(x) : NULL;
	t->b = y ? tensor_of(y) : NULL;
	t->scope_a = x ? x->scope : OXP_NONE;
	t->scope_b = y ? y->scope : OXP_NONE;
	t->node = OXP_NONE;
	t->status = x == NULL ? OXD_ADDED : y == NULL ? OXD_REMOVED : OXD_SAME;
	if (va != OXP_NONE)
		d->ta[va] = idx;
	if (vb != OXP_NONE)
		d->tb[vb] = idx;
	return t;
}

static uint64_t content_key(const oxp_tensor *t)
{
	uint64_t h = oxd__hash(t->dims, t->ndims * sizeof(int64_t), (uint64_t)(uint32_t)t->data_type);
	if (t->storage == OXP_STORE_RAW)
		h = oxd__hash(t->raw_data.p, t->raw_data.len, h);
	return h;
}

static bool same_content(const oxp_tensor *x, const oxp_tensor *y)
{
	if (x->data_type != y->data_type || x->ndims != y->ndims || x->storage != OXP_STORE_RAW ||
	    y->storage != OXP_STORE_RAW || x->raw_data.len != y->raw_data.len)
		return false;
	if (x->ndims && memcmp(x->dims, y->dims, x->ndims * sizeof(int64_t)) != 0)
		return false;
	return x->raw_data.len == 0 || memcmp(x->raw_data.p, y->raw_data.p, x->raw_data.len) == 0;
}

static bool pair_tensors(oxd_diff *d, uint32_t sa, uint32_t sb)
{
	const oxp_dag_view *A = d->va, *B = d->vb;
	const oxp_scope *SA = &A->scopes[sa], *SB = &B->scopes[sb];
	smap names;
	if (!oxd__smap_init(&names, SA->nvalues))
		return false;
	bool fresh, ok = true;
	for (uint32_t k = 0; k < SA->nvalues; k++) {
		uint32_t v = SA->first_value + k;
		if (!is_init(&A->values[v]))
			continue;
		smap_entry *e = oxd__smap_put(&names, A->values[v].name, &fresh);
		if (fresh)
			e->val = v;
	}
	for (uint32_t k = 0; k < SB->nvalues && ok; k++) {
		uint32_t v = SB->first_value + k;
		if (!is_init(&B->values[v]))
			continue;
		smap_entry *e = oxd__smap_find(&names, B->values[v].name);
		if (e == NULL || e->val == OXP_NONE || A->values[e->val].kind != B->values[v].kind)
			continue;
		ok = new_tensor(d, e->val, v, OXD_HOW_NAME) != NULL;
		e->val = OXP_NONE;
	}
	oxd__smap_free(&names);
	/* the same input of paired nodes */
	for (uint32_t k = 0; k < SB->nnodes && ok; k++) {
		uint32_t nb = SB->first_node + k, na = d->pb[nb];
		if (na == OXP_NONE)
			continue;
		const oxp_dnode *x = &A->nodes[na], *y = &B->nodes[nb];
		size_t n = x->proto->ninputs < y->proto->ninputs ? x->proto->ninputs : y->proto->ninputs;
		for (size_t i = 0; i < n && ok; i++) {
			uint32_t ia = x->inputs[i], ib = y->inputs[i];
			if (ia == OXP_NONE || ib == OXP_NONE || d->ta[ia] != OXP_NONE ||
			    d->tb[ib] != OXP_NONE || A->values[ia].scope != sa || B->values[ib].scope != sb ||
			    !is_init(&A->values[ia]) || A->values[ia].kind != B->values[ib].kind)
				continue;
			ok = new_tensor(d, ia, ib, OXD_HOW_STRUCTURE) != NULL;
		}
	}
	/* equal content */
	keyed *ka = malloc((size_t)(SA->nvalues ? SA->nvalues : 1) * sizeof(keyed));
	keyed *kb = malloc((size_t)(SB->nvalues ? SB->nvalues : 1) * sizeof(keyed));
	uint32_t na = 0, nb = 0;
	if (ka == NULL || kb == NULL)
		ok = false;
	for (uint32_t k = 0; ok && k < SA->nvalues; k++) {
		uint32_t v = SA->first_value + k;
		if (is_init(&A->values[v]) && d->ta[v] == OXP_NONE)
			ka[na++] = (keyed){content_key(tensor_of(&A->values[v])), v};
	}
	for (uint32_t k = 0; ok && k < SB->nvalues; k++) {
		uint32_t v = SB->first_value + k;
		if (is_init(&B->values[v]) && d->tb[v] == OXP_NONE)
			kb[nb++] = (keyed){content_key(tensor_of(&B->values[v])), v};
	}
	if (ok) {
		qsort(ka, na, sizeof(keyed), by_key);
		qsort(kb, nb, sizeof(keyed), by_key);
	}
	for (uint32_t i = 0, j = 0; ok && i < na && j < nb;) {
		if (ka[i].key != kb[j].key) {
			if (ka[i].key < kb[j].key)
				i++;
			else
				j++;
			continue;
		}
		const oxp_value *x = &A->values[ka[i].node], *y = &B->values[kb[j].node];
		if (x->kind == y->kind && same_content(tensor_of(x), tensor_of(y)))
			ok = new_tensor(d, ka[i].node, kb[j].node, OXD_HOW_CONTENT) != NULL;
		i++;
		j++;
	}
	free(ka);
	free(kb);
	return ok;
}

/* Initializers no pair was found for: removed (A) and added (B). */
static bool unpaired_tensors(oxd_diff *d)
{
	for (uint32_t v = 0; v < d->va->nvalues; v++)
		if (is_init(&d->va->values[v]) && d->ta[v] == OXP_NONE &&
		    new_tensor(d, v, OXP_NONE, OXD_HOW_NONE) == NULL)
			return false;
	for (uint32_t v = 0; v < d->vb->nvalues; v++)
		if (is_init(&d->vb->values[v]) && d->tb[v] == OXP_NONE &&
		    new_tensor(d, OXP_NONE, v, OXD_HOW_NONE) == NULL)
			return false;
	return true;
}

/* ---------------------------------------------------------------------------------------
 */
bool oxd__match(oxd_diff *d)
{
	matcher m;
	memset(&m, 0, sizeof(m));
	m.d = d;
	m.A = d->va;
	m.B = d->vb;
	uint32_t nna = m.A->nnodes, nnb = m.B->nnodes;
	m.cls_a = malloc((size_t)(nna ? nna : 1) * sizeof(uint64_t));
	m.cls_b = malloc((size_t)(nnb ? nnb : 1) * sizeof(uint64_t));
	m.stamp_b = calloc(m.B->nvalues ? m.B->nvalues : 1, sizeof(uint32_t));
	m.work = malloc((size_t)(nnb ? nnb : 1) * sizeof(uint32_t));
	m.free_next = malloc((size_t)(m.A->nvalues ? m.A->nvalues : 1) * sizeof(uint32_t));
	bool ok = m.cls_a && m.cls_b && m.stamp_b && m.work && m.free_next &&
	          oxd__smap_init(&m.free_a, m.A->nvalues);
	bool fresh;
	for (uint32_t v = m.A->nvalues; ok && v-- > 0;) {
		if (m.A->values[v].producer != OXP_NONE)
			continue;
		smap_entry *e = oxd__smap_put(&m.free_a, m.A->values[v].name, &fresh);
		m.free_next[v] = e->val;
		e->val = v;
	}
	for (uint32_t n = 0; ok && n < nna; n++)
		m.cls_a[n] = oxd__node_class(m.A->nodes[n].proto, true);
	for (uint32_t n = 0; ok && n < nnb; n++)
		m.cls_b[n] = oxd__node_class(m.B->nodes[n].proto, true);
	if (ok)
		pair_top_scopes(&m);
	/* the queue grows while it is walked: subgraphs of paired nodes join at the end */
	for (uint32_t q = 0; ok && !m.oom && q < m.queue.n; q++) {
		scope_pair p = ((scope_pair *)m.queue.p)[q];
		match_scope(&m, p.a, p.b);
	}
	ok = ok && !m.oom;
	for (uint32_t q = 0; ok && q < m.queue.n; q++) {
		scope_pair p = ((scope_pair *)m.queue.p)[q];
		if (d->va->scopes[p.a].graph != NULL && d->vb->scopes[p.b].graph != NULL)
			ok = pair_tensors(d, p.a, p.b);
	}
	ok = ok && unpaired_tensors(d);
	free(m.cls_a);
	free(m.cls_b);
	free(m.stamp_b);
	free(m.work);
	free(m.free_next);
	oxd__smap_free(&m.free_a);
	free(m.queue.p);
	return ok;
}
