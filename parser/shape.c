/*
 * shape.c — shape inference for the linked graph: the driver and the shared helpers.
 *
 * For every scope (function bodies first, then the main graph, then training graphs) the
 * nodes are taken in a topological order (Kahn's algorithm over the dag's edges; an edge
 * into a subgraph counts for the node holding the subgraph).  A node holding subgraphs
 * has its subgraphs inferred first (after its rule's `pre` step typed their inputs), then
 * its own rule runs.  Nodes on or behind a cycle are never ready and stay unknown.  The
 * walk uses an explicit stack of frames, one per open scope; nothing recurses.
 *
 * Each rule reads the best known type of its inputs (declared dims first, inferred ones
 * filling unknown dims) and writes values[].inferred of its outputs; declared types are
 * never touched.  Small integer tensors (shape arithmetic) also carry their values
 * (sh_vals) so that Reshape/Expand/Slice/... with computed arguments can be inferred.
 * All memory comes from the dag's arena; running out of it is the only error.
 */
#include "parser/shape.h"

#include <string.h>

/* ---------------------------------------------------------------------------------------
 * Dims
 */
bool oxp__sh_add(int64_t a, int64_t b, int64_t *out)
{
	return !__builtin_add_overflow(a, b, out);
}

bool oxp__sh_mul(int64_t a, int64_t b, int64_t *out)
{
	return !__builtin_mul_overflow(a, b, out);
}

static bool str_same(oxp_str a, oxp_str b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0);
}

bool oxp__sh_dim_eq(oxp_dim a, oxp_dim b)
{
	if (a.kind == OXP_DIM_VALUE && b.kind == OXP_DIM_VALUE)
		return a.value == b.value;
	if (a.kind == OXP_DIM_PARAM && b.kind == OXP_DIM_PARAM)
		return str_same(a.param, b.param);
	return false;
}

oxp_dim oxp__sh_dim_broadcast(oxp_dim a, oxp_dim b)
{
	if (sh_is(a, 1))
		return b;
	if (sh_is(b, 1))
		return a;
	if (a.kind == OXP_DIM_VALUE && b.kind == OXP_DIM_VALUE)
		return a.value == b.value ? a : sh_dim_unk(); /* incompatible: the model is wrong */
	/* a known size other than 1 wins: the other side must be 1 or the same size */
	if (a.kind == OXP_DIM_VALUE)
		return a;
	if (b.kind == OXP_DIM_VALUE)
		return b;
	if (a.kind == OXP_DIM_PARAM && b.kind == OXP_DIM_PARAM && str_same(a.param, b.param))
		return a;
	return sh_dim_unk();
}

oxp_dim oxp__sh_dim_union(oxp_dim a, oxp_dim b)
{
	return oxp__sh_dim_eq(a, b) ? a : sh_dim_unk();
}

oxp_dim oxp__sh_dim_merge(oxp_dim a, oxp_dim b)
{
	if (a.kind == OXP_DIM_VALUE || a.kind == OXP_DIM_PARAM)
		return a;
	return b;
}

oxp_dim oxp__sh_dim_add(oxp_dim a, oxp_dim b)
{
	int64_t r;
	if (sh_known(a) && sh_known(b))
		return oxp__sh_add(a.value, b.value, &r) ? sh_dim_val(r) : sh_dim_unk();
	if (sh_is(a, 0))
		return b;
	if (sh_is(b, 0))
		return a;
	return sh_dim_unk();
}

oxp_dim oxp__sh_dim_mul(oxp_dim a, oxp_dim b)
{
	int64_t r;
	if (sh_known(a) && sh_known(b))
		return oxp__sh_mul(a.value, b.value, &r) ? sh_dim_val(r) : sh_dim_unk();
	if (sh_is(a, 0) || sh_is(b, 0))
		return sh_dim_val(0);
	if (sh_is(a, 1))
		return b;
	if (sh_is(b, 1))
		return a;
	return sh_dim_unk();
}

/* A dim as usable in a shape: negative sizes and empty symbols are unknown. */
static oxp_dim clean_dim(oxp_dim d)
{
	oxp_dim o = {0};
	if (d.kind == OXP_DIM_VALUE && d.value >= 0) {
		o.kind = OXP_DIM_VALUE;
		o.value = d.value;
	} else if (d.kind == OXP_DIM_PARAM && d.param.len > 0 && d.param.p != NULL) {
		o.kind = OXP_DIM_PARAM;
		o.param = d.param;
	}
	return o;
}

/* ---------------------------------------------------------------------------------------
 * Types
 */
