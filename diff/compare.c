/*
 * compare.c — what differs, once things are paired (match.c): node records and their
 * changes, graph inputs and outputs, model-level fields, functions, the summary.
 *
 * A node pair's changes: op type, domain, overload, name; attributes by name (old ->
 * new; a TENSOR attribute whose values differ gets a tensor record with figures); each
 * input whose source differs (the producers are not a pair at the same output, or the
 * initializers are not a pair, or graph inputs of other names); each output present on
 * one side only; each output whose element type or shape differs where both are known
 * (declared or inferred: "unknown" on one side is not a difference); each input whose
 * initializer pair differs in content; and "subgraph" when a node below it (in its
 * subgraphs, or in the model-local function it calls) differs.
 * Doc strings are not compared (exporters put stack traces there).
 */
#include "diff/internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pending {
	uint32_t record, seq;
	oxd_change c;
} pending;

typedef struct cmp {
	oxd_diff *d;
	vec pend;     /* pending changes (record, seq, change) */
	bool oom;
} cmp;

static void add(cmp *c, uint32_t record, oxd_change_kind kind, uint32_t pos, uint32_t tensor,
                const oxp_attr *a, const oxp_attr *b)
{
	pending *p = oxd__push(&c->pend, sizeof(pending));
	if (p == NULL) {
		c->oom = true;
		return;
	}
	p->record = record;
	p->seq = c->pend.n;
	p->c.kind = kind;
	p->c.pos = pos;
	p->c.tensor = tensor;
	p->c.a = a;
	p->c.b = b;
}

static bool std_domain(oxp_str d)
{
	return d.len == 0 || oxp_str_eq(d, "ai.onnx");
}

static bool is_init(const oxp_value *v)
{
	return v->kind == OXP_VALUE_INITIALIZER ||
	       (v->kind == OXP_VALUE_SPARSE_INITIALIZER && v->sparse_initializer->values != NULL);
}

/* ---------------------------------------------------------------------------------------
 * Attributes
 */
static int by_name(const void *p, const void *q)
{
	const oxp_attr *x = *(const oxp_attr *const *)p, *y = *(const oxp_attr *const *)q;
	size_t n = x->name.len < y->name.len ? x->name.len : y->name.len;
	int r = n ? memcmp(x->name.p, y->name.p, n) : 0;
	if (r != 0)
		return r;
	if (x->name.len != y->name.len)
		return x->name.len < y->name.len ? -1 : 1;
	return (x > y) - (x < y);
}

static bool floats_equal(float x, float y)
{
	return memcmp(&x, &y, sizeof(float)) == 0 || x == y;
}

/* Equal attribute values; TENSOR values are compared by the caller. */
static bool attr_equal(const oxp_attr *x, const oxp_attr *y)
{
	if (x->type != y->type || !oxd__same_str(x->ref_attr_name, y->ref_attr_name))
		return false;
	switch (x->type) {
	case OXP_ATTR_FLOAT:
		return floats_equal(x->f, y->f);
	case OXP_ATTR_INT:
		return x->i == y->i;
	case OXP_ATTR_STRING:
		return oxd__same_str(x->s, y->s);
	case OXP_ATTR_INTS:
		return x->nints == y->nints &&
		       (x->nints == 0 || memcmp(x->ints, y->ints, x->nints * sizeof(int64_t)) == 0);
	case OXP_ATTR_FLOATS:
		if (x->nfloats != y->nfloats)
			return false;
		for (size_t i = 0; i < x->nfloats; i++)
			if (!floats_equal(x->floats[i], y->floats[i]))
				return false;
		return true;
	case OXP_ATTR_STRINGS:
		if (x->nstrings != y->nstrings)
			return false;
		for (size_t i = 0; i < x->nstrings; i++)
			if (!oxd__same_str(x->strings[i], y->strings[i]))
				return false;
		return true;
	case OXP_ATTR_GRAPHS:
		return x->ngraphs == y->ngraphs; /* their nodes are compared as nodes */
	case OXP_ATTR_TENSORS:
		return x->ntensors == y->ntensors;
	default:
		return true; /* GRAPH (its nodes), sparse tensors and types: not compared */
	}
}

/* A TENSOR attribute pair: a tensor record when the values differ.  The record's index,
 * OXP_NONE when the same; *differ says whether they do. */