void oxp__sh_type_unknown(sh_type *t)
{
	t->elem = 0;
	t->rank = -1;
}

void oxp__sh_broadcast(sh_type *out, const sh_type *a, const sh_type *b)
{
	if (a->rank < 0 || b->rank < 0) {
		out->rank = -1;
		return;
	}
	int32_t r = a->rank > b->rank ? a->rank : b->rank;
	oxp_dim tmp[SH_MAX_RANK];
	for (int32_t k = 0; k < r; k++) {
		int32_t ia = a->rank - 1 - k, ib = b->rank - 1 - k;
		if (ia < 0)
			tmp[r - 1 - k] = b->d[ib];
		else if (ib < 0)
			tmp[r - 1 - k] = a->d[ia];
		else
			tmp[r - 1 - k] = oxp__sh_dim_broadcast(a->d[ia], b->d[ib]);
	}
	out->rank = r;
	memcpy(out->d, tmp, (size_t)r * sizeof(oxp_dim));
}

void oxp__sh_type_union(sh_type *out, const sh_type *a, const sh_type *b)
{
	out->elem = a->elem == b->elem ? a->elem : 0;
	out->rank = a->rank == b->rank ? a->rank : -1;
	for (int32_t k = 0; k < out->rank; k++)
		out->d[k] = oxp__sh_dim_union(a->d[k], b->d[k]);
}

bool oxp__sh_axis(int64_t axis, int32_t rank, int32_t *out)
{
	if (rank < 0 || axis < -(int64_t)rank || axis >= (int64_t)rank)
		return false;
	*out = (int32_t)(axis < 0 ? axis + rank : axis);
	return true;
}

bool oxp__sh_norm_axes(const int64_t *axes, size_t n, int32_t rank, int32_t *out)
{
	bool seen[SH_MAX_RANK] = {false};
	if (rank < 0 || rank > SH_MAX_RANK || n > SH_MAX_RANK)
		return false;
	for (size_t k = 0; k < n; k++) {
		if (!oxp__sh_axis(axes[k], rank, &out[k]) || seen[out[k]])
			return false;
		seen[out[k]] = true;
	}
	return true;
}

bool oxp__sh_axis_listed(const int32_t *axes, size_t n, int32_t axis)
{
	for (size_t k = 0; k < n; k++)
		if (axes[k] == axis)
			return true;
	return false;
}

static int32_t clean_elem(int32_t e)
{
	return e > 0 && e < OXP_DT__COUNT ? e : 0;
}

/* A declared dim with what inference found: an unknown declared dim takes the inferred
 * one, and so does a declared symbol inference knows as an integer.  A symbol only names a
 * size; value_info written by onnx.shape_inference (or an exporter running it) names every
 * dim it could not compute "unk__12", and letting those win would lose every size behind
 * them (swin_t saved after onnx inference: all of its pads). */
static oxp_dim declared_refined(oxp_dim de, oxp_dim in)
{
	if (de.kind == OXP_DIM_PARAM && in.kind == OXP_DIM_VALUE)
		return in;
	return oxp__sh_dim_merge(de, in);
}

void oxp__sh_value_type(const oxp_dag *dag, uint32_t vi, sh_type *out)
{
	oxp__sh_type_unknown(out);
	if (vi == OXP_NONE || vi >= dag->v.nvalues)
		return;
	const oxp_value *v = &dag->values[vi];
	const oxp_value_type *de = &v->declared, *in = &v->inferred;
	bool has_de = de->source != OXP_SHAPE_NONE, has_in = in->source != OXP_SHAPE_NONE;
	out->elem = has_de ? clean_elem(de->elem_type) : 0;
	if (out->elem == 0 && has_in)
		out->elem = clean_elem(in->elem_type);
	bool de_ok = has_de && de->rank >= 0 && de->rank <= SH_MAX_RANK &&
	             (de->rank == 0 || de->dims != NULL);
	bool in_ok = has_in && in->rank >= 0 && in->rank <= SH_MAX_RANK &&
	             (in->rank == 0 || in->dims != NULL);
	if (de_ok) {
		out->rank = de->rank;
		for (int32_t k = 0; k < de->rank; k++)
			out->d[k] = clean_dim(de->dims[k]);
		if (in_ok && in->rank == de->rank)
			for (int32_t k = 0; k < de->rank; k++)
				out->d[k] = declared_refined(out->d[k], clean_dim(in->dims[k]));
	} else if (in_ok) {
		out->rank = in->rank;
		for (int32_t k = 0; k < in->rank; k++)
			out->d[k] = clean_dim(in->dims[k]);
	}
}

static oxp_code nomem(sh_ctx *c)
{
	if (oxp_arena_code(c->dag->arena) == OXP_E_BUDGET)
		return oxp__set_error(c->err, OXP_E_BUDGET, 0, "",
		                      "shape inference needs more than the model's memory budget");
	return oxp__set_error(c->err, OXP_E_NOMEM, 0, "", "out of memory during shape inference");
}

/* Whether an inferred dims array (clean by construction) holds exactly t's dims. */
static bool same_dims(const oxp_dim *dims, int32_t rank, const sh_type *t)
{
	if (dims == NULL || rank != t->rank)
		return false;
	for (int32_t k = 0; k < rank; k++) {
		oxp_dim d = clean_dim(t->d[k]);
		if (d.kind != dims[k].kind ||
		    (d.kind == OXP_DIM_VALUE && d.value != dims[k].value) ||
		    (d.kind == OXP_DIM_PARAM && !str_same(d.param, dims[k].param)))
			return false;
	}
	return true;
}

/* An inferred dims array of the current node's inputs equal to t's dims, to share
 * (elementwise ops repeat their input's shape: this halves what inference allocates). */
static oxp_dim *shared_dims(const sh_ctx *c, const sh_type *t)
{
	if (c->dn == NULL)
		return NULL;
	for (size_t i = 0; i < c->node->ninputs && i < 8; i++) {
		uint32_t in = c->dn->inputs[i];
		if (in == OXP_NONE)
			continue;
		const oxp_value_type *it = &c->dag->values[in].inferred;
		if (it->source == OXP_SHAPE_INFERRED && same_dims(it->dims, it->rank, t))
			return it->dims;
	}
	return NULL;
}

oxp_code oxp__sh_set_value(sh_ctx *c, uint32_t vi, const sh_type *t)
{
	if (vi == OXP_NONE || vi >= c->dag->v.nvalues)
		return OXP_OK;
	int32_t elem = clean_elem(t->elem);
	int32_t rank = t->rank >= 0 && t->rank <= SH_MAX_RANK ? t->rank : -1;
	if (elem == 0 && rank < 0)
		return OXP_OK;
	oxp_value_type *it = &c->dag->values[vi].inferred;
	oxp_dim *dims = rank > 0 ? shared_dims(c, t) : NULL;
	if (rank > 0 && dims == NULL) {
		dims = oxp__arena_array(c->dag->arena, (size_t)rank, sizeof(oxp_dim));
		if (dims == NULL)
			return nomem(c);
		for (int32_t k = 0; k < rank; k++)
			dims[k] = clean_dim(t->d[k]);
	}
	it->source = OXP_SHAPE_INFERRED;
	it->elem_type = elem;
	it->rank = rank;
	it->dims = dims;
	return OXP_OK;
}

/* ---------------------------------------------------------------------------------------
 * The node being inferred: inputs, outputs, values, attributes
 */
oxp_code oxp__sh_rule_same(sh_ctx *c)
{
	sh_type t;
	oxp__sh_in(c, 0, &t);
	return oxp__sh_out(c, 0, &t);
}

size_t oxp__sh_nin(const sh_ctx *c)
{
	return c->node->ninputs;
}

size_t oxp__sh_nout(const sh_ctx *c)
{
	return c->node->noutputs;
}

bool oxp__sh_has_in(const sh_ctx *c, size_t i)
{
	return i < c->node->ninputs && c->dn->inputs[i] != OXP_NONE;
}

bool oxp__sh_in(const sh_ctx *c, size_t i, sh_type *out)
{
	if (!oxp__sh_has_in(c, i)) {
		oxp__sh_type_unknown(out);
		return false;
	}
	oxp__sh_value_type(c->dag, c->dn->inputs[i], out);
	return true;
}

oxp_code oxp__sh_out(sh_ctx *c, size_t i, const sh_type *t)
{
	if (i >= c->node->noutputs)
		return OXP_OK;
	return oxp__sh_set_value(c, c->dn->outputs[i], t);
}

struct sh_data {
	int32_t rank;  /* 0, 1, or 2 (a matrix of n / cols rows) */
	uint32_t n;
	uint32_t cols; /* rank 2 only */
	oxp_dim v[];
};

static bool load_vals(const sh_data *d, sh_vals *out)
{
	if (d == NULL || d->rank > 1)
		return false;
	out->rank = d->rank;
	out->n = d->n;
	memcpy(out->v, d->v, (size_t)d->n * sizeof(oxp_dim));
	return true;
}