static uint32_t attr_tensor(cmp *c, uint32_t record, const oxp_attr *x, const oxp_attr *y,
                            bool *differ)
{
	*differ = false;
	if (x->t == NULL || y->t == NULL) {
		*differ = (x->t == NULL) != (y->t == NULL);
		return OXP_NONE;
	}
	oxd_diff *d = c->d;
	oxd_tensor *t = oxd__push(&d->tensors, sizeof(oxd_tensor));
	if (t == NULL) {
		c->oom = true;
		return OXP_NONE;
	}
	t->kind = OXD_T_ATTRIBUTE;
	t->how = OXD_HOW_NAME;
	t->a = x->t;
	t->b = y->t;
	t->scope_a = t->scope_b = OXP_NONE;
	t->node = record;
	t->attr_b = y;
	if (!oxd__compare_tensor(d, t))
		c->oom = true;
	if (t->status == OXD_SAME) {
		d->tensors.n--; /* only differing attribute tensors are listed */
		return OXP_NONE;
	}
	*differ = true;
	return d->tensors.n - 1;
}

static void compare_attrs(cmp *c, uint32_t record, const oxp_node *x, const oxp_node *y)
{
	size_t na = x->nattrs, nb = y->nattrs;
	if (na == 0 && nb == 0)
		return;
	const oxp_attr **xs = malloc((na ? na : 1) * sizeof(*xs));
	const oxp_attr **ys = malloc((nb ? nb : 1) * sizeof(*ys));
	if (xs == NULL || ys == NULL) {
		free(xs);
		free(ys);
		c->oom = true;
		return;
	}
	for (size_t i = 0; i < na; i++)
		xs[i] = &x->attrs[i];
	for (size_t i = 0; i < nb; i++)
		ys[i] = &y->attrs[i];
	qsort(xs, na, sizeof(*xs), by_name);
	qsort(ys, nb, sizeof(*ys), by_name);
	size_t i = 0, j = 0;
	while (i < na || j < nb) {
		int r = i == na ? 1 : j == nb ? -1 : 0;
		if (r == 0) {
			oxp_str p = xs[i]->name, q = ys[j]->name;
			size_t n = p.len < q.len ? p.len : q.len;
			r = n ? memcmp(p.p, q.p, n) : 0;
			if (r == 0 && p.len != q.len)
				r = p.len < q.len ? -1 : 1;
		}
		if (r < 0) {
			add(c, record, OXD_CH_ATTRIBUTE, 0, OXP_NONE, xs[i++], NULL);
		} else if (r > 0) {
			add(c, record, OXD_CH_ATTRIBUTE, 0, OXP_NONE, NULL, ys[j++]);
		} else {
			bool differ = !attr_equal(xs[i], ys[j]);
			uint32_t t = OXP_NONE;
			if (!differ && xs[i]->type == OXP_ATTR_TENSOR)
				t = attr_tensor(c, record, xs[i], ys[j], &differ);
			if (differ)
				add(c, record, OXD_CH_ATTRIBUTE, 0, t, xs[i], ys[j]);
			i++;
			j++;
		}
	}
	free(xs);
	free(ys);
}

/* ---------------------------------------------------------------------------------------
 * Wiring and types
 */
static bool same_source(const oxd_diff *d, uint32_t ia, uint32_t ib)
{
	if (ia == OXP_NONE || ib == OXP_NONE)
		return ia == ib;
	const oxp_value *x = &d->va->values[ia], *y = &d->vb->values[ib];
	if (x->producer != OXP_NONE || y->producer != OXP_NONE)
		return x->producer != OXP_NONE && y->producer != OXP_NONE &&
		       d->pa[x->producer] == y->producer && x->producer_output == y->producer_output;
	if (is_init(x) || is_init(y))
		return is_init(x) && is_init(y) && d->ta[ia] != OXP_NONE && d->ta[ia] == d->tb[ib];
	return x->kind == y->kind && oxd__same_str(x->name, y->name);
}

/* Element types and shapes differ where both are known. */
static bool types_differ(const oxp_value *x, const oxp_value *y)
{
	const oxp_value_type *p = oxp_value_best_type(x), *q = oxp_value_best_type(y);
	if (p->source == OXP_SHAPE_NONE || q->source == OXP_SHAPE_NONE)
		return false;
	if (p->elem_type != 0 && q->elem_type != 0 && p->elem_type != q->elem_type)
		return true;
	if (p->rank < 0 || q->rank < 0)
		return false;
	if (p->rank != q->rank)
		return true;
	for (int32_t i = 0; i < p->rank; i++) {
		const oxp_dim *u = &p->dims[i], *v = &q->dims[i];
		if (u->kind == OXP_DIM_UNKNOWN || v->kind == OXP_DIM_UNKNOWN)
			continue;
		if (u->kind != v->kind)
			return true;
		if (u->kind == OXP_DIM_VALUE ? u->value != v->value : !oxd__same_str(u->param, v->param))
			return true;
	}
	return false;
}