bool oxp__sh_in_vals(sh_ctx *c, size_t i, sh_vals *out)
{
	if (!oxp__sh_has_in(c, i))
		return false;
	return load_vals(c->data[c->dn->inputs[i]], out);
}

bool oxp__sh_in_ints(sh_ctx *c, size_t i, int64_t *out, size_t cap, size_t *n)
{
	sh_vals v;
	if (!oxp__sh_in_vals(c, i, &v) || v.n > cap)
		return false;
	for (uint32_t k = 0; k < v.n; k++) {
		if (v.v[k].kind != OXP_DIM_VALUE)
			return false;
		out[k] = v.v[k].value;
	}
	*n = v.n;
	return true;
}

static oxp_code store_vals(sh_ctx *c, uint32_t vi, const sh_vals *v)
{
	if (vi == OXP_NONE || vi >= c->dag->v.nvalues || v->n > SH_MAX_DATA ||
	    (v->rank != 0 && v->rank != 1) || (v->rank == 0 && v->n != 1))
		return OXP_OK;
	sh_data *d = oxp__arena_alloc(c->dag->arena,
	                              sizeof(sh_data) + (size_t)v->n * sizeof(oxp_dim));
	if (d == NULL)
		return nomem(c);
	d->rank = v->rank;
	d->n = v->n;
	for (uint32_t k = 0; k < v->n; k++) {
		oxp_dim e = v->v[k];
		d->v[k] = e.kind == OXP_DIM_PARAM ? clean_dim(e) : e;
		d->v[k].denotation = (oxp_str){NULL, 0};
	}
	c->data[vi] = d;
	return OXP_OK;
}

oxp_code oxp__sh_out_vals(sh_ctx *c, size_t i, const sh_vals *v)
{
	if (i >= c->node->noutputs)
		return OXP_OK;
	return store_vals(c, c->dn->outputs[i], v);
}

bool oxp__sh_in_matrix(sh_ctx *c, size_t i, sh_vals *out, uint32_t *cols)
{
	if (!oxp__sh_has_in(c, i))
		return false;
	const sh_data *d = c->data[c->dn->inputs[i]];
	if (d == NULL || d->rank != 2)
		return false;
	out->rank = 2;
	out->n = d->n;
	memcpy(out->v, d->v, (size_t)d->n * sizeof(oxp_dim));
	*cols = d->cols;
	return true;
}

oxp_code oxp__sh_out_matrix(sh_ctx *c, size_t i, const sh_vals *v, uint32_t cols)
{
	if (i >= c->node->noutputs || cols == 0 || v->n > SH_MAX_DATA || v->n % cols != 0)
		return OXP_OK;
	uint32_t vi = c->dn->outputs[i];
	sh_vals flat = *v;
	flat.rank = 1;
	oxp_code rc = store_vals(c, vi, &flat);
	if (rc == OXP_OK && vi != OXP_NONE && c->data[vi] != NULL) {
		c->data[vi]->rank = 2;
		c->data[vi]->cols = cols;
	}
	return rc;
}

struct sh_seq {
	bool empty;
	int32_t elem, rank;
	oxp_dim d[];
};

/* A tensor TypeProto as an sh_type. */
static void type_from_proto(const oxp_type *t, sh_type *out)
{
	oxp__sh_type_unknown(out);
	if (t == NULL || t->kind != OXP_TYPE_TENSOR)
		return;
	out->elem = clean_elem(t->elem_type);
	if (t->shape != NULL && t->shape->ndims <= SH_MAX_RANK) {
		out->rank = (int32_t)t->shape->ndims;
		for (int32_t k = 0; k < out->rank; k++)
			out->d[k] = clean_dim(t->shape->dims[k]);
	}
}

bool oxp__sh_in_seq(const sh_ctx *c, size_t i, sh_type *elem, bool *empty)
{
	oxp__sh_type_unknown(elem);
	*empty = false;
	if (!oxp__sh_has_in(c, i))
		return false;
	uint32_t vi = c->dn->inputs[i];
	const oxp_value *v = &c->dag->values[vi];
	const sh_seq *s = c->seq[vi];
	if (v->info != NULL && v->info->type != NULL && v->info->type->kind == OXP_TYPE_SEQUENCE &&
	    v->info->type->elem != NULL) {
		type_from_proto(v->info->type->elem, elem);
		if (s != NULL && elem->elem == 0)
			elem->elem = s->elem;
		if (s != NULL && elem->rank == s->rank && !s->empty)
			for (int32_t k = 0; k < elem->rank; k++)
				elem->d[k] = oxp__sh_dim_merge(elem->d[k], s->d[k]);
		return true;
	}
	if (s == NULL)
		return false;
	*empty = s->empty;
	elem->elem = s->elem;
	elem->rank = s->rank;
	if (s->rank > 0)
		memcpy(elem->d, s->d, (size_t)s->rank * sizeof(oxp_dim));
	return true;
}