/* Inputs or outputs that count: trailing omitted ones ("") do not. */
static size_t effective(const oxp_str *names, size_t n)
{
	while (n > 0 && names[n - 1].len == 0)
		n--;
	return n;
}

static void compare_pair(cmp *c, uint32_t record, uint32_t xa, uint32_t xb)
{
	oxd_diff *d = c->d;
	const oxp_dnode *dx = &d->va->nodes[xa], *dy = &d->vb->nodes[xb];
	const oxp_node *x = dx->proto, *y = dy->proto;
	if (!oxd__same_str(x->op_type, y->op_type))
		add(c, record, OXD_CH_OP_TYPE, 0, OXP_NONE, NULL, NULL);
	if (!oxd__same_str(x->domain, y->domain) && !(std_domain(x->domain) && std_domain(y->domain)))
		add(c, record, OXD_CH_DOMAIN, 0, OXP_NONE, NULL, NULL);
	if (!oxd__same_str(x->overload, y->overload))
		add(c, record, OXD_CH_OVERLOAD, 0, OXP_NONE, NULL, NULL);
	if (!oxd__same_str(x->name, y->name))
		add(c, record, OXD_CH_NAME, 0, OXP_NONE, NULL, NULL);
	compare_attrs(c, record, x, y);
	size_t nia = effective(x->inputs, x->ninputs), nib = effective(y->inputs, y->ninputs);
	for (size_t k = 0; k < (nia > nib ? nia : nib); k++) {
		uint32_t ia = k < nia ? dx->inputs[k] : OXP_NONE;
		uint32_t ib = k < nib ? dy->inputs[k] : OXP_NONE;
		if (!same_source(d, ia, ib)) {
			add(c, record, OXD_CH_INPUT, (uint32_t)k, OXP_NONE, NULL, NULL);
		} else if (ia != OXP_NONE && is_init(&d->va->values[ia])) {
			uint32_t t = d->ta[ia];
			if (((oxd_tensor *)d->tensors.p)[t].status != OXD_SAME)
				add(c, record, OXD_CH_TENSOR, (uint32_t)k, t, NULL, NULL);
		}
	}
	size_t noa = effective(x->outputs, x->noutputs), nob = effective(y->outputs, y->noutputs);
	for (size_t k = noa < nob ? noa : nob; k < (noa > nob ? noa : nob); k++)
		add(c, record, OXD_CH_OUTPUT, (uint32_t)k, OXP_NONE, NULL, NULL);
	for (size_t k = 0; k < (noa < nob ? noa : nob); k++) {
		uint32_t oa = dx->outputs[k], ob = dy->outputs[k];
		if (oa != OXP_NONE && ob != OXP_NONE &&
		    types_differ(&d->va->values[oa], &d->vb->values[ob]))
			add(c, record, OXD_CH_TYPE, (uint32_t)k, OXP_NONE, NULL, NULL);
	}
}

/* ---------------------------------------------------------------------------------------
 * Records
 */