oxp_code oxp__sh_out_seq(sh_ctx *c, size_t i, const sh_type *elem, bool empty)
{
	if (i >= c->node->noutputs || c->dn->outputs[i] == OXP_NONE)
		return OXP_OK;
	int32_t rank = elem->rank >= 0 && elem->rank <= SH_MAX_RANK ? elem->rank : -1;
	sh_seq *s = oxp__arena_alloc(c->dag->arena,
	                             sizeof(sh_seq) + (size_t)(rank > 0 ? rank : 0) * sizeof(oxp_dim));
	if (s == NULL)
		return nomem(c);
	s->empty = empty;
	s->elem = clean_elem(elem->elem);
	s->rank = rank;
	for (int32_t k = 0; k < rank; k++)
		s->d[k] = clean_dim(elem->d[k]);
	c->seq[c->dn->outputs[i]] = s;
	return OXP_OK;
}

static bool is_default_domain(oxp_str d)
{
	return d.len == 0 || oxp_str_eq(d, "ai.onnx");
}

const oxp_attr *oxp__sh_attr(const sh_ctx *c, const char *name, int *status)
{
	const oxp_node *n = c->node;
	for (size_t a = 0; a < n->nattrs; a++) {
		if (!oxp_str_eq(n->attrs[a].name, name))
			continue;
		*status = n->attrs[a].ref_attr_name.len > 0 ? SH_BAD : SH_OK;
		return &n->attrs[a];
	}
	*status = SH_ABSENT;
	return NULL;
}

/* Attribute `name` when present, usable and of the given type; else the status. */
static int attr_typed(const sh_ctx *c, const char *name, int32_t type, const oxp_attr **out)
{
	int st;
	const oxp_attr *a = oxp__sh_attr(c, name, &st);
	if (st == SH_OK && a->type != type)
		st = SH_BAD;
	*out = a;
	return st;
}

int oxp__sh_attr_int(const sh_ctx *c, const char *name, int64_t *out)
{
	const oxp_attr *a;
	int st = attr_typed(c, name, OXP_ATTR_INT, &a);
	if (st == SH_OK)
		*out = a->i;
	return st;
}

bool oxp__sh_attr_int_or(const sh_ctx *c, const char *name, int64_t def, int64_t *out)
{
	int st = oxp__sh_attr_int(c, name, out);
	if (st == SH_ABSENT)
		*out = def;
	return st != SH_BAD;
}

int oxp__sh_attr_float(const sh_ctx *c, const char *name, double *out)
{
	const oxp_attr *a;
	int st = attr_typed(c, name, OXP_ATTR_FLOAT, &a);
	if (st == SH_OK)
		*out = (double)a->f;
	return st;
}

int oxp__sh_attr_ints(const sh_ctx *c, const char *name, const int64_t **v, size_t *n)
{
	const oxp_attr *a;
	int st = attr_typed(c, name, OXP_ATTR_INTS, &a);
	if (st == SH_OK) {
		*v = a->ints;
		*n = a->nints;
	}
	return st;
}

int oxp__sh_attr_floats(const sh_ctx *c, const char *name, const float **v, size_t *n)
{
	const oxp_attr *a;
	int st = attr_typed(c, name, OXP_ATTR_FLOATS, &a);
	if (st == SH_OK) {
		*v = a->floats;
		*n = a->nfloats;
	}
	return st;
}

int oxp__sh_attr_str(const sh_ctx *c, const char *name, oxp_str *out)
{
	const oxp_attr *a;
	int st = attr_typed(c, name, OXP_ATTR_STRING, &a);
	if (st == SH_OK)
		*out = a->s;
	return st;
}

/* The `value` tensor of a Constant node, or NULL. */
static const oxp_tensor *constant_tensor(const oxp_node *n)
{
	if (!oxp_str_eq(n->op_type, "Constant") || !is_default_domain(n->domain))
		return NULL;
	for (size_t a = 0; a < n->nattrs; a++)
		if (oxp_str_eq(n->attrs[a].name, "value"))
			return n->attrs[a].ref_attr_name.len == 0 ? n->attrs[a].t : NULL;
	return NULL;
}

const oxp_tensor *oxp__sh_in_const(const sh_ctx *c, size_t i)
{
	if (!oxp__sh_has_in(c, i))
		return NULL;
	const oxp_value *v = &c->dag->values[c->dn->inputs[i]];
	if (v->kind == OXP_VALUE_INITIALIZER)
		return v->initializer;
	if (v->kind == OXP_VALUE_NODE_OUTPUT && v->producer != OXP_NONE && v->producer_output == 0)
		return constant_tensor(c->dag->nodes[v->producer].proto);
	return NULL;
}

static bool int_dtype(int32_t dt)
{
	switch (dt) {
	case OXP_DT_INT64:
	case OXP_DT_INT32:
	case OXP_DT_INT16:
	case OXP_DT_INT8:
	case OXP_DT_UINT8:
	case OXP_DT_UINT16:
	case OXP_DT_UINT32:
	case OXP_DT_UINT64:
	case OXP_DT_BOOL:
		return true;
	default:
		return false;
	}
}

bool oxp__sh_tensor_vals(const oxp_tensor *t, sh_vals *out)
{
	if (t == NULL || !int_dtype(t->data_type) || t->ndims > 1 ||
	    t->storage == OXP_STORE_EXTERNAL)
		return false;
	uint64_t count = t->ndims == 0 ? 1 : (uint64_t)t->dims[0];
	if (t->ndims == 1 && (t->dims[0] < 0 || t->dims[0] > SH_MAX_DATA))
		return false;
	int64_t buf[SH_MAX_DATA];
	if (count > 0 &&
	    oxp_tensor_read_i64(t, NULL, 0, 0, (size_t)count, buf, NULL) != OXP_OK)
		return false;
	out->rank = (int32_t)t->ndims;
	out->n = (uint32_t)count;
	for (uint64_t k = 0; k < count; k++)
		out->v[k] = sh_dim_val(buf[k]);
	return true;
}

/* ---------------------------------------------------------------------------------------
 * Function calls: a call's outputs take the types inferred inside the function body.  The
 * body was inferred with unknown inputs and with attribute references unknown, so what it
 * found holds for every call.
 */
static oxp_code infer_call(sh_ctx *c)
{
	const oxp_dag *d = c->dag;
	uint32_t si = c->function_scope[c->dn->function];
	if (si == OXP_NONE || !c->scope_done[si])
		return OXP_OK;
	const oxp_scope *s = &d->scopes[si];
	for (size_t o = 0; o < c->node->noutputs && o < s->noutputs; o++) {
		sh_type t;
		oxp__sh_value_type(d, s->outputs[o], &t);
		oxp_code rc = oxp__sh_out(c, o, &t);
		if (rc != OXP_OK)
			return rc;
	}
	return OXP_OK;
}

/* ---------------------------------------------------------------------------------------
 * The walk
 */

/* The node of scope `scope` that is or holds node ni, else OXP_NONE. */
static uint32_t ancestor_in(const oxp_dag *d, uint32_t ni, uint32_t scope)
{
	while (ni != OXP_NONE && d->nodes[ni].scope != scope)
		ni = d->scopes[d->nodes[ni].scope].owner;
	return ni;
}

static void set_node(sh_ctx *c, uint32_t ni)
{
	c->ni = ni;
	c->dn = &c->dag->nodes[ni];
	c->node = c->dn->proto;
	c->opset = is_default_domain(c->node->domain) ? c->scope_opset[c->dn->scope] : 0;
}

/* Gradient (ai.onnx.preview.training): output i is the gradient with respect to the value
 * named by xs[i], and has its type. */
static oxp_code infer_gradient(sh_ctx *c)
{
	int st;
	const oxp_attr *xs = oxp__sh_attr(c, "xs", &st);
	if (st != SH_OK || xs->type != OXP_ATTR_STRINGS)
		return OXP_OK;
	for (size_t o = 0; o < c->node->noutputs && o < xs->nstrings; o++) {
		sh_type t;
		oxp__sh_value_type(c->dag, oxp_dag_find_value(c->dag, c->dn->scope, xs->strings[o]),
		                   &t);
		SH_TRY(oxp__sh_out(c, o, &t));
	}
	return OXP_OK;
}

static const sh_op *node_op(const sh_ctx *c)
{
	if (c->dn->function != OXP_NONE)
		return NULL;
	if (oxp_str_eq(c->node->domain, "com.microsoft"))
		return oxp__sh_find_ms_op(c->node->op_type);
	if (!is_default_domain(c->node->domain))
		return NULL;
	const sh_op *op = oxp__sh_find_op(c->node->op_type);
	return op != NULL ? op : oxp__sh_find_ort_onnx_op(c->node->op_type);
}