static int by_record(const void *p, const void *q)
{
	const pending *x = p, *y = q;
	if (x->record != y->record)
		return x->record < y->record ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static oxd_node *rec(oxd_diff *d, uint32_t i)
{
	return &((oxd_node *)d->nodes.p)[i];
}

/* Nodes of B that call a model-local function with a differing node (in B's function or
 * in its pair in A) get a "subgraph" change: what they run changed. */
static void mark_callers(cmp *c, bool *flagged)
{
	oxd_diff *d = c->d;
	const oxp_model_proto *pb = oxp_model_proto_get(d->mb);
	bool *changed_fn = calloc(pb->nfunctions ? pb->nfunctions : 1, sizeof(bool));
	if (changed_fn == NULL) {
		c->oom = true;
		return;
	}
	bool any = false;
	for (uint32_t s = 0; s < d->vb->nscopes; s++) {
		const oxp_scope *sc = &d->vb->scopes[s];
		if (sc->kind != OXP_SCOPE_FUNCTION || sc->function == NULL)
			continue;
		bool ch = false;
		for (uint32_t k = 0; k < sc->nnodes && !ch; k++)
			ch = rec(d, d->of_b[sc->first_node + k])->status != OXD_SAME;
		uint32_t sa = d->sb[s];
		for (uint32_t k = 0; sa != OXP_NONE && k < d->va->scopes[sa].nnodes && !ch; k++)
			ch = d->pa[d->va->scopes[sa].first_node + k] == OXP_NONE;
		changed_fn[sc->function - pb->functions] = ch;
		any |= ch;
	}
	for (uint32_t n = 0; any && n < d->vb->nnodes; n++) {
		uint32_t f = d->vb->nodes[n].function, r = d->of_b[n];
		if (f == OXP_NONE || f >= pb->nfunctions || !changed_fn[f] || flagged[r] ||
		    rec(d, r)->status == OXD_ADDED)
			continue;
		flagged[r] = true;
		add(c, r, OXD_CH_SUBGRAPH, 0, OXP_NONE, NULL, NULL);
	}
	free(changed_fn);
}

/* Owners of subgraphs holding a differing node get a "subgraph" change, up the chain. */
static void mark_owners(cmp *c, bool *flagged)
{
	oxd_diff *d = c->d;
	uint32_t n = d->nodes.n;
	for (uint32_t r = 0; r < n; r++) {
		const oxd_node *x = rec(d, r);
		if (x->status == OXD_SAME)
			continue;
		/* the scope on the side the node is on; its owner's record */
		bool in_b = x->b != OXP_NONE;
		const oxp_dag_view *v = in_b ? d->vb : d->va;
		uint32_t scope = v->nodes[in_b ? x->b : x->a].scope;
		for (uint32_t depth = 0; depth < 64; depth++) {
			uint32_t owner = v->scopes[scope].owner;
			if (owner == OXP_NONE)
				break;
			uint32_t orec = in_b ? d->of_b[owner] : d->of_a[owner];
			oxd_node *o = rec(d, orec);
			if (o->status == OXD_ADDED || o->status == OXD_REMOVED || flagged[orec])
				break;
			flagged[orec] = true;
			o->status = OXD_CHANGED; /* before the callers of functions are looked at */
			add(c, orec, OXD_CH_SUBGRAPH, 0, OXP_NONE, NULL, NULL);
			scope = v->nodes[owner].scope;
		}
	}
}

static bool build_records(cmp *c)
{
	oxd_diff *d = c->d;
	const oxp_dag_view *A = d->va, *B = d->vb;
	d->of_a = oxp_arena_array(d->arena, A->nnodes ? A->nnodes : 1, sizeof(uint32_t));
	d->of_b = oxp_arena_array(d->arena, B->nnodes ? B->nnodes : 1, sizeof(uint32_t));
	if (d->of_a == NULL || d->of_b == NULL)
		return false;
	for (uint32_t n = 0; n < B->nnodes; n++) {
		oxd_node *r = oxd__push(&d->nodes, sizeof(oxd_node));
		if (r == NULL)
			return false;
		r->b = n;
		r->a = d->pb[n];
		r->how = r->a != OXP_NONE ? (oxd_how)d->how_b[n] : OXD_HOW_NONE;
		r->status = r->a != OXP_NONE ? OXD_SAME : OXD_ADDED;
		d->of_b[n] = d->nodes.n - 1;
		if (r->a != OXP_NONE)
			d->of_a[r->a] = d->nodes.n - 1;
	}
	for (uint32_t n = 0; n < A->nnodes; n++) {
		if (d->pa[n] != OXP_NONE)
			continue;
		oxd_node *r = oxd__push(&d->nodes, sizeof(oxd_node));
		if (r == NULL)
			return false;
		r->a = n;
		r->b = OXP_NONE;
		r->status = OXD_REMOVED;
		d->of_a[n] = d->nodes.n - 1;
	}
	/* changes of pairs (a record's index is fixed now: the vec no longer grows) */
	for (uint32_t r = 0; r < d->nodes.n && !c->oom; r++)
		if (rec(d, r)->a != OXP_NONE && rec(d, r)->b != OXP_NONE)
			compare_pair(c, r, rec(d, r)->a, rec(d, r)->b);
	if (c->oom)
		return false;
	/* statuses before the subgraph walk: a pair with a change is changed */
	for (uint32_t i = 0; i < c->pend.n; i++)
		rec(d, ((pending *)c->pend.p)[i].record)->status = OXD_CHANGED;
	bool *flagged = calloc(d->nodes.n ? d->nodes.n : 1, sizeof(bool));
	if (flagged == NULL)
		return false;
	mark_owners(c, flagged);
	if (!c->oom)
		mark_callers(c, flagged);
	free(flagged);
	if (c->oom)
		return false;
	/* changes in record order, each record's contiguous */
	pending *p = c->pend.p;
	if (c->pend.n > 1)
		qsort(p, c->pend.n, sizeof(pending), by_record);
	oxd_change *ch = oxp_arena_array(d->arena, c->pend.n ? c->pend.n : 1, sizeof(oxd_change));
	if (ch == NULL)
		return false;
	for (uint32_t i = 0; i < c->pend.n; i++) {
		ch[i] = p[i].c;
		oxd_node *r = rec(d, p[i].record);
		if (r->nchanges == 0)
			r->first_change = i;
		r->nchanges++;
		r->mask |= 1u << p[i].c.kind;
		r->status = OXD_CHANGED;
	}
	d->view.changes = ch;
	d->view.nchanges = c->pend.n;
	return true;
}

/* ---------------------------------------------------------------------------------------
 * Graph inputs and outputs, model fields, functions
 */
static bool io_values(oxd_diff *d, bool outputs)
{
	const oxp_dag_view *A = d->va, *B = d->vb;
	bool main_a = A->nscopes > 0 && A->scopes[0].kind == OXP_SCOPE_MAIN;
	bool main_b = B->nscopes > 0 && B->scopes[0].kind == OXP_SCOPE_MAIN;
	uint32_t na = main_a ? (outputs ? A->scopes[0].noutputs : A->scopes[0].ninputs) : 0;
	uint32_t nb = main_b ? (outputs ? B->scopes[0].noutputs : B->scopes[0].ninputs) : 0;
	const uint32_t *la = main_a ? (outputs ? A->scopes[0].outputs : A->scopes[0].inputs) : NULL;
	const uint32_t *lb = main_b ? (outputs ? B->scopes[0].outputs : B->scopes[0].inputs) : NULL;
	smap names;
	if (!oxd__smap_init(&names, na))
		return false;
	bool fresh, ok = true;
	for (uint32_t i = 0; i < na; i++) {
		/* inputs that are initializers (IR < 4) are tensors, not inputs */
		if (la[i] == OXP_NONE || (!outputs && A->values[la[i]].kind != OXP_VALUE_INPUT))
			continue;
		smap_entry *e = oxd__smap_put(&names, A->values[la[i]].name, &fresh);
		if (fresh)
			e->val = la[i];
	}
	for (uint32_t i = 0; i < nb && ok; i++) {
		if (lb[i] == OXP_NONE || (!outputs && B->values[lb[i]].kind != OXP_VALUE_INPUT))
			continue;
		smap_entry *e = oxd__smap_find(&names, B->values[lb[i]].name);
		oxd_value *v = oxd__push(&d->values, sizeof(oxd_value));
		if (v == NULL) {
			ok = false;
			break;
		}
		v->output = outputs;
		v->b = lb[i];
		v->a = e != NULL ? e->val : OXP_NONE;
		if (e != NULL)
			e->val = OXP_NONE; /* taken */
		v->status = v->a == OXP_NONE ? OXD_ADDED
		            : types_differ(&A->values[v->a], &B->values[v->b]) ? OXD_CHANGED
		                                                              : OXD_SAME;
	}
	for (uint32_t i = 0; i < names.n && ok; i++) {
		if (names.e[i].val == OXP_NONE)
			continue;
		oxd_value *v = oxd__push(&d->values, sizeof(oxd_value));
		if (v == NULL) {
			ok = false;
			break;
		}
		v->output = outputs;
		v->a = names.e[i].val;
		v->b = OXP_NONE;
		v->status = OXD_REMOVED;
	}
	oxd__smap_free(&names);
	return ok;
}

static bool field(oxd_diff *d, const char *name, const char *key, const char *a, const char *b)
{
	oxd_field *f = oxd__push(&d->fields, sizeof(oxd_field));
	if (f == NULL)
		return false;
	f->name = name;
	f->key = key;
	f->a = a;
	f->b = b;
	return true;
}

static const char *txt(oxd_diff *d, oxp_str s)
{
	return oxd__text(d->arena, s, 200);
}

static bool str_field(oxd_diff *d, const char *name, oxp_str a, oxp_str b)
{
	if (oxd__same_str(a, b))
		return true;
	return field(d, name, NULL, txt(d, a), txt(d, b));
}

static bool int_field(oxd_diff *d, const char *name, int64_t a, int64_t b)
{
	if (a == b)
		return true;
	return field(d, name, NULL, oxp_arena_printf(d->arena, "%" PRId64, a),
	             oxp_arena_printf(d->arena, "%" PRId64, b));
}

/* Keyed lists (opsets by domain, metadata by key): added, removed, changed keys.  A key
 * given twice counts with its last entry, as protobuf maps do. */
static bool keyed_fields(oxd_diff *d, const char *name, const oxp_entry *a, size_t na,
                         const oxp_entry *b, size_t nb)
{
	smap keys, last_b;
	if (na > UINT32_MAX / 4 || nb > UINT32_MAX / 4 || !oxd__smap_init(&keys, (uint32_t)na))
		return false;
	if (!oxd__smap_init(&last_b, (uint32_t)nb)) {
		oxd__smap_free(&keys);
		return false;
	}
	bool fresh, ok = true;
	for (size_t i = 0; i < na; i++)
		oxd__smap_put(&keys, a[i].key, &fresh)->val = (uint32_t)i;
	for (size_t j = 0; j < nb; j++)
		oxd__smap_put(&last_b, b[j].key, &fresh)->val = (uint32_t)j;
	for (size_t j = 0; j < nb && ok; j++) {
		if (oxd__smap_find(&last_b, b[j].key)->val != j)
			continue;
		smap_entry *e = oxd__smap_find(&keys, b[j].key);
		if (e == NULL) {
			ok = field(d, name, txt(d, b[j].key), NULL, txt(d, b[j].value));
			continue;
		}
		if (e->val != OXP_NONE && !oxd__same_str(a[e->val].value, b[j].value))
			ok = field(d, name, txt(d, b[j].key), txt(d, a[e->val].value), txt(d, b[j].value));
		e->val = OXP_NONE;
	}
	for (uint32_t i = 0; i < keys.n && ok; i++)
		if (keys.e[i].val != OXP_NONE)
			ok = field(d, name, txt(d, keys.e[i].key), txt(d, a[keys.e[i].val].value), NULL);
	oxd__smap_free(&keys);
	oxd__smap_free(&last_b);
	return ok;
}

static oxp_entry *opset_entries(oxd_diff *d, const oxp_model_proto *p)
{
	oxp_entry *e = oxp_arena_array(d->arena, p->nopset_import ? p->nopset_import : 1,
	                               sizeof(oxp_entry));
	if (e == NULL)
		return NULL;
	for (size_t i = 0; i < p->nopset_import; i++) {
		oxp_str dom = p->opset_import[i].domain;
		e[i].key = dom.len ? dom : (oxp_str){"ai.onnx", 7};
		const char *v = oxp_arena_printf(d->arena, "%" PRId64, p->opset_import[i].version);
		e[i].value = (oxp_str){v ? v : "", v ? strlen(v) : 0};
	}
	return e;
}

static bool model_fields(oxd_diff *d)
{
	const oxp_model_proto *a = oxp_model_proto_get(d->ma), *b = oxp_model_proto_get(d->mb);
	oxp_str none = {"", 0};
	bool ok = int_field(d, "ir_version", a->ir_version, b->ir_version) &&
	          str_field(d, "producer_name", a->producer_name, b->producer_name) &&
	          str_field(d, "producer_version", a->producer_version, b->producer_version) &&
	          str_field(d, "domain", a->domain, b->domain) &&
	          int_field(d, "model_version", a->model_version, b->model_version) &&
	          str_field(d, "graph_name", a->graph ? a->graph->name : none,
	                    b->graph ? b->graph->name : none);
	oxp_entry *oa = ok ? opset_entries(d, a) : NULL, *ob = ok ? opset_entries(d, b) : NULL;
	ok = ok && oa && ob &&
	     keyed_fields(d, "opset_import", oa, a->nopset_import, ob, b->nopset_import) &&
	     keyed_fields(d, "metadata_props", a->metadata_props, a->nmetadata_props,
	                  b->metadata_props, b->nmetadata_props);
	return ok;
}

static bool functions(oxd_diff *d)
{
	const oxp_model_proto *pa = oxp_model_proto_get(d->ma), *pb = oxp_model_proto_get(d->mb);
	/* paired function scopes; a function changes when a node of it does */
	for (int side = 0; side < 2; side++) {
		const oxp_dag_view *v = side ? d->vb : d->va;
		const uint32_t *partner = side ? d->sb : d->sa;
		for (uint32_t s = 0; s < v->nscopes; s++) {
			const oxp_scope *sc = &v->scopes[s];
			if (sc->kind != OXP_SCOPE_FUNCTION || sc->function == NULL)
				continue;
			if (side == 0 && partner[s] != OXP_NONE)
				continue; /* listed once, from B's side */
			oxd_function *f = oxd__push(&d->functions, sizeof(oxd_function));
			if (f == NULL)
				return false;
			uint32_t idx = (uint32_t)(sc->function - (side ? pb : pa)->functions);
			f->a = f->b = OXP_NONE;
			if (side == 0) {
				f->a = idx;
				f->status = OXD_REMOVED;
				continue;
			}
			f->b = idx;
			if (partner[s] == OXP_NONE) {
				f->status = OXD_ADDED;
				continue;
			}
			const oxp_scope *so = &d->va->scopes[partner[s]];
			f->a = (uint32_t)(so->function - pa->functions);
			f->status = OXD_SAME;
			for (uint32_t k = 0; k < sc->nnodes && f->status == OXD_SAME; k++)
				if (rec(d, d->of_b[sc->first_node + k])->status != OXD_SAME)
					f->status = OXD_CHANGED;
			for (uint32_t k = 0; k < so->nnodes && f->status == OXD_SAME; k++)
				if (d->pa[so->first_node + k] == OXP_NONE)
					f->status = OXD_CHANGED;
			if (sc->function->ninputs != so->function->ninputs ||
			    sc->function->noutputs != so->function->noutputs)
				f->status = OXD_CHANGED;
		}
	}
	return true;
}

bool oxd__compare(oxd_diff *d)
{
	cmp c;
	memset(&c, 0, sizeof(c));
	c.d = d;
	/* initializer pairs first: node changes refer to them */
	uint32_t nt = d->tensors.n;
	for (uint32_t i = 0; i < nt; i++) {
		oxd_tensor *t = &((oxd_tensor *)d->tensors.p)[i];
		if (t->a != NULL && t->b != NULL && !oxd__compare_tensor(d, t)) {
			free(c.pend.p);
			return false;
		}
	}
	bool ok = build_records(&c) && io_values(d, false) && io_values(d, true) &&
	          model_fields(d) && functions(d);
	free(c.pend.p);
	if (!ok)
		return false;
	oxd_summary *s = &d->view.summary;
	memset(s, 0, sizeof(*s));
	for (uint32_t i = 0; i < d->nodes.n; i++) {
		oxd_status st = rec(d, i)->status;
		s->added += st == OXD_ADDED;
		s->removed += st == OXD_REMOVED;
		s->changed += st == OXD_CHANGED;
		s->unchanged += st == OXD_SAME;
	}
	for (uint32_t i = 0; i < d->tensors.n; i++) {
		oxd_status st = ((oxd_tensor *)d->tensors.p)[i].status;
		s->tensors_added += st == OXD_ADDED;
		s->tensors_removed += st == OXD_REMOVED;
		s->tensors_changed += st == OXD_CHANGED;
		s->tensors_unchanged += st == OXD_SAME;
	}
	for (uint32_t i = 0; i < d->values.n; i++) {
		oxd_status st = ((oxd_value *)d->values.p)[i].status;
		s->values_added += st == OXD_ADDED;
		s->values_removed += st == OXD_REMOVED;
		s->values_changed += st == OXD_CHANGED;
	}
	for (uint32_t i = 0; i < d->functions.n; i++) {
		oxd_status st = ((oxd_function *)d->functions.p)[i].status;
		s->functions_added += st == OXD_ADDED;
		s->functions_removed += st == OXD_REMOVED;
		s->functions_changed += st == OXD_CHANGED;
	}
	s->fields = d->fields.n;
	s->same = s->added + s->removed + s->changed == 0 &&
	          s->tensors_added + s->tensors_removed + s->tensors_changed == 0 &&
	          s->values_added + s->values_removed + s->values_changed == 0 &&
	          s->functions_added + s->functions_removed + s->functions_changed == 0 &&
	          s->fields == 0;
	return true;
}