static oxp_code infer_node(sh_ctx *c, uint32_t ni)
{
	set_node(c, ni);
	if (c->dn->function != OXP_NONE)
		return infer_call(c);
	if (oxp_str_eq(c->node->domain, "ai.onnx.preview.training") &&
	    oxp_str_eq(c->node->op_type, "Gradient"))
		return infer_gradient(c);
	const sh_op *op = node_op(c);
	return op != NULL ? op->infer(c) : OXP_OK;
}

static void enqueue(sh_ctx *c, uint32_t ni)
{
	uint32_t si = c->dag->nodes[ni].scope;
	uint32_t first = c->dag->scopes[si].first_node;
	c->queue[first + c->qtail[si]++] = ni;
}

/* Node ni is inferred: its consumers in the same scope lose one pending producer. */
static void release(sh_ctx *c, uint32_t ni)
{
	const oxp_dag *d = c->dag;
	const oxp_dnode *dn = &d->nodes[ni];
	for (size_t o = 0; o < dn->proto->noutputs; o++) {
		uint32_t vi = dn->outputs[o];
		if (vi == OXP_NONE)
			continue;
		const oxp_value *v = &d->values[vi];
		for (uint32_t k = 0; k < v->nconsumers; k++) {
			uint32_t q = ancestor_in(d, d->edges[v->consumers[k]].dst, dn->scope);
			if (q != OXP_NONE && c->indeg[q] > 0 && --c->indeg[q] == 0)
				enqueue(c, q);
		}
	}
}

typedef struct frame {
	uint32_t scope;
	uint32_t cur;      /* node whose subgraphs are being inferred, or OXP_NONE */
	uint32_t sub_next; /* next of its subgraph scopes to open */
} frame;

static void open_scope(sh_ctx *c, frame *f, uint32_t si)
{
	const oxp_scope *s = &c->dag->scopes[si];
	f->scope = si;
	f->cur = OXP_NONE;
	f->sub_next = 0;
	c->qhead[si] = c->qtail[si] = 0;
	for (uint32_t k = 0; k < s->nnodes; k++)
		if (c->indeg[s->first_node + k] == 0)
			enqueue(c, s->first_node + k);
}

/* Infer top-level scope `top` and every subgraph below it. */
static oxp_code run_scope(sh_ctx *c, uint32_t top, frame *stack, uint32_t cap)
{
	const oxp_dag *d = c->dag;
	uint32_t sp = 0;
	open_scope(c, &stack[sp++], top);
	while (sp > 0) {
		frame *f = &stack[sp - 1];
		oxp_code rc = OXP_OK;
		if (f->cur != OXP_NONE) {
			const oxp_dnode *dn = &d->nodes[f->cur];
			if (f->sub_next < dn->nsubscopes && sp < cap) {
				uint32_t si = dn->first_subscope + f->sub_next++;
				open_scope(c, &stack[sp++], si);
				continue;
			}
			rc = infer_node(c, f->cur);
			release(c, f->cur);
			f->cur = OXP_NONE;
		} else if (c->qhead[f->scope] < c->qtail[f->scope]) {
			uint32_t first = d->scopes[f->scope].first_node;
			uint32_t ni = c->queue[first + c->qhead[f->scope]++];
			if (d->nodes[ni].nsubscopes > 0) {
				/* subgraphs first; the rule may type their inputs before */
				set_node(c, ni);
				const sh_op *op = node_op(c);
				if (op != NULL && op->pre != NULL)
					rc = op->pre(c);
				f->cur = ni;
				f->sub_next = 0;
			} else {
				rc = infer_node(c, ni);
				release(c, ni);
			}
		} else {
			c->scope_done[f->scope] = 1;
			sp--;
		}
		if (rc != OXP_OK)
			return rc;
	}
	return OXP_OK;
}

/* The version of the default domain in an opset_import list, 0 when absent. */
static int64_t default_opset(const oxp_opset *ops, size_t n)
{
	int64_t v = 0;
	for (size_t i = 0; i < n; i++)
		if (is_default_domain(ops[i].domain) && ops[i].version > v)
			v = ops[i].version;
	return v;
}

static oxp_code setup(sh_ctx *c)
{
	oxp_dag *d = c->dag;
	oxp_arena *a = d->arena;
	uint32_t nv = d->v.nvalues, nn = d->v.nnodes, ns = d->v.nscopes;
	const oxp_model_proto *p = oxp_model_proto_get(d->model);
	c->data = oxp__arena_array(a, nv ? nv : 1, sizeof(sh_data *));
	c->seq = oxp__arena_array(a, nv ? nv : 1, sizeof(sh_seq *));
	c->indeg = oxp__arena_array(a, nn ? nn : 1, sizeof(uint32_t));
	c->queue = oxp__arena_array(a, nn ? nn : 1, sizeof(uint32_t));
	c->qhead = oxp__arena_array(a, ns ? ns : 1, sizeof(uint32_t));
	c->qtail = oxp__arena_array(a, ns ? ns : 1, sizeof(uint32_t));
	c->scope_opset = oxp__arena_array(a, ns ? ns : 1, sizeof(int64_t));
	c->scope_done = oxp__arena_array(a, ns ? ns : 1, 1);
	c->function_scope = oxp__arena_array(a, p->nfunctions ? p->nfunctions : 1,
	                                     sizeof(uint32_t));
	if (c->data == NULL || c->seq == NULL || c->indeg == NULL || c->queue == NULL ||
	    c->qhead == NULL || c->qtail == NULL || c->scope_opset == NULL ||
	    c->scope_done == NULL || c->function_scope == NULL)
		return nomem(c);

	/* a model importing no opset at all predates opset_import (IR < 3): opset 1 */
	int64_t model_opset =
	    p->nopset_import == 0 ? 1 : default_opset(p->opset_import, p->nopset_import);
	for (size_t f = 0; f < p->nfunctions; f++)
		c->function_scope[f] = OXP_NONE;
	for (uint32_t si = 0; si < ns; si++) {
		const oxp_scope *s = &d->scopes[si];
		if (s->parent != OXP_NONE) {
			/* breadth-first layout: parents come first */
			c->scope_opset[si] = c->scope_opset[s->parent];
			continue;
		}
		c->scope_opset[si] = model_opset;
		if (s->kind == OXP_SCOPE_FUNCTION && s->function != NULL) {
			int64_t fo = default_opset(s->function->opset_import, s->function->nopset_import);
			if (fo > 0)
				c->scope_opset[si] = fo;
			size_t f = (size_t)(s->function - p->functions);
			if (f < p->nfunctions)
				c->function_scope[f] = si;
		}
	}

	/* pending producers per node, counted on the node of the producer's scope */
	for (uint32_t e = 0; e < d->v.nedges; e++) {
		const oxp_edge *ed = &d->edges[e];
		if (ed->src == OXP_NONE)
			continue;
		uint32_t q = ancestor_in(d, ed->dst, d->nodes[ed->src].scope);
		if (q != OXP_NONE)
			c->indeg[q]++;
	}

	/* values of small integer initializers */
	for (uint32_t vi = 0; vi < nv; vi++) {
		const oxp_value *v = &d->values[vi];
		sh_vals vals;
		if (v->kind == OXP_VALUE_INITIALIZER && oxp__sh_tensor_vals(v->initializer, &vals)) {
			oxp_code rc = store_vals(c, vi, &vals);
			if (rc != OXP_OK)
				return rc;
		}
	}
	return OXP_OK;
}

oxp_code oxp__dag_infer_shapes(oxp_dag *dag, oxp_error *err)
{
	sh_ctx cc;
	memset(&cc, 0, sizeof(cc));
	sh_ctx *c = &cc;
	c->dag = dag;
	c->err = err;
	if (dag->v.nscopes == 0)
		return OXP_OK;
	oxp_code rc = setup(c);
	if (rc != OXP_OK)
		return rc;
	dag->sh_data = c->data; /* kept: oxp_dag_value_data() reads them */
	uint32_t cap = dag->v.nscopes;
	frame *stack = oxp__arena_array(dag->arena, cap, sizeof(frame));
	if (stack == NULL)
		return nomem(c);
	/* function bodies first (calls use their results), then the main and training graphs */
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t si = 0; si < dag->v.nscopes; si++) {
			const oxp_scope *s = &dag->scopes[si];
			if (s->parent != OXP_NONE || (s->kind == OXP_SCOPE_FUNCTION) != (pass == 0))
				continue;
			rc = run_scope(c, si, stack, cap);
			if (rc != OXP_OK)
				return rc;
		}
	return OXP_OK;
}

bool oxp_dag_value_data(const oxp_dag *dag, uint32_t value, oxp_known_data *out)
{
	if (dag == NULL || dag->sh_data == NULL || value >= dag->v.nvalues ||
	    dag->sh_data[value] == NULL)
		return false;
	const sh_data *d = dag->sh_data[value];
	if (d->rank > 1)
		return false; /* matrices are kept for inference only */
	out->rank = d->rank;
	out->count = d->n;
	out->elems = d->v;
	return true;
}
